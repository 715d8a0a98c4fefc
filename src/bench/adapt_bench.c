/* partita-adapt-bench: libpartita's layouts side by side in one launch (the
 * adaptive policy's benchmark, docs/library.md "Adaptive plans").
 *
 * MPICH's shared-memory eager path runs in a fast or a slow mode per launch,
 * so layouts measured in different launches are not comparable: here every
 * implementation runs in the same process, round by round in turn (each
 * round in an order both ranks derive, balanced so that every implementation
 * follows every other one equally often: harness/order.h), so each launch's best
 * layout is known and the adaptive policy is compared with it. Implementations: `native` (the MPI library's own
 * MPI_Psend_init), `single` (one MPI_Isend of the whole buffer at the last
 * mark), and libpartita through its Partita_* calls with a policy per request
 * (info keys): `bulk`, `none`, `model`, `timer`, `timer:US` (delta US: an
 * explicit delta always lets the timer split), `adaptive`, `fixed:K`, each
 * optionally as POLICY@TRANSPORT (mpi, fabric, auto: the transport too).
 * Comparing policies here, not in separate launches, is how the library suite
 * checks the timer against model and none (docs/suites.md).
 *
 * Per round: both ranks start (or post), meet in a barrier; the sender waits
 * 3 us (so the receiver polls), marks the partitions in order and stamps the
 * start of the first and the last MPI_Pready (or of the MPI_Isend). With
 * -L US a single laggard is played by the one marking thread: the second
 * half of the partitions is marked first, then the sender sleeps US
 * microseconds (the sleep compute mode: the core is free for progress
 * threads) and marks the first half, as partita-p2p's two threads with
 * `--noise delay:US` on thread 0 and block mapping do (`single` sleeps, then
 * sends); with -S K the late partitions are 0, K, 2K, ... instead, as with
 * K threads and round-robin mapping, and the others are marked first. The
 * receiver sweeps MPI_Parrived (MPI_Test) until everything is in and stamps
 * that. Metrics, as partita-p2p's (docs/metrics.md; one node: one
 * CLOCK_MONOTONIC): t_part, last arrival minus first mark (its overhead
 * metric's numerator), t_last, last arrival minus last mark, and under a
 * laggard t_late, last arrival minus the first mark after its pause (what
 * the late half's marking, hand-overs and transfer take), and t_pause, the
 * pause as the marking thread lived it (end of the last mark before the
 * sleep to the first after it: longer than asked when the thread waited
 * for a core, which moves time out of t_late into t_part), and t_resume,
 * t_late plus the round's pause beyond the implementation's typical one (its
 * median, at most the case's: typical_pauses_ns) by more than 10 us. Output: one
 * JSON line per (size, partitions, implementation) with the medians and
 * quartiles over the measured rounds.
 *
 * Usage: USAGE below (--help prints it). With PARTITA_PROGRESS_THREAD=1 it asks MPI
 * for MPI_THREAD_MULTIPLE (libpartita's progress thread needs it). */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <unistd.h>

#include "adapt_bench_output.h"
#include "bench.h"
#include "clock.h"
#include "compute.h"
#include "options.h"
#include "order.h"
#include "partita/partita.h"

#define MAX_IMPLS 16
#define MAX_PARTS_LIST 16
#define MAX_BYTES ((size_t)1 << 28) /* -m: 256M at most */

typedef struct impl {
    char name[32];
    int kind; /* NATIVE, SINGLE, PARTITA */
    char policy[16];
    int parts;      /* fixed:K */
    char delta[16]; /* timer:US */
    char transport[8]; /* POLICY@TRANSPORT, or "" */
} impl;
enum { NATIVE, SINGLE, PARTITA };

static const char USAGE[] =
    "usage: mpiexec -n 2 partita-adapt-bench [options]\n"
    "libpartita's policies and layouts, the MPI library's own partitioned calls and one\n"
    "MPI_Isend side by side in one launch, round by round in a carry-over balanced order.\n"
    "  -m MIN:MAX      message sizes, powers of two up to 256M, K/M/G suffixes (default 4K:4M)\n"
    "  -f FACTOR       size step, a power of two in [2, 1024] (default 2)\n"
    "  -p P,P,...      partition counts, at most 16 in [1, 65536] (default 1,8,64,512)\n"
    "  -i ROUNDS       measured rounds per case (default 100)\n"
    "  -x WARMUP       warm-up rounds per case (default 20)\n"
    "  -I IMPL,...     implementations (default native,single,bulk,none,model,fixed:2,fixed:4,\n"
    "                  fixed:16,adaptive): native, single, bulk, none, model, timer, timer:US\n"
    "                  (delta US), adaptive, fixed:K (K transport messages); a libpartita one\n"
    "                  as POLICY@TRANSPORT (mpi, fabric, auto) picks its transport\n"
    "  -L US           a single laggard: the first half of the partitions is marked US\n"
    "                  microseconds after the second (a sleep); needs P >= 2\n"
    "  -S K            with -L, the laggard's partitions are every K-th (0, K, 2K, ...), K in\n"
    "                  [2, 65536], as partita-p2p's K threads marking round-robin with thread 0\n"
    "                  late; the others are marked first, in order\n"
    "  -l LAUNCH       a launch number, written in the output; it also relabels the\n"
    "                  implementations in the rounds' order (which follows which)\n"
    "  --format json --output FILE   also write a partita.result/1 document to FILE\n"
    "  --format lines  only the JSON lines on stdout (the default)\n"
    "  -h, --help      this text\n"
    "Output: one JSON line per (size, partitions, implementation) with the median and quartiles\n"
    "of t_part_us (last arrival - first mark) and t_last_us (last arrival - last mark), and\n"
    "with -L t_late_us (last arrival - the first mark after the laggard's pause),\n"
    "t_pause_us (the pause as the marking thread lived it) and t_resume_us (t_late plus\n"
    "the round's pause beyond its typical one by more than 10 us: a stretched pause\n"
    "charged); on\n"
    "stderr, '#' lines with each case's plan, and the sizes skipped because they are not a\n"
    "multiple of a partition count.\n";

/* Who is late and how much: -L (us) and -S (every). */
typedef struct laggard {
    double us;  /* 0: no laggard */
    int every;  /* 0: the first half of the partitions is late; K: partitions 0, K, 2K, ... */
} laggard;

typedef struct opts {
    size_t min, max;
    int parts[MAX_PARTS_LIST], nparts;
    int rounds, warmup, launch, factor;
    laggard lag;
    impl impls[MAX_IMPLS];
    int nimpls;
    const char *output; /* --output, with --format json */
    char impl_list[512];
} opts;

/* For the harness's error calls (pt_fail: rank 0 prints, every rank exits 2)
 * and settle_arguments, which needs the command line too: every rank parses
 * its own, and they settle together whether they may go on. */
static pt_ctx ctx = { .program = "partita-adapt-bench" };
static int parse_argc;
static char **parse_argv;

/* error: what is wrong with this rank's arguments, or NULL (parsed, or
 * about to print --help). Collective; returns only when every rank's parse
 * succeeded on the same arguments. */
static void settle_arguments(const char *error)
{
    pt_agree_on_arguments(&ctx, error, parse_argc, parse_argv);
    if (error)
        exit(2); /* not reached: pt_agree_on_arguments ends every rank */
}

/* A whole number in [min, max], or one line naming the option and the value, and exit:
 * atoi read "1e3" as 1 and "3x" as 3 without a word. */
static int int_option(const char *opt, const char *arg, double min, double max)
{
    int v = 0;
    char why[256], msg[320];
    if (pt_parse_int(arg, min, max, &v, why, sizeof why)) {
        snprintf(msg, sizeof msg, "%s: %s", opt, why);
        settle_arguments(msg);
    }
    return v;
}

/* a number of microseconds >= 0 */
static int is_number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return end != s && !*end && v >= 0 && v <= 1e6;
}

static int parse_impl(const char *arg, impl *m)
{
    memset(m, 0, sizeof *m);
    char why[128];
    if (strlen(arg) >= sizeof m->name)
        return -1;
    snprintf(m->name, sizeof m->name, "%s", arg);
    /* POLICY@TRANSPORT: libpartita's transport for this request (info partita_transport) */
    char s[sizeof m->name];
    snprintf(s, sizeof s, "%s", arg);
    char *at = strchr(s, '@');
    if (at) {
        *at = 0;
        if (strcmp(at + 1, "mpi") && strcmp(at + 1, "fabric") && strcmp(at + 1, "auto"))
            return -1;
        snprintf(m->transport, sizeof m->transport, "%s", at + 1);
    }
    if (!strcmp(s, "native"))
        m->kind = NATIVE;
    else if (!strcmp(s, "single"))
        m->kind = SINGLE;
    else if (!strcmp(s, "bulk") || !strcmp(s, "none") || !strcmp(s, "model") || !strcmp(s, "timer") ||
             !strcmp(s, "adaptive"))
        m->kind = PARTITA, strcpy(m->policy, s); /* one of the names above: fits */
    else if (!strncmp(s, "timer:", 6) && is_number(s + 6) && strlen(s + 6) < sizeof m->delta)
        m->kind = PARTITA, strcpy(m->policy, "timer"), strcpy(m->delta, s + 6);
    else if (!strncmp(s, "fixed:", 6) && pt_parse_int(s + 6, 1, 1 << 30, &m->parts, why, sizeof why) == 0)
        m->kind = PARTITA, strcpy(m->policy, "fixed");
    else
        return -1;
    return at && m->kind != PARTITA ? -1 : 0;
}

static void parse(int argc, char **argv, int rank, opts *o)
{
    *o = (opts){ .min = 4096, .max = 4 << 20, .rounds = 100, .warmup = 20, .factor = 2 };
    const char *parts = "1,8,64,512", *impls = "native,single,bulk,none,model,fixed:2,fixed:4,fixed:16,adaptive";
    int c;
    const char *format = NULL;
    static const struct option longs[] = { { "format", required_argument, 0, 'F' },
                                           { "output", required_argument, 0, 'O' },
                                           { "help", no_argument, 0, 'h' },
                                           { 0, 0, 0, 0 } };
    opterr = 0;
    while ((c = getopt_long(argc, argv, "m:f:p:i:x:I:L:S:l:h", longs, NULL)) != -1) {
        switch (c) {
        case 'm': { /* the harness's parser, as every other program's -m */
            pt_size_range r;
            char why[256], msg[320];
            if (pt_parse_size_range(optarg, &r, why, sizeof why)) {
                snprintf(msg, sizeof msg, "-m: %s", why);
                settle_arguments(msg);
            }
            if (r.max > MAX_BYTES)
                settle_arguments("-m: MAX is larger than 256M");
            o->min = r.min, o->max = r.max;
            break;
        }
        case 'f': o->factor = int_option("-f", optarg, 2, 1024); break;
        case 'p': parts = optarg; break;
        case 'i': o->rounds = int_option("-i", optarg, 1, 100000); break;
        case 'x': o->warmup = int_option("-x", optarg, 0, 100000); break;
        case 'I': impls = optarg; break;
        case 'L':
            if (!is_number(optarg) || !(o->lag.us = strtod(optarg, NULL)))
                settle_arguments("-L needs microseconds in (0, 1e6]");
            break;
        case 'S': o->lag.every = int_option("-S", optarg, 2, 65536); break;
        case 'l': o->launch = int_option("-l", optarg, 0, 2147483647); break;
        case 'F': format = optarg; break;
        case 'O': o->output = optarg; break;
        case 'h':
            settle_arguments(NULL); /* returns when every rank was given the same arguments */
            if (rank == 0)
                fputs(USAGE, stdout);
            MPI_Finalize();
            exit(0);
        default: {
            char msg[256]; /* optind has moved past the option getopt could not take */
            snprintf(msg, sizeof msg, "'%.100s': unknown option, or an option without its value (--help lists the options)",
                     argv[optind - 1]);
            settle_arguments(msg);
        }
        }
    }
    if (optind < argc) {
        char msg[160];
        snprintf(msg, sizeof msg, "unexpected argument '%.100s' (--help lists the options)", argv[optind]);
        settle_arguments(msg);
    }
    if (o->output && !*o->output)
        settle_arguments("--output: an empty value is not allowed");
    if (format && strcmp(format, "json") && strcmp(format, "lines")) {
        char msg[160];
        snprintf(msg, sizeof msg, "--format '%.60s': must be json or lines (the default: JSON lines on stdout only)",
                 format);
        settle_arguments(msg);
    }
    if (o->output && !(format && !strcmp(format, "json")))
        settle_arguments("--output needs --format json");
    if (format && !strcmp(format, "json") && !o->output)
        settle_arguments("--format json needs --output FILE");
    if (o->rounds < 1 || o->rounds > 100000 || o->warmup < 0 || o->warmup > 100000)
        settle_arguments("-i must be in [1, 100000] and -x in [0, 100000]");
    if (o->factor < 2 || o->factor > 1024 || (o->factor & (o->factor - 1)))
        settle_arguments("-f must be a power of two in [2, 1024]");
    pt_int_list counts;
    char why[256], buf[512];
    if (pt_parse_int_list(parts, 1, 65536, &counts, why, sizeof why)) {
        snprintf(buf, sizeof buf, "-p: %s", why);
        settle_arguments(buf);
    }
    if (counts.n > MAX_PARTS_LIST)
        settle_arguments("-p: at most 16 partition counts in [1, 65536]");
    if (pt_int_list_distinct(&counts, why, sizeof why)) { /* the same cases twice, duplicate lines */
        snprintf(buf, sizeof buf, "-p: %s", why);
        settle_arguments(buf);
    }
    for (int i = 0; i < counts.n; i++)
        o->parts[o->nparts++] = counts.v[i];
    snprintf(o->impl_list, sizeof o->impl_list, "%s", impls);
    /* strtok would skip an empty entry without a word, as -p refuses one */
    size_t len = strlen(impls);
    if (len && (impls[0] == ',' || impls[len - 1] == ',' || strstr(impls, ",,"))) {
        snprintf(buf, sizeof buf, "-I: '%.*s' has an empty entry", 400, impls);
        settle_arguments(buf);
    }
    snprintf(buf, sizeof buf, "%s", impls);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (o->nimpls == MAX_IMPLS)
            settle_arguments("-I: at most 16 implementations");
        if (parse_impl(t, &o->impls[o->nimpls])) {
            char bad[400];
            snprintf(bad, sizeof bad,
                     "-I: '%.60s' is not one of native, single, bulk, none, model, timer, timer:US (US >= 0), "
                     "adaptive, fixed:K (K in [1, 2^30]); libpartita's as POLICY@mpi|fabric|auto too", t);
            settle_arguments(bad);
        }
        for (int k = 0; k < o->nimpls; k++)
            if (!strcmp(o->impls[k].name, o->impls[o->nimpls].name)) {
                char twice[96];
                snprintf(twice, sizeof twice, "-I: '%s' is listed twice", o->impls[k].name);
                settle_arguments(twice);
            }
        o->nimpls++;
    }
    if (!o->nparts || !o->nimpls)
        settle_arguments("-p and -I need at least one entry");
    if (o->lag.every && !(o->lag.us > 0))
        settle_arguments("-S needs -L (it says which partitions the laggard marks)");
    for (int i = 0; o->lag.us > 0 && i < o->nparts; i++)
        if (o->parts[i] < 2)
            settle_arguments("-L needs at least 2 partitions in every -p entry (half of them are late)");
    /* a case runs where a size is a multiple of the partition count; none: say so, not exit 0 */
    int cases = 0;
    for (size_t bytes = o->min; bytes <= o->max; bytes *= (size_t)o->factor)
        for (int i = 0; i < o->nparts; i++)
            cases += bytes % (size_t)o->parts[i] == 0;
    if (!cases)
        settle_arguments("no case can run: no size of -m is a multiple of a partition count of -p");
}

/* The sender's stamps of one round (ns): its first mark, the end of the
 * last mark before the laggard's pause, and the first mark after it (without
 * a laggard: the first mark, all three). */
typedef struct marks {
    int64_t first, paused, resume;
} marks;

/* How many of `parts` partitions the laggard marks. */
static int late_count(const laggard *lag, int parts)
{
    if (!(lag->us > 0))
        return 0;
    return lag->every ? (parts + lag->every - 1) / lag->every : parts / 2;
}

/* The partition the sender marks i-th in a round: the early ones in order,
 * then (from mark parts - late on, after the pause) the laggard's in order. */
static int marked_at(const laggard *lag, int i, int parts, int late)
{
    int early = parts - late;
    if (!late)
        return i;
    if (!lag->every)
        return i < early ? i + late : i - early;
    int k = lag->every;
    return i < early ? (i / (k - 1)) * k + i % (k - 1) + 1 : (i - early) * k;
}

/* One round of implementation m; returns the stamp of this rank (sender:
 * the last mark, the others in *mk; receiver: the last arrival). */
static int64_t round_once(const impl *m, MPI_Request *req, char *buf, size_t bytes, int parts, int rank,
                          const laggard *lag, unsigned char *seen, marks *mk)
{
    int64_t stamp = 0;
    MPI_Request single = MPI_REQUEST_NULL;
    if (m->kind == SINGLE) {
        if (rank == 1)
            MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &single);
    } else if (m->kind == NATIVE) {
        MPI_Start(req);
    } else {
        Partita_Start(req);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        pt_compute_us(PT_COMPUTE_SPIN, 3);
        if (m->kind == SINGLE) {
            mk->first = mk->paused = pt_now_ns();
            if (lag->us > 0)
                pt_compute_us(PT_COMPUTE_SLEEP, lag->us); /* the core is free for progress threads */
            stamp = mk->resume = lag->us > 0 ? pt_now_ns() : mk->first;
            MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &single);
            MPI_Wait(&single, MPI_STATUS_IGNORE);
        } else {
            /* in order; under a laggard the early partitions first, then the late ones */
            int late = late_count(lag, parts);
            for (int i = 0; i < parts; i++) {
                int p = marked_at(lag, i, parts, late);
                if (late && i == parts - late) {
                    mk->paused = pt_now_ns();
                    pt_compute_us(PT_COMPUTE_SLEEP, lag->us); /* the core is free for progress threads */
                    mk->resume = pt_now_ns();
                }
                if (i == 0)
                    mk->first = mk->paused = mk->resume = pt_now_ns();
                if (i == parts - 1)
                    stamp = i ? pt_now_ns() : mk->first;
                m->kind == NATIVE ? MPI_Pready(p, *req) : Partita_Pready(p, *req);
            }
            m->kind == NATIVE ? MPI_Wait(req, MPI_STATUS_IGNORE) : Partita_Wait(req, MPI_STATUS_IGNORE);
        }
    } else {
        if (m->kind == SINGLE) {
            int flag = 0;
            while (!flag)
                MPI_Test(&single, &flag, MPI_STATUS_IGNORE);
            stamp = pt_now_ns();
        } else {
            memset(seen, 0, (size_t)parts);
            for (int left = parts; left;) {
                for (int p = 0; p < parts; p++) {
                    int flag = 0;
                    if (seen[p])
                        continue;
                    m->kind == NATIVE ? MPI_Parrived(*req, p, &flag) : Partita_Parrived(*req, p, &flag);
                    if (flag)
                        seen[p] = 1, left--;
                }
            }
            stamp = pt_now_ns();
            m->kind == NATIVE ? MPI_Wait(req, MPI_STATUS_IGNORE) : Partita_Wait(req, MPI_STATUS_IGNORE);
        }
    }
    return stamp;
}

/* A pause this much longer than typical is charged to t_resume (beyond it):
 * the pauses' own jitter, 1-3 us between quartiles on the 2-core VM, stays
 * under it, so a round that kept its core costs what its t_late says. */
#define PAUSE_JITTER_NS 10000.0

/* The typical pause of each implementation of a case under a laggard (ns,
 * into ref[n]): the smaller of its own median pause (marks.resume -
 * marks.paused over the measured rounds) and the median of the case's
 * implementations' median pauses; scratch holds `rounds` doubles. t_resume
 * charges a round its pause beyond this (by more than PAUSE_JITTER_NS): an
 * implementation whose threads kept the marking thread off its core in some
 * rounds lives a longer pause there, in which its early half's messages move
 * on, and t_late credits it for that (docs/metrics.md). */
static void typical_pauses_ns(const marks *mk, int n, int total, int warmup, int rounds, double *scratch, double *ref)
{
    double medians[MAX_IMPLS];
    for (int k = 0; k < n; k++) {
        for (int r = 0; r < rounds; r++) {
            const marks *x = &mk[(size_t)k * total + warmup + r];
            scratch[r] = (double)(x->resume - x->paused);
        }
        pt_sort_doubles(scratch, (size_t)rounds);
        ref[k] = medians[k] = pt_quantile_sorted(scratch, (size_t)rounds, 0.5);
    }
    pt_sort_doubles(medians, (size_t)n);
    double across = pt_quantile_sorted(medians, (size_t)n, 0.5);
    for (int k = 0; k < n; k++)
        if (ref[k] > across)
            ref[k] = across;
}

static void run_case(const opts *o, size_t bytes, int parts, int rank, char *buf, ab_output *out)
{
    int n = o->nimpls, total = o->warmup + o->rounds;
    MPI_Request req[MAX_IMPLS];
    int64_t *stamps = malloc((size_t)n * (size_t)total * sizeof *stamps);
    int64_t *peer = malloc((size_t)n * (size_t)total * sizeof *peer); /* rank 0: the receiver's arrivals */
    marks *mk = malloc((size_t)n * (size_t)total * sizeof *mk);
    unsigned char *seen = malloc((size_t)parts);
    double *t_part = malloc((size_t)o->rounds * sizeof *t_part), *t_last = malloc((size_t)o->rounds * sizeof *t_last);
    size_t per_round = (size_t)o->rounds * sizeof(double);
    double *t_late = malloc(per_round), *t_pause = malloc(per_round), *t_resume = malloc(per_round);
    /* every rank learns of a rank that is short of memory: none waits for it */
    pt_check_all(&ctx, !stamps || !peer || !mk || !seen || !t_part || !t_last || !t_late || !t_pause || !t_resume,
                 "out of memory for the round stamps");
    MPI_Count count = (MPI_Count)(bytes / (size_t)parts);
    for (int k = 0; k < n; k++) {
        const impl *m = &o->impls[k];
        req[k] = MPI_REQUEST_NULL;
        if (m->kind == NATIVE) {
            if (rank == 0)
                MPI_Psend_init(buf, parts, count, MPI_BYTE, 1, 100 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
            else
                MPI_Precv_init(buf, parts, count, MPI_BYTE, 0, 100 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
        } else if (m->kind == PARTITA) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "partita_policy", m->policy);
            if (m->delta[0])
                MPI_Info_set(info, "partita_delta_us", m->delta);
            if (m->transport[0])
                MPI_Info_set(info, "partita_transport", m->transport);
            if (m->parts) {
                char v[16];
                snprintf(v, sizeof v, "%d", m->parts);
                MPI_Info_set(info, "partita_transport_parts", v);
            }
            if (rank == 0)
                Partita_Psend_init(buf, parts, count, MPI_BYTE, 1, 100 + k, MPI_COMM_WORLD, info, &req[k]);
            else
                Partita_Precv_init(buf, parts, count, MPI_BYTE, 0, 100 + k, MPI_COMM_WORLD, info, &req[k]);
            MPI_Info_free(&info);
        }
    }
    /* Each round runs the implementations in its own order, which both ranks
     * derive: rows of a carry-over balanced design (harness/order.h), the
     * measured rounds starting at its first row, so that over each period of
     * rows every implementation follows every other one equally often; the
     * launch number (-l) relabels the implementations. */
    int order[MAX_IMPLS], label[MAX_IMPLS];
    pt_order_labels((uint64_t)o->launch, n, label);
    for (int r = 0; r < total; r++) {
        pt_order_row((int64_t)r - o->warmup, n, order);
        for (int i = 0; i < n; i++) {
            int k = label[order[i]];
            stamps[(size_t)k * total + r] =
                round_once(&o->impls[k], &req[k], buf, bytes, parts, rank, &o->lag, seen,
                           &mk[(size_t)k * total + r]);
        }
    }
    /* the receiver's arrival stamps go to rank 0, which writes the output */
    if (rank == 1)
        MPI_Send(stamps, n * total, MPI_INT64_T, 0, 9, MPI_COMM_WORLD);
    else
        MPI_Recv(peer, n * total, MPI_INT64_T, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int lag = o->lag.us > 0;
    double pause_ref_ns[MAX_IMPLS] = { 0 };
    if (rank == 0 && lag)
        typical_pauses_ns(mk, n, total, o->warmup, o->rounds, t_pause, pause_ref_ns);
    for (int k = 0; k < n; k++) {
        const impl *m = &o->impls[k];
        char why[1024] = ""; /* the timer's reasons run to about 600 bytes */
        if (rank == 0) {
            if (m->kind == PARTITA)
                Partita_Request_why(req[k], why, sizeof why);
            for (int r = 0; r < o->rounds; r++) {
                size_t at = (size_t)k * total + o->warmup + r;
                t_part[r] = (double)(peer[at] - mk[at].first) / 1e3;
                t_last[r] = (double)(peer[at] - stamps[at]) / 1e3;
                if (!lag)
                    continue;
                t_late[r] = (double)(peer[at] - mk[at].resume) / 1e3;
                t_pause[r] = (double)(mk[at].resume - mk[at].paused) / 1e3;
                double excess = t_pause[r] - (pause_ref_ns[k] + PAUSE_JITTER_NS) / 1e3;
                t_resume[r] = t_late[r] + (excess > 0 ? excess : 0);
            }
            ab_output_case(out, &(ab_case){ bytes, parts, m->name, why, t_part, t_last, lag ? t_late : NULL,
                                            lag ? t_pause : NULL, lag ? t_resume : NULL, o->rounds });
        }
        if (m->kind == NATIVE)
            MPI_Request_free(&req[k]);
        else if (m->kind == PARTITA)
            Partita_Request_free(&req[k]);
    }
    free(stamps);
    free(peer);
    free(mk);
    free(t_pause);
    free(t_resume);
    free(seen);
    free(t_part);
    free(t_last);
    free(t_late);
}

int main(int argc, char **argv)
{
    const char *thread = getenv("PARTITA_PROGRESS_THREAD");
    int provided;
    MPI_Init_thread(&argc, &argv, thread && !strcmp(thread, "1") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ctx.rank = rank, ctx.size = size;
    opts o;
    parse_argc = argc, parse_argv = argv;
    parse(argc, argv, rank, &o); /* --help first, on any number of ranks */
    settle_arguments(NULL);
    if (size != 2)
        pt_fail(&ctx, "needs exactly 2 ranks");
    int init_failed = Partita_Init_hook() != MPI_SUCCESS;
    pt_check_all(&ctx, init_failed, init_failed ? Partita_Init_error() : "");
    /* the output file is opened before anything runs: an unwritable path fails at once */
    ab_output out;
    int opened = rank == 0 ? ab_output_open(&out, o.output, argc, argv, o.launch, o.lag.us, o.lag.every,
                                             o.rounds, o.warmup, o.impl_list)
                           : 0;
    MPI_Bcast(&opened, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (opened != 0)
        pt_fail(&ctx, "cannot write --output '%s'", o.output);
    char *buf = malloc(o.max);
    char why[96];
    snprintf(why, sizeof why, "out of memory for the %zu-byte buffer (-m)", o.max);
    pt_check_all(&ctx, !buf, why);
    memset(buf, rank + 1, o.max);
    for (size_t bytes = o.min; bytes <= o.max; bytes *= (size_t)o.factor)
        for (int i = 0; i < o.nparts; i++)
            if (bytes % (size_t)o.parts[i] == 0)
                run_case(&o, bytes, o.parts[i], rank, buf, &out);
            else if (rank == 0) /* said, as partita-p2p does, not dropped silently */
                fprintf(stderr, "# skipped: %zu bytes in %d partitions: not a multiple of the partition count\n",
                        bytes, o.parts[i]);
    free(buf);
    /* a full disk shows when the file is closed: every rank ends with status 2, not MPI_Abort */
    int write_failed = rank == 0 && ab_output_close(&out) != 0;
    char write_msg[512] = "";
    if (write_failed)
        snprintf(write_msg, sizeof write_msg, "writing the output file '%s' failed: %s", o.output, strerror(errno));
    Partita_Finalize_hook();
    pt_check_all(&ctx, write_failed, write_msg);
    MPI_Finalize();
    return 0;
}
