/* Randomised soak: many partitioned request pairs in flight at once, each
 * with its own policy, transport, sizes and datatypes, marked in random orders
 * by one to three threads (with pauses), completed in random ways.
 *   soak [-s SEED] [-n CASES] [-c CASE [-k PAIRS]] [-T SECONDS] [-m MAX_BYTES] [-x mpi,fabric] [-N] [-C] [-F]
 *        [-v]
 * Both ranks draw the same cases from the seed, so a failure is replayed by
 * its seed and case number (-s SEED -c CASE, which every failure prints) with
 * the run's other options; -k narrows a replay to some of its pairs (a bit mask: -k 5 keeps
 * pairs 0 and 2). What is checked:
 *  - a receive partition that MPI_Parrived reports is complete at once, every
 *    int of it, and no partition is reported before its data is there;
 *  - after completion every int is right and the gaps of a strided receive
 *    type are untouched;
 *  - data written into a send partition after MPI_Start but before its
 *    MPI_Pready is what arrives;
 *  - no case hangs: each has a deadline (20 s; PARTITA_SOAK_DEADLINE_S sets
 *    another, e.g. under a sanitizer), past which the case, the
 *    round and what the rank was doing are named and the program exits with
 *    status 3 (with PARTITA_SOAK_BACKTRACE=1, after gdb printed every
 *    thread's stack).
 * Pairs go either way between the two ranks, or from a rank to itself, so
 * both ranks mark and complete at once. -T stops starting new cases after
 * SECONDS (rank 0 decides; the default runs all -n cases). -N adds ordinary
 * MPI traffic: in some cases a native message each way per round (up to
 * MAX_BYTES, posted before the marking, completed in the same calls as the
 * partitioned requests, its data checked too). -C puts each case's pairs on
 * MPI_COMM_WORLD, a dup of it, or a split that swaps the two ranks. -F asks
 * MPI_Init_thread for MPI_THREAD_FUNNELED (one marking thread; libpartita's
 * serial paths). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "partita/partita.h"
#include "ptest.h"

#define MAX_PAIRS 3
#define MAX_THREADS 3
static unsigned deadline_s = 20;
#define SENTINEL (-7777777)

/* splitmix64: one stream per case, the same on both ranks. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int below(uint64_t *s, int n) { return (int)(next_u64(s) % (uint64_t)n); }
static int chance(uint64_t *s, int percent) { return below(s, 100) < percent; }
/* Log-uniform in [1, hi]. */
static long log_uniform(uint64_t *s, long hi)
{
    int bits = 0;
    while ((1L << (bits + 1)) <= hi)
        bits++;
    long lo = 1L << below(s, bits + 1);
    long span = hi - lo + 1 < lo ? hi - lo + 1 : lo;
    return lo + (long)(next_u64(s) % (uint64_t)span);
}
static long gcd(long a, long b) { return b ? gcd(b, a % b) : a; }

static const char *const policies[] = { "none", "bulk", "static", "model", "timer", "fixed", "adaptive" };
#define NPOLICIES ((int)(sizeof policies / sizeof policies[0]))

/* One request pair of a case. Ints travel in order: the send side has
 * `sa` ints per element (a contiguous type), the receive side `rb` ints per
 * element, contiguous or every other int (strided). */
typedef struct pair {
    int from, to;       /* world ranks; equal for a self pair */
    int sparts, rparts; /* partition counts */
    long scount, rcount; /* elements per partition */
    int sa, rb, strided;
    long n;             /* ints in all */
    char policy[16], transport[16];
    int knob;           /* the policy's info value (-1: none) */
    int *sbuf, *rbuf;
    MPI_Datatype stype, rtype;
    MPI_Request sreq, rreq;
    char *seen;         /* receive partitions reported arrived this round */
    int left_out;       /* -k: not in this replay */
} pair;

typedef struct soak_case {
    int index, npairs, rounds, threads, complete_mode, laggard_us, startall;
    pair p[MAX_PAIRS];
    long native_ints;      /* -N: ints of the native message each way per round (0: none) */
    int *native_out, *native_in;
    MPI_Request native_req[2];
    int comm_kind;         /* -C: 0 MPI_COMM_WORLD, 1 a dup, 2 a split with the ranks swapped */
    MPI_Comm comm;
} soak_case;

static int rank, thread_multiple, natives_on, comms_on;
static uint64_t seed;
static char case_text[4096]; /* the current case, for the deadline and error handler */
static MPI_Errhandler on_error;
static volatile int cur_round;
static const char *volatile stage = "set-up";

static int value(uint64_t s, int casei, int pairi, int round, long i)
{
    uint64_t z = s ^ ((uint64_t)casei << 40) ^ ((uint64_t)pairi << 36) ^ ((uint64_t)round << 28) ^ (uint64_t)i;
    return (int)(next_u64(&z) & 0x3fffffff);
}

static void describe(const soak_case *c)
{
    int len = snprintf(case_text, sizeof case_text,
                       "soak: seed %llu case %d (replay: -s %llu -c %d and this run's other options): %d rounds, "
                       "%d marking threads, completion %d, laggard %d us, startall %d",
                       (unsigned long long)seed, c->index, (unsigned long long)seed, c->index, c->rounds,
                       c->threads, c->complete_mode, c->laggard_us, c->startall);
    if (c->native_ints)
        len += snprintf(case_text + len, sizeof case_text - (size_t)len, ", a native message of %ld ints each way",
                        c->native_ints);
    if (comms_on)
        len += snprintf(case_text + len, sizeof case_text - (size_t)len, ", on %s",
                        (const char *[]){ "MPI_COMM_WORLD", "a dup", "a rank-swapping split" }[c->comm_kind]);
    for (int k = 0; k < c->npairs && len < (int)sizeof case_text; k++) {
        const pair *p = &c->p[k];
        len += snprintf(case_text + len, sizeof case_text - (size_t)len,
                        "; pair %d%s: %d->%d %s@%s(%d) %ld ints, send %d x %ld of %d int(s), "
                        "recv %d x %ld of %d int(s)%s",
                        k, p->left_out ? " (left out)" : "", p->from, p->to, p->policy, p->transport, p->knob, p->n,
                        p->sparts, p->scount, p->sa, p->rparts, p->rcount, p->rb, p->strided ? " strided" : "");
    }
}

/* Not async-signal-safe, and need not be: the program is stuck and ends here. */
static void on_deadline(int sig)
{
    (void)sig;
    fprintf(stderr, "[rank %d] soak: DEADLINE: no progress for %u s in round %d (%s) of %s\n", rank, deadline_s,
            cur_round, stage, case_text);
    const char *bt = getenv("PARTITA_SOAK_BACKTRACE");
    if (bt && bt[0] == '1') {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' 1>&2", (int)getpid());
        if (system(cmd) != 0)
            fprintf(stderr, "[rank %d] soak: gdb failed\n", rank);
    }
    _exit(3);
}

static void on_mpi_error(MPI_Comm *comm, int *code, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    (void)comm;
    MPI_Error_string(*code, msg, &len);
    fprintf(stderr, "[rank %d] soak: MPI error: %s\n[rank %d] in %s\n", rank, msg, rank, case_text);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

/* Draw the case's pairs and their plan. */
static void draw(soak_case *c, int index, long max_bytes, const char *const *transports, int ntransports, long keep)
{
    uint64_t s = seed ^ (0x5bd1e995ull * (uint64_t)(index + 1));
    memset(c, 0, sizeof *c);
    c->index = index;
    c->npairs = 1 + below(&s, MAX_PAIRS);
    int r = below(&s, 100);
    c->rounds = r < 50 ? 1 + below(&s, 3) : r < 85 ? 4 + below(&s, 7) : 20 + below(&s, 21);
    c->threads = thread_multiple ? 1 + below(&s, MAX_THREADS) : 1;
    c->complete_mode = below(&s, 4);
    c->laggard_us = chance(&s, 30) ? 20 + below(&s, 400) : 0;
    c->startall = chance(&s, 50);
    for (int k = 0; k < c->npairs; k++) {
        pair *p = &c->p[k];
        int d = below(&s, 10);
        p->from = d < 4 ? 0 : d < 8 ? 1 : d - 8; /* 20%: a rank to itself */
        p->to = d < 8 ? 1 - p->from : p->from;
        p->sa = chance(&s, 70) ? 1 : 3;
        p->rb = chance(&s, 60) ? 1 : 2;
        p->strided = chance(&s, 30);
        long max_ints = max_bytes / 4;
        for (;;) {
            p->sparts = (int)log_uniform(&s, 1024);
            p->rparts = chance(&s, 40) ? p->sparts : (int)log_uniform(&s, 1024);
            long us = (long)p->sparts * p->sa, ur = (long)p->rparts * p->rb;
            long unit = us / gcd(us, ur) * ur;
            if (unit > max_ints)
                continue;
            long k2 = chance(&s, 5) ? 0 : log_uniform(&s, max_ints / unit);
            p->n = unit * k2;
            break;
        }
        p->scount = p->n / ((long)p->sparts * p->sa);
        p->rcount = p->n / ((long)p->rparts * p->rb);
        int pol = below(&s, NPOLICIES);
        snprintf(p->policy, sizeof p->policy, "%s", policies[pol]);
        p->knob = -1;
        if (!strcmp(p->policy, "static"))
            p->knob = 64 << below(&s, 11);
        else if (!strcmp(p->policy, "timer") && chance(&s, 75))
            p->knob = (int[]){ 0, 1, 10, 100 }[below(&s, 4)];
        else if (!strcmp(p->policy, "fixed"))
            p->knob = 1 + below(&s, 2 * p->sparts + 3);
        else if (!strcmp(p->policy, "adaptive"))
            p->knob = below(&s, 2);
        snprintf(p->transport, sizeof p->transport, "%s", transports[below(&s, ntransports)]);
        p->left_out = keep && !(keep >> k & 1);
    }
    /* Drawn last, so that -N leaves every other choice of the case as it was. */
    if (natives_on && chance(&s, 60))
        c->native_ints = log_uniform(&s, max_bytes / 4);
    if (comms_on)
        c->comm_kind = below(&s, 3);
    describe(c);
}

static MPI_Info pair_info(const pair *p)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", p->policy);
    MPI_Info_set(info, "partita_transport", p->transport);
    char v[32];
    snprintf(v, sizeof v, "%d", p->knob);
    if (p->knob >= 0) {
        const char *key = !strcmp(p->policy, "static") ? "partita_min_bytes"
                          : !strcmp(p->policy, "timer") ? "partita_delta_us"
                          : !strcmp(p->policy, "fixed") ? "partita_transport_parts"
                                                        : "partita_adapt";
        MPI_Info_set(info, key, v);
    }
    return info;
}

/* Position in the receive buffer of the i-th int received. */
static long rpos(const pair *p, long i) { return p->strided ? 2 * i : i; }
static long rbuf_ints(const pair *p) { return p->strided ? 2 * p->n : p->n; }

/* A world rank's rank in the case's communicator. */
static int crank(const soak_case *c, int world) { return c->comm_kind == 2 ? 1 - world : world; }

static void setup(soak_case *c)
{
    c->comm = MPI_COMM_WORLD;
    if (c->comm_kind == 1)
        MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    else if (c->comm_kind == 2)
        MPI_Comm_split(MPI_COMM_WORLD, 0, 1 - rank, &c->comm);
    MPI_Comm_set_errhandler(c->comm, on_error);
    for (int k = 0; k < c->npairs; k++) {
        pair *p = &c->p[k];
        p->sreq = p->rreq = MPI_REQUEST_NULL;
        if (p->left_out)
            continue;
        MPI_Info info = pair_info(p);
        if (rank == p->from) {
            p->sbuf = malloc((size_t)(p->n ? p->n : 1) * sizeof(int));
            MPI_Type_contiguous(p->sa, MPI_INT, &p->stype);
            MPI_Type_commit(&p->stype);
            OK(MPI_Psend_init(p->sbuf, p->sparts, p->scount, p->stype, crank(c, p->to), k, c->comm, info, &p->sreq));
            CHECK_PARTITA(p->sreq);
        }
        if (rank == p->to) {
            p->rbuf = malloc((size_t)(p->n ? rbuf_ints(p) : 1) * sizeof(int));
            p->seen = malloc((size_t)p->rparts);
            if (p->strided) {
                MPI_Datatype v;
                MPI_Type_vector(p->rb, 1, 2, MPI_INT, &v);
                MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * p->rb * sizeof(int)), &p->rtype);
                MPI_Type_free(&v);
            } else {
                MPI_Type_contiguous(p->rb, MPI_INT, &p->rtype);
            }
            MPI_Type_commit(&p->rtype);
            OK(MPI_Precv_init(p->rbuf, p->rparts, p->rcount, p->rtype, crank(c, p->from), k, c->comm, info,
                              &p->rreq));
            CHECK_PARTITA(p->rreq);
        }
        MPI_Info_free(&info);
    }
}

static void teardown(soak_case *c)
{
    for (int k = 0; k < c->npairs; k++) {
        pair *p = &c->p[k];
        if (p->sreq != MPI_REQUEST_NULL) {
            OK(MPI_Request_free(&p->sreq));
            MPI_Type_free(&p->stype);
        }
        if (p->rreq != MPI_REQUEST_NULL) {
            OK(MPI_Request_free(&p->rreq));
            MPI_Type_free(&p->rtype);
        }
        free(p->sbuf);
        free(p->rbuf);
        free(p->seen);
        p->sbuf = p->rbuf = NULL;
        p->seen = NULL;
    }
    if (c->comm != MPI_COMM_WORLD)
        MPI_Comm_free(&c->comm);
}

/* One marking step: a run of a pair's send partitions, marked one by one,
 * as a range or as a list, each written just before. */
typedef struct step {
    int pair, first, count, how; /* how: 0 Pready each, 1 Pready_range, 2 Pready_list */
    int *list;                   /* how 2: the partitions, shuffled */
} step;

typedef struct marking {
    soak_case *c;
    int round, nsteps;
    step *steps;
    int thread;
} marking;

static void fill_partition(const soak_case *c, const pair *p, int k, int round, int part)
{
    long per = p->scount * p->sa;
    for (long i = part * per; i < (part + 1) * per; i++)
        p->sbuf[i] = value(seed, c->index, k, round, i);
}

/* The step's i-th partition. */
static int step_part(const step *st, int i) { return st->list ? st->list[i] : st->first + i; }

static void do_step(marking *m, const step *st)
{
    const pair *p = &m->c->p[st->pair];
    if (st->how == 0) {
        for (int i = 0; i < st->count; i++) {
            fill_partition(m->c, p, st->pair, m->round, step_part(st, i));
            OK(MPI_Pready(step_part(st, i), p->sreq));
        }
        return;
    }
    for (int i = 0; i < st->count; i++)
        fill_partition(m->c, p, st->pair, m->round, step_part(st, i));
    if (st->how == 1)
        OK(MPI_Pready_range(st->first, st->first + st->count - 1, p->sreq));
    else
        OK(MPI_Pready_list(st->count, st->list, p->sreq));
}

/* Thread t takes every threads-th step; the last thread to start pauses
 * before its last step when the case has a laggard. */
static void *mark_thread(void *arg)
{
    marking *m = arg;
    int t = m->thread, T = m->c->threads;
    int last = -1;
    for (int i = t; i < m->nsteps; i += T)
        last = i;
    for (int i = t; i < m->nsteps; i += T) {
        if (i == last && t == T - 1 && m->c->laggard_us)
            ptest_pause_us(m->c->laggard_us);
        do_step(m, &m->steps[i]);
    }
    return NULL;
}

/* The round's marking steps over this rank's send requests, shuffled. */
static int plan_steps(soak_case *c, uint64_t *s, step **out)
{
    int cap = 0;
    for (int k = 0; k < c->npairs; k++)
        if (c->p[k].sreq != MPI_REQUEST_NULL)
            cap += c->p[k].sparts;
    step *st = calloc((size_t)(cap ? cap : 1), sizeof *st);
    int n = 0;
    for (int k = 0; k < c->npairs; k++) {
        pair *p = &c->p[k];
        if (p->sreq == MPI_REQUEST_NULL)
            continue;
        for (int first = 0; first < p->sparts;) {
            int count = 1 + below(s, chance(s, 50) ? 1 : 1 + p->sparts / 4);
            if (first + count > p->sparts)
                count = p->sparts - first;
            st[n] = (step){ .pair = k, .first = first, .count = count, .how = below(s, 3) };
            if (st[n].how == 2 || (st[n].how == 0 && count > 1 && chance(s, 50))) {
                st[n].list = malloc((size_t)count * sizeof(int));
                for (int i = 0; i < count; i++)
                    st[n].list[i] = first + i;
                for (int i = count - 1; i > 0; i--) {
                    int j = below(s, i + 1), x = st[n].list[i];
                    st[n].list[i] = st[n].list[j], st[n].list[j] = x;
                }
            }
            n++;
            first += count;
        }
    }
    for (int i = n - 1; i > 0; i--) {
        int j = below(s, i + 1);
        step x = st[i];
        st[i] = st[j], st[j] = x;
    }
    *out = st;
    return n;
}

static void mark_round(soak_case *c, int round, uint64_t *s)
{
    step *st;
    int n = plan_steps(c, s, &st);
    marking m[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    for (int t = 0; t < c->threads; t++) {
        m[t] = (marking){ .c = c, .round = round, .nsteps = n, .steps = st, .thread = t };
        if (t > 0)
            pthread_create(&tid[t], NULL, mark_thread, &m[t]);
    }
    mark_thread(&m[0]);
    for (int t = 1; t < c->threads; t++)
        pthread_join(tid[t], NULL);
    for (int i = 0; i < n; i++)
        free(st[i].list);
    free(st);
}

/* Receive partition q of pair k holds round's data (every int). */
static int partition_right(const soak_case *c, const pair *p, int k, int round, int q, long *bad)
{
    long per = p->rcount * p->rb;
    for (long i = q * per; i < (q + 1) * per; i++)
        if (p->rbuf[rpos(p, i)] != value(seed, c->index, k, round, i)) {
            *bad = i;
            return 0;
        }
    return 1;
}

/* Poll MPI_Parrived over this rank's receives until every partition came,
 * checking each partition's data the moment it is reported. */
static void parrived_sweep(soak_case *c, int round)
{
    for (int k = 0; k < c->npairs; k++)
        if (c->p[k].rreq != MPI_REQUEST_NULL)
            memset(c->p[k].seen, 0, (size_t)c->p[k].rparts);
    for (int left = 1; left;) {
        left = 0;
        for (int k = 0; k < c->npairs; k++) {
            pair *p = &c->p[k];
            if (p->rreq == MPI_REQUEST_NULL)
                continue;
            for (int q = 0; q < p->rparts; q++) {
                if (p->seen[q])
                    continue;
                int flag = 0;
                OK(MPI_Parrived(p->rreq, q, &flag));
                if (!flag) {
                    left = 1;
                    continue;
                }
                p->seen[q] = 1;
                long bad = -1;
                CHECK(partition_right(c, p, k, round, q, &bad),
                      "%s: round %d pair %d: partition %d reported arrived, int %ld is %d, not %d", case_text,
                      round, k, q, bad, p->rbuf[rpos(p, bad)], value(seed, c->index, k, round, bad));
            }
        }
    }
}

#define NATIVE_TAG 100
#define NATIVE_PAIR 7 /* value()'s pair number for the native messages */

/* -N: this round's native message each way, posted after MPI_Start. */
static void post_natives(soak_case *c, int round)
{
    if (!c->native_ints)
        return;
    for (long i = 0; i < c->native_ints; i++) {
        c->native_out[i] = value(seed, c->index, NATIVE_PAIR + rank, round, i);
        c->native_in[i] = SENTINEL;
    }
    OK(MPI_Irecv(c->native_in, (int)c->native_ints, MPI_INT, 1 - rank, NATIVE_TAG, MPI_COMM_WORLD,
                 &c->native_req[0]));
    OK(MPI_Isend(c->native_out, (int)c->native_ints, MPI_INT, 1 - rank, NATIVE_TAG, MPI_COMM_WORLD,
                 &c->native_req[1]));
}

static void check_natives(const soak_case *c, int round)
{
    long wrong = 0;
    for (long i = 0; i < c->native_ints; i++)
        wrong += c->native_in[i] != value(seed, c->index, NATIVE_PAIR + 1 - rank, round, i);
    CHECK(wrong == 0, "%s: round %d: %ld wrong ints in the native message", case_text, round, wrong);
}

/* This rank's partitioned requests, pair by pair (send, then receive), into
 * reqs; returns how many. */
static int rank_requests(const soak_case *c, MPI_Request *reqs)
{
    int n = 0;
    for (int k = 0; k < c->npairs; k++) {
        if (c->p[k].sreq != MPI_REQUEST_NULL)
            reqs[n++] = c->p[k].sreq;
        if (c->p[k].rreq != MPI_REQUEST_NULL)
            reqs[n++] = c->p[k].rreq;
    }
    return n;
}

static void complete_round(soak_case *c, int round)
{
    MPI_Request reqs[2 * MAX_PAIRS + 2];
    int n = 0;
    if (c->native_ints) {
        reqs[n++] = c->native_req[0];
        reqs[n++] = c->native_req[1];
    }
    n += rank_requests(c, reqs + n);
    switch (c->complete_mode) {
    case 0:
        OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        break;
    case 1:
        for (int flag = 0; !flag;)
            OK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
        break;
    case 2:
        parrived_sweep(c, round);
        OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        break;
    default:
        for (int done = 0; done < n;) {
            int out = 0, idx[2 * MAX_PAIRS + 2];
            OK(MPI_Waitsome(n, reqs, &out, idx, MPI_STATUSES_IGNORE));
            if (out == MPI_UNDEFINED)
                break;
            done += out;
        }
    }
}

static void check_round(soak_case *c, int round)
{
    for (int k = 0; k < c->npairs; k++) {
        pair *p = &c->p[k];
        if (round == 0 && p->sreq != MPI_REQUEST_NULL) {
            char why[2048], want[48];
            OK(Partita_Request_why(p->sreq, why, sizeof why));
            snprintf(want, sizeof want, "transport %s", p->transport);
            CHECK(strstr(why, want), "%s: pair %d: the plan does not say '%s': %s", case_text, k, want, why);
        }
        if (p->rreq == MPI_REQUEST_NULL)
            continue;
        long wrong = 0, first_bad = -1, gaps = 0;
        for (long i = 0; i < p->n; i++)
            if (p->rbuf[rpos(p, i)] != value(seed, c->index, k, round, i) && !wrong++)
                first_bad = i;
        if (p->strided)
            for (long i = 0; i < p->n; i++)
                gaps += p->rbuf[2 * i + 1] != SENTINEL;
        CHECK(wrong == 0 && gaps == 0, "%s: round %d pair %d: %ld wrong ints (first %ld), %ld gaps written", case_text,
              round, k, wrong, first_bad, gaps);
    }
}

static void run_case(soak_case *c)
{
    alarm(deadline_s);
    cur_round = -1;
    stage = "set-up";
    setup(c);
    if (c->native_ints) {
        c->native_out = malloc((size_t)c->native_ints * sizeof(int));
        c->native_in = malloc((size_t)c->native_ints * sizeof(int));
    }
    uint64_t s = seed ^ (0x27d4eb2dull * (uint64_t)(c->index + 1)) ^ (uint64_t)rank;
    for (int round = 0; round < c->rounds; round++) {
        cur_round = round;
        stage = "start";
        for (int k = 0; k < c->npairs; k++) {
            pair *p = &c->p[k];
            if (p->rreq != MPI_REQUEST_NULL)
                for (long i = 0; i < rbuf_ints(p); i++)
                    p->rbuf[i] = SENTINEL;
            if (p->sreq != MPI_REQUEST_NULL)
                for (long i = 0; i < p->n; i++)
                    p->sbuf[i] = SENTINEL; /* each partition is written just before its mark */
        }
        MPI_Request reqs[2 * MAX_PAIRS];
        int n = rank_requests(c, reqs); /* persistent: Start leaves the handles as they are */
        if (c->startall && n)
            OK(MPI_Startall(n, reqs));
        for (int i = 0; !c->startall && i < n; i++)
            OK(MPI_Start(&reqs[i]));
        post_natives(c, round);
        stage = "marking";
        mark_round(c, round, &s);
        stage = "completing";
        complete_round(c, round);
        stage = "checking";
        check_round(c, round);
        if (c->native_ints)
            check_natives(c, round);
    }
    stage = "freeing";
    teardown(c);
    free(c->native_out);
    free(c->native_in);
    alarm(0);
}

int main(int argc, char **argv)
{
    int provided, funneled = 0;
    for (int i = 1; i < argc; i++) /* known before MPI_Init_thread, which the options' checks come after */
        funneled |= !strcmp(argv[i], "-F");
    MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
    rank = ptest_pair_rank("soak");
    thread_multiple = provided >= MPI_THREAD_MULTIPLE;
    long cases = 40, only = -1, max_bytes = 1 << 20, keep = 0;
    double budget_s = 0;
    int verbose = 0;
    char tlist[64] = "mpi";
    seed = 1;
    int o;
    while ((o = getopt(argc, argv, "s:n:c:k:T:m:x:NCFv")) != -1) {
        char *end = NULL;
        switch (o) {
        case 's': seed = strtoull(optarg, &end, 10); break;
        case 'n': cases = strtol(optarg, &end, 10); break;
        case 'c': only = strtol(optarg, &end, 10); break;
        case 'k': keep = strtol(optarg, &end, 10); break;
        case 'T': budget_s = strtod(optarg, &end); break;
        case 'm': max_bytes = strtol(optarg, &end, 10); break;
        case 'x': snprintf(tlist, sizeof tlist, "%s", optarg); end = optarg + strlen(optarg); break;
        case 'v': verbose = 1; end = ""; break;
        case 'N': natives_on = 1; end = ""; break;
        case 'C': comms_on = 1; end = ""; break;
        case 'F': end = ""; break; /* read before MPI_Init_thread */
        default: ptest_usage("soak: usage: soak [-s SEED] [-n CASES] [-c CASE [-k PAIRS]] [-T SECONDS] [-m MAX_BYTES] "
                             "[-x mpi,fabric] [-N] [-C] [-F] [-v]");
        }
        if (!strchr("vNCF", o) && (!end || *end || end == optarg))
            ptest_usage("soak: an option's value is not a number (see the comment at the top of soak.c)");
    }
    if (cases < 1 || max_bytes < 4 || max_bytes > (1L << 28) || budget_s < 0 || only < -1 || keep < 0 ||
        keep >= 1 << MAX_PAIRS || (keep && only < 0))
        ptest_usage("soak: need -n >= 1, -m in [4, 2^28] bytes, -T >= 0, -c >= 0, -k in [1, 7] with -c");
    const char *transports[4];
    int ntransports = 0;
    for (char *tok = strtok(tlist, ","); tok && ntransports < 4; tok = strtok(NULL, ","))
        transports[ntransports++] = tok;
    if (!ntransports)
        ptest_usage("soak: -x needs at least one transport");
    const char *dl = getenv("PARTITA_SOAK_DEADLINE_S");
    if (dl && *dl) {
        char *end = NULL;
        long v = strtol(dl, &end, 10);
        if (*end || v < 1 || v > 3600)
            ptest_usage("soak: PARTITA_SOAK_DEADLINE_S must be a number of seconds in [1, 3600]");
        deadline_s = (unsigned)v;
    }
    MPI_Comm_create_errhandler(on_mpi_error, &on_error);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, on_error);
    signal(SIGALRM, on_deadline);
    double t0 = ptest_now_s();
    long ran = 0;
    for (long i = only >= 0 ? only : 0; i < (only >= 0 ? only + 1 : cases); i++) {
        int go = budget_s <= 0 || ptest_now_s() - t0 < budget_s;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go)
            break;
        soak_case c;
        draw(&c, (int)i, max_bytes, transports, ntransports, keep);
        if (verbose && rank == 0)
            fprintf(stderr, "%s\n", case_text);
        run_case(&c);
        ran++;
    }
    if (rank == 0)
        printf("soak: seed %llu: %ld cases in %.1f s (marking: %s)\n", (unsigned long long)seed, ran,
               ptest_now_s() - t0, thread_multiple ? "1-3 threads" : "one thread, below MPI_THREAD_MULTIPLE");
    MPI_Errhandler_free(&on_error);
    return ptest_finish("soak");
}
