/* The adaptive policy (docs/library.md, "Adaptive plans").
 *   adapt agree -s SEND_PARTS -r RECV_PARTS -n DOUBLES -i ROUNDS [-t contig|strided] [-c world|self]
 *               [-m wait|parrived] [-l]
 *     Many rounds under the adaptive policy: every byte checked in every
 *     round, both sides name the same layout (Partita_Request_layouts) in
 *     every round, and more than one layout is used (the exploration). -l:
 *     the receiver starts some rounds 2 ms late (the sender runs ahead and
 *     announces windows before the receiver asks for them). -w: some rounds
 *     must have waited for their window at MPI_Start (run with
 *     PARTITA_ADAPT_TEST_LATE_ANNOUNCE=1: the sender announces a window at
 *     its own first round, so a receiver that starts first waits for it).
 *   adapt fake -n DOUBLES -s PARTS -i ROUNDS
 *     Fake costs (PARTITA_ADAPT_TEST_COSTS, set here from the candidates the
 *     request reports) make candidate 2 the cheapest, then, from round
 *     ROUNDS/2 on, candidate 1: the chosen layout must follow, both times,
 *     and by the end its windows must have grown past 8 rounds (costs
 *     that hold still; a change shows within about a long window and two
 *     short ones: planner/adapt.h, so ROUNDS is 480 in `make test`).
 *   adapt static
 *     PARTITA_ADAPT=0 (run with it set): one candidate, the model's layout;
 *     info partita_adapt=0 does the same; bad info values are errors.
 *   adapt timer -n DOUBLES -s PARTS
 *     The timer on a size the model cuts: the cut and one message per
 *     partition as candidates, one layout where that does not apply. (With
 *     PARTITA_POLICY=timer, agree and fake run the timer's two layouts.)
 *   adapt perpart
 *     One message per partition as an adaptive candidate beyond the model's
 *     eager burst (MPICH's built-in parameters: run with no LogGP file):
 *     128 KiB in 32 partitions (priced within 2x of one message) has it;
 *     1 KiB in 32 (priced 5.7x) and 512 KiB in 128 (over 64) do not. As
 *     `none` sends it: 512 KiB in 16 partitions of 32 KiB, past the eager
 *     limit, as 80 eager pieces (a cut), for adaptive and for the timer.
 *   adapt split -n DOUBLES -s PARTS -i ROUNDS
 *     With a progress thread (PARTITA_PROGRESS_THREAD=1; without it the test
 *     checks that there is no such candidate): a candidate of groups that the
 *     timer splits, the same groups as an earlier candidate. Fake costs make
 *     it the cheapest; every round the sender marks all partitions but
 *     partition 1, pauses 10 ms, then marks it. Every byte is checked, both
 *     sides name the same layout, the split candidate is the one used in
 *     most of the later rounds, and at least half of its rounds sent runs (the
 *     stalled group's ready partitions went during the pause; the progress
 *     thread may not get a core in time on a busy machine) where the others'
 *     rounds sent none.
 * Rank 0 sends, rank 1 receives (with -c self each rank sends to itself). */
#include <unistd.h>

#include "partita/partita.h"
#include "ptest.h"

#define MAXC 4
#define MAX_ROUNDS 1000

static double value(int round, long i) { return round * 1000003.0 + (double)i + 0.25; }

typedef struct opts {
    int sparts, rparts, rounds, late, waits;
    long n;
    char what[16], type[16], comm[16], mode[16];
} opts;

static void parse(int argc, char **argv, opts *o)
{
    *o = (opts){ .sparts = 8, .rparts = 8, .rounds = 100, .n = 8192 };
    strcpy(o->what, argc > 1 ? argv[1] : "");
    strcpy(o->type, "contig");
    strcpy(o->comm, "world");
    strcpy(o->mode, "wait");
    int c;
    optind = 2;
    while ((c = getopt(argc, argv, "s:r:n:i:t:c:m:lw")) != -1) {
        switch (c) {
        case 's': o->sparts = atoi(optarg); break;
        case 'r': o->rparts = atoi(optarg); break;
        case 'n': o->n = atol(optarg); break;
        case 'i': o->rounds = atoi(optarg); break;
        case 't': snprintf(o->type, sizeof o->type, "%s", optarg); break;
        case 'c': snprintf(o->comm, sizeof o->comm, "%s", optarg); break;
        case 'm': snprintf(o->mode, sizeof o->mode, "%s", optarg); break;
        case 'l': o->late = 1; break;
        case 'w': o->waits = 1; break;
        default: ptest_usage("adapt: unknown option (see the comment at the top of adapt.c)");
        }
    }
    if (strcmp(o->what, "agree") && strcmp(o->what, "fake") && strcmp(o->what, "static") &&
        strcmp(o->what, "timer") && strcmp(o->what, "perpart") && strcmp(o->what, "split"))
        ptest_usage("adapt: first argument: agree, fake, static, timer, perpart or split");
    if (o->sparts < 1 || o->rparts < 1 || o->rounds < 1 || o->rounds > MAX_ROUNDS || o->n % o->sparts ||
        o->n % o->rparts)
        ptest_usage("adapt: need partitions >= 1, 1 <= rounds <= 1000, DOUBLES divisible by both partition counts");
    if (strcmp(o->type, "contig") && strcmp(o->type, "strided"))
        ptest_usage("adapt: -t must be contig or strided");
}

/* The layout of the request's current round: its index, and the count of candidates. */
static int layout_now(MPI_Request req, int *ncand)
{
    int cur = -1;
    OK(Partita_Request_layouts(req, 0, NULL, NULL, ncand, &cur));
    return cur;
}

/* Receives into every other double with -t strided (gaps stay untouched):
 * *elems_per_double is then 2 (buffer doubles per data double). */
static MPI_Datatype recv_type(const opts *o, int *elems_per_double, long *buffer_doubles)
{
    MPI_Datatype t = MPI_DOUBLE;
    *elems_per_double = 1;
    *buffer_doubles = o->n;
    if (!strcmp(o->type, "strided")) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &v);
        MPI_Type_create_resized(v, 0, 2 * sizeof(double), &t);
        MPI_Type_free(&v);
        MPI_Type_commit(&t);
        *buffer_doubles = 2 * o->n;
        *elems_per_double = 2;
    }
    return t;
}

static void agree(const opts *o, int rank)
{
    int self = !strcmp(o->comm, "self");
    MPI_Comm comm = self ? MPI_COMM_SELF : MPI_COMM_WORLD;
    int sender = self || rank == 0, receiver = self || rank == 1;
    int epd;
    long rdoubles;
    MPI_Datatype rtype = recv_type(o, &epd, &rdoubles);
    double *sbuf = malloc((size_t)o->n * sizeof *sbuf), *rbuf = malloc((size_t)rdoubles * sizeof *rbuf);
    int *slayout = calloc(MAX_ROUNDS, sizeof *slayout), *rlayout = calloc(MAX_ROUNDS, sizeof *rlayout);
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    int peer = self ? 0 : 1 - rank;
    if (sender)
        OK(MPI_Psend_init(sbuf, o->sparts, o->n / o->sparts, MPI_DOUBLE, peer, 7, comm, MPI_INFO_NULL, &sreq));
    if (receiver)
        OK(MPI_Precv_init(rbuf, o->rparts, o->n / o->rparts, rtype, peer, 7, comm, MPI_INFO_NULL, &rreq));
    long wrong = 0;
    int sncand = 0, rncand = 0;
    for (int round = 0; round < o->rounds; round++) {
        if (receiver) {
            for (long i = 0; i < rdoubles; i++)
                rbuf[i] = -1.0;
            if (o->late && round % 7 == 3)
                usleep(2000); /* the sender is ahead: its window may be announced long before */
            OK(MPI_Start(&rreq));
        }
        if (o->waits && !self)
            MPI_Barrier(MPI_COMM_WORLD); /* the receiver starts first: it waits for each window */
        if (sender) {
            for (long i = 0; i < o->n; i++)
                sbuf[i] = value(round, i);
            OK(MPI_Start(&sreq));
            for (int p = o->sparts - 1; p >= 0; p--) /* reverse order: the last group is not last */
                OK(MPI_Pready(p, sreq));
        }
        if (receiver && !strcmp(o->mode, "parrived"))
            for (int p = 0; p < o->rparts; p++)
                ptest_parrived_loop(rreq, p);
        if (sender)
            OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        if (receiver) {
            OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
            for (long i = 0; i < rdoubles; i++) {
                double want = epd == 1 ? value(round, i) : i % 2 ? -1.0 : value(round, i / 2);
                wrong += rbuf[i] != want;
            }
            rlayout[round] = layout_now(rreq, &rncand);
        }
        if (sender)
            slayout[round] = layout_now(sreq, &sncand);
    }
    CHECK(wrong == 0, "%ld wrong doubles over %d rounds", wrong, o->rounds);
    if (!self && rank == 0) {
        MPI_Send(slayout, o->rounds, MPI_INT, 1, 99, MPI_COMM_WORLD);
        MPI_Send(&sncand, 1, MPI_INT, 1, 98, MPI_COMM_WORLD);
    } else if (!self) {
        MPI_Recv(slayout, o->rounds, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&sncand, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (receiver) {
        int differ = 0, used = 0, seen[MAXC] = { 0 };
        for (int round = 0; round < o->rounds; round++) {
            differ += slayout[round] != rlayout[round];
            if (slayout[round] >= 0 && slayout[round] < MAXC)
                used += !seen[slayout[round]]++;
        }
        CHECK(differ == 0, "the sides named different layouts in %d of %d rounds", differ, o->rounds);
        CHECK(sncand == rncand, "%d candidates on the sender, %d on the receiver", sncand, rncand);
        CHECK(sncand < 2 || used >= 2, "only %d of %d candidate layouts used", used, sncand);
        char why[512];
        OK(Partita_Request_why(rreq, why, sizeof why));
        const char *policy = getenv("PARTITA_POLICY"); /* adaptive, or the timer on a cut */
        CHECK(strstr(why, policy && *policy ? policy : "adaptive") == why, "why: %s", why);
        const char *w = strstr(why, "announced (");
        CHECK(!o->waits || (w && atoi(w + 11) > 0), "no round waited for its window: %s", why);
    }
    if (sender) {
        char why[512];
        OK(Partita_Request_why(sreq, why, sizeof why));
        if (rank == 0)
            printf("adapt: %s\n", why);
        OK(MPI_Request_free(&sreq));
    }
    if (receiver)
        OK(MPI_Request_free(&rreq));
    if (rtype != MPI_DOUBLE)
        MPI_Type_free(&rtype);
    free(sbuf), free(rbuf), free(slayout), free(rlayout);
}

/* The candidates of a request of this shape (a pair made and freed unstarted). */
static int candidates(const opts *o, int rank, double *buf, int *counts, int *cuts)
{
    MPI_Request req;
    int n = 0, cur;
    if (rank == 0) {
        OK(MPI_Psend_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        OK(Partita_Request_layouts(req, MAXC, counts, cuts, &n, &cur));
    } else {
        OK(MPI_Precv_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    }
    OK(MPI_Request_free(&req));
    return n;
}

/* A layout's kind (Partita_Request_layouts) as PARTITA_ADAPT_TEST_COSTS writes it. */
static const char *kind_suffix(int kind) { return kind == 1 ? "c" : kind == 2 ? "s" : ""; }

/* Rank 0's send or rank 1's receive of -s partitions of the -n doubles in buf (the environment's policy). */
static MPI_Request pair_request(const opts *o, int rank, double *buf, int tag)
{
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0)
        OK(MPI_Psend_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    return req;
}

static void fake(const opts *o, int rank)
{
    double *buf = calloc((size_t)o->n, sizeof *buf);
    int counts[MAXC], cuts[MAXC], n = candidates(o, rank, buf, counts, cuts);
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(n >= 2, "this case has %d candidate layouts; the test needs 2", n);
    if (n < 2) {
        free(buf);
        return;
    }
    /* first candidate `cheap` (2, or 1 of two), then from the middle on `then` (1, or 0 of two) */
    int cheap = n >= 3 ? 2 : 1, then = cheap - 1, half = o->rounds / 2;
    if (rank == 0) {
        char costs[256];
        int at = 0;
        for (int phase = 0; phase < 2; phase++) {
            if (phase)
                at += snprintf(costs + at, sizeof costs - (size_t)at, ";@%d:", half);
            for (int k = 0; k < n && k < 3; k++) {
                int us = k == (phase ? then : cheap) ? 5 : k == then ? 60 : 50;
                at += snprintf(costs + at, sizeof costs - (size_t)at, "%s%d%s=%d", k ? "," : "", counts[k],
                               kind_suffix(cuts[k]), us);
            }
        }
        setenv("PARTITA_ADAPT_TEST_COSTS", costs, 1); /* read by the next MPI_Psend_init */
    }
    MPI_Request req = pair_request(o, rank, buf, 4);
    int used[MAX_ROUNDS], ncand = 0;
    for (int round = 0; round < o->rounds; round++) {
        OK(MPI_Start(&req));
        if (rank == 0)
            OK(MPI_Pready_range(0, o->sparts - 1, req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        used[round] = layout_now(req, &ncand);
        MPI_Barrier(MPI_COMM_WORLD); /* each round's feedback comes in before long */
    }
    if (rank == 0) {
        /* the second half of each phase: mostly the phase's cheapest */
        int first = 0, second = 0, quarter = half / 2;
        for (int r = quarter; r < half; r++)
            first += used[r] == cheap;
        for (int r = half + quarter; r < o->rounds; r++)
            second += used[r] == then;
        CHECK(first >= (half - quarter) * 8 / 10, "rounds %d-%d: candidate %d in %d", quarter, half - 1, cheap,
              first);
        CHECK(second >= (o->rounds - half - quarter) * 8 / 10, "rounds %d-%d: candidate %d in %d", half + quarter,
              o->rounds - 1, then, second);
        char why[512];
        OK(Partita_Request_why(req, why, sizeof why));
        printf("adapt: %s\n", why);
        CHECK(strstr(why, "fake costs") != NULL, "why: %s", why);
        /* fake costs hold still: the settled choice's windows have grown past 8 rounds */
        const char *cover = strstr(why, "the current window covers ");
        int span = 0;
        CHECK(cover && sscanf(cover, "the current window covers %d rounds", &span) == 1 && span > 8,
              "why: %s", why);
    }
    OK(MPI_Request_free(&req));
    free(buf);
}

/* The candidates of a request of `parts` partitions of the -n doubles under `info`. */
static int layouts_with(const opts *o, int rank, double *buf, MPI_Info info, int parts, int *counts, int *cuts)
{
    MPI_Request req;
    int n = 0, cur;
    if (rank == 0) {
        OK(MPI_Psend_init(buf, parts, o->n / parts, MPI_DOUBLE, 1, 30, MPI_COMM_WORLD, info, &req));
        OK(Partita_Request_layouts(req, MAXC, counts, cuts, &n, &cur));
    } else {
        OK(MPI_Precv_init(buf, parts, o->n / parts, MPI_DOUBLE, 0, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    }
    OK(MPI_Request_free(&req));
    return n;
}

/* The timer on a cut (-n 4096 -s 8: 32 KiB in 8 partitions, which the model
 * cuts over MPI): two candidates, the cut and `none`'s layout (one message
 * per partition, or its eager pieces where the MPI library's parameters put
 * a 4 KiB partition past the eager limit, as Open MPI's do); one, the cut,
 * with PARTITA_ADAPT=0, with a group count given, or with a single
 * partition; `model` keeps its one layout. */
static void timer_layouts(const opts *o, int rank)
{
    double *buf = calloc((size_t)o->n, sizeof *buf);
    MPI_Info timer, off, parts4, model, none;
    MPI_Info_create(&none);
    MPI_Info_set(none, "partita_policy", "none");
    int none_counts[MAXC], none_cuts[MAXC];
    int nn = layouts_with(o, rank, buf, none, o->sparts, none_counts, none_cuts);
    MPI_Info_free(&none);
    if (rank == 0)
        CHECK(nn == 1, "none: %d layouts", nn);
    MPI_Info_create(&timer);
    MPI_Info_set(timer, "partita_policy", "timer");
    MPI_Info_dup(timer, &off);
    MPI_Info_set(off, "partita_adapt", "0");
    MPI_Info_dup(timer, &parts4);
    MPI_Info_set(parts4, "partita_transport_parts", "4");
    MPI_Info_create(&model);
    MPI_Info_set(model, "partita_policy", "model");
    int counts[MAXC], cuts[MAXC];
    int n = layouts_with(o, rank, buf, timer, o->sparts, counts, cuts);
    if (rank == 0)
        CHECK(n == 2 && cuts[0] && counts[1] == none_counts[0] && !cuts[1] == !none_cuts[0] &&
                  none_counts[0] >= o->sparts,
              "timer: %d candidates (%d%s, %d%s), want a cut and none's %d%s", n, counts[0], cuts[0] ? " cut" : "",
              n > 1 ? counts[1] : 0, n > 1 && cuts[1] ? " cut" : "", none_counts[0], none_cuts[0] ? " cut" : "");
    n = layouts_with(o, rank, buf, off, o->sparts, counts, cuts);
    if (rank == 0)
        CHECK(n == 1 && cuts[0], "timer, partita_adapt=0: %d candidates, the first %s", n, cuts[0] ? "a cut" : "groups");
    n = layouts_with(o, rank, buf, parts4, o->sparts, counts, cuts);
    if (rank == 0)
        CHECK(n == 1 && counts[0] == 4, "timer, 4 transport parts: %d candidates, %d messages", n, counts[0]);
    n = layouts_with(o, rank, buf, timer, 1, counts, cuts);
    if (rank == 0)
        CHECK(n == 1, "timer, one partition: %d candidates", n);
    n = layouts_with(o, rank, buf, model, o->sparts, counts, cuts);
    if (rank == 0)
        CHECK(n == 1 && cuts[0], "model: %d candidates", n);
    MPI_Info_free(&timer), MPI_Info_free(&off), MPI_Info_free(&parts4), MPI_Info_free(&model);
    free(buf);
}

/* Whether the sender's candidates (info: the policy, MPI_INFO_NULL for the
 * environment's) for `bytes` in `parts` partitions include `count` messages
 * (a cut or groups); rank 1 answers with rank 0's finding. */
static int has_layout(const opts *o, int rank, MPI_Info info, long bytes, int parts, int count, int cut)
{
    opts at = *o;
    at.n = bytes / (long)sizeof(double);
    double *buf = calloc((size_t)at.n, sizeof *buf);
    int counts[MAXC], cuts[MAXC], n = layouts_with(&at, rank, buf, info, parts, counts, cuts), has = 0;
    for (int k = 0; k < n; k++)
        has |= counts[k] == count && !cuts[k] == !cut;
    MPI_Bcast(&has, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    return has;
}

static int has_per_partition(const opts *o, int rank, long bytes, int parts)
{
    return has_layout(o, rank, MPI_INFO_NULL, bytes, parts, parts, 0);
}

static void per_partition(const opts *o, int rank)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (!strstr(lib, "MPICH")) { /* the sizes below are priced with MPICH's built-in parameters */
        if (rank == 0)
            printf("adapt perpart: skipped: not MPICH (%.40s)\n", lib);
        return;
    }
    int yes = has_per_partition(o, rank, 128 << 10, 32), tiny = has_per_partition(o, rank, 1 << 10, 32),
        many = has_per_partition(o, rank, 512 << 10, 128);
    MPI_Info timer;
    MPI_Info_create(&timer);
    MPI_Info_set(timer, "partita_policy", "timer");
    int pieces = has_layout(o, rank, MPI_INFO_NULL, 512 << 10, 16, 80, 1),
        timer_pieces = has_layout(o, rank, timer, 64 << 10, 8, 16, 1),
        priced_in_pieces = has_layout(o, rank, MPI_INFO_NULL, 1 << 20, 64, 192, 1);
    MPI_Info_free(&timer);
    if (rank == 0) {
        CHECK(yes, "128 KiB in 32 partitions: no candidate of one message per partition");
        CHECK(!tiny, "1 KiB in 32 partitions: one message per partition is a candidate");
        CHECK(!many, "512 KiB in 128 partitions: one message per partition is a candidate");
        CHECK(pieces, "512 KiB in 16 partitions: no candidate of 80 eager pieces (none's layout)");
        CHECK(timer_pieces, "timer, 64 KiB in 8 partitions: no candidate of 16 eager pieces (none's layout)");
        /* priced as whole 16 KiB partitions (rendezvous) it was never tried */
        CHECK(priced_in_pieces, "1 MiB in 64 partitions: no candidate of 192 eager pieces (none's layout)");
    }
}

/* The candidate of groups the timer splits (kind 2), which repeats an
 * earlier candidate's groups, or -1. */
static int split_candidate(int n, const int *counts, const int *cuts)
{
    for (int k = 1; k < n; k++)
        for (int j = 0; j < k; j++)
            if (cuts[k] == 2 && cuts[j] == 0 && counts[k] == counts[j])
                return k;
    return -1;
}

static void split(const opts *o, int rank)
{
    const char *thread = getenv("PARTITA_PROGRESS_THREAD");
    int background = thread && !strcmp(thread, "1");
    double *sbuf = malloc((size_t)o->n * sizeof *sbuf), *rbuf = malloc((size_t)o->n * sizeof *rbuf);
    int counts[MAXC], cuts[MAXC], n = candidates(o, rank, sbuf, counts, cuts);
    int k = rank == 0 ? split_candidate(n, counts, cuts) : -1;
    MPI_Bcast(&k, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(background ? k >= 0 : k < 0, "%d candidates, the split one %d, with%s a progress thread", n, k,
              background ? "" : "out");
    if (k < 0 || o->sparts < 2) {
        free(sbuf), free(rbuf);
        return;
    }
    if (rank == 0) { /* the split candidate cheapest, the rest dearer */
        char costs[256];
        int at = 0;
        for (int c = 0; c < n; c++)
            at += snprintf(costs + at, sizeof costs - (size_t)at, "%s%d%s=%d", c ? "," : "", counts[c],
                           kind_suffix(cuts[c]), c == k ? 5 : 50);
        setenv("PARTITA_ADAPT_TEST_COSTS", costs, 1); /* read by the next MPI_Psend_init */
    }
    MPI_Request req = pair_request(o, rank, rank == 0 ? sbuf : rbuf, 5);
    int *used = calloc(MAX_ROUNDS, sizeof *used), *runs = calloc(MAX_ROUNDS, sizeof *runs), ncand = 0;
    long wrong = 0;
    for (int round = 0; round < o->rounds; round++) {
        if (rank == 1)
            for (long i = 0; i < o->n; i++)
                rbuf[i] = -1.0;
        OK(MPI_Start(&req));
        if (rank == 0) {
            for (long i = 0; i < o->n; i++)
                sbuf[i] = value(round, i);
            for (int p = 0; p < o->sparts; p++)
                if (p != 1)
                    OK(MPI_Pready(p, req));
            ptest_pause_us(10000); /* the progress thread finds group 0 stalled (on a busy machine, late) */
            OK(MPI_Pready(1, req));
        }
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        used[round] = layout_now(req, &ncand);
        if (rank == 0)
            OK(Partita_Request_runs(req, &runs[round]));
        for (long i = 0; rank == 1 && i < o->n; i++)
            wrong += rbuf[i] != value(round, i);
    }
    CHECK(wrong == 0, "%ld wrong doubles over %d rounds", wrong, o->rounds);
    int *theirs = calloc(MAX_ROUNDS, sizeof *theirs);
    MPI_Sendrecv(used, o->rounds, MPI_INT, 1 - rank, 97, theirs, o->rounds, MPI_INT, 1 - rank, 97, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int differ = 0, later = 0, split_rounds = 0, split_runs = 0, other_runs = 0;
    for (int round = 0; round < o->rounds; round++) {
        differ += used[round] != theirs[round];
        later += round >= o->rounds / 2 && used[round] == k;
        split_rounds += used[round] == k;
        split_runs += used[round] == k && runs[round] > 0;
        other_runs += used[round] != k && runs[round] > 0;
    }
    CHECK(differ == 0, "the sides named different layouts in %d of %d rounds", differ, o->rounds);
    int half = o->rounds - o->rounds / 2;
    CHECK(later >= half * 8 / 10, "the split candidate %d in %d of the last %d rounds", k, later, half);
    if (rank == 0) {
        CHECK(split_runs >= split_rounds / 2, "runs sent in %d of the split candidate's %d rounds", split_runs,
              split_rounds);
        CHECK(other_runs == 0, "runs sent in %d rounds of the other candidates", other_runs);
        char why[1024];
        OK(Partita_Request_why(req, why, sizeof why));
        printf("adapt: %s\n", why);
        CHECK(strstr(why, "split when its marking stalls") != NULL, "why: %s", why);
    }
    OK(MPI_Request_free(&req));
    free(used), free(runs), free(theirs), free(sbuf), free(rbuf);
}

/* PARTITA_ADAPT=0 must be set: adaptive plans once, as model does. */
static void static_plan(const opts *o, int rank)
{
    double *buf = calloc((size_t)o->n, sizeof *buf);
    MPI_Info model, off, bad;
    MPI_Info_create(&model);
    MPI_Info_set(model, "partita_policy", "model");
    MPI_Info_create(&off);
    MPI_Info_set(off, "partita_policy", "adaptive");
    MPI_Info_set(off, "partita_adapt", "0");
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "partita_adapt", "yes");
    MPI_Info infos[3] = { MPI_INFO_NULL, off, model };
    int count[3], cut[3], n[3], cur;
    for (int k = 0; k < 3; k++) {
        MPI_Request req;
        if (rank == 0) {
            OK(MPI_Psend_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 1, 10 + k, MPI_COMM_WORLD, infos[k],
                              &req));
            OK(Partita_Request_layouts(req, 1, &count[k], &cut[k], &n[k], &cur));
            CHECK(n[k] == 1 && cur == 0, "request %d: %d candidates, current %d", k, n[k], cur);
            OK(MPI_Start(&req));
            OK(MPI_Pready_range(0, o->sparts - 1, req));
        } else {
            OK(MPI_Precv_init(buf, o->sparts, o->n / o->sparts, MPI_DOUBLE, 0, 10 + k, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req));
            OK(MPI_Start(&req));
        }
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == 0 && k < 2) {
            char why[512];
            OK(Partita_Request_why(req, why, sizeof why));
            CHECK(strstr(why, "PARTITA_ADAPT=0") != NULL, "why: %s", why);
        }
        OK(MPI_Request_free(&req));
    }
    if (rank == 0)
        CHECK(count[0] == count[2] && cut[0] == cut[2] && count[1] == count[2] && cut[1] == cut[2],
              "adaptive without adaptation: %d%s and %d%s messages, model %d%s", count[0], cut[0] ? "c" : "",
              count[1], cut[1] ? "c" : "", count[2], cut[2] ? "c" : "");
    /* A bad info value: MPI_ERR_INFO_VALUE, naming the key. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request req;
    int rc = MPI_Psend_init(buf, 1, 1, MPI_DOUBLE, 1 - rank, 20, MPI_COMM_WORLD, bad, &req);
    ptest_expect_says(rc, MPI_ERR_INFO_VALUE, "partita_adapt=yes", "partita_adapt", "not 0 or 1", NULL);
    MPI_Info_free(&model), MPI_Info_free(&off), MPI_Info_free(&bad);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    opts o;
    parse(argc, argv, &o);
    int rank = ptest_pair_rank("adapt");
    if (!strcmp(o.what, "agree"))
        agree(&o, rank);
    else if (!strcmp(o.what, "fake"))
        fake(&o, rank);
    else if (!strcmp(o.what, "timer"))
        timer_layouts(&o, rank);
    else if (!strcmp(o.what, "perpart"))
        per_partition(&o, rank);
    else if (!strcmp(o.what, "split"))
        split(&o, rank);
    else
        static_plan(&o, rank);
    return ptest_finish("adapt");
}
