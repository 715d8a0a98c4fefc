/* Aggregation policies chosen per request through MPI_Info (2 ranks): the
 * sender's transport message count for each policy, the receiver learning it
 * from the set-up message, and correct data under each. Then the timer policy
 * with laggards: seven (then six) of eight partitions are ready, the sender's
 * MPI_Test lets delta pass and must send them as runs before the rest is
 * ready, the receiver must see them arrive before a laggard is marked, and
 * the laggards, sent alone on their late tags, must land in place (also when
 * one receive partition holds a run's data and a laggard's).
 *   policies            as above
 *   policies thread     the same, but the sender makes no MPI call while it
 *                       waits: the progress thread (PARTITA_PROGRESS_THREAD=1)
 *                       must send the runs
 *   policies table N    the table policy must use N messages (PARTITA_TUNING) */
#include "partita/model.h"
#include "partita/partita.h"
#include "ptest.h"

#define PARTS 8
#define PER 1024

typedef struct pcase {
    const char *policy, *key, *value;
    int expect; /* transport messages; 0: anything the planner may pick (groups or cut partitions); -1: `none`'s */
} pcase;

static const pcase cases[] = {
    { "none", NULL, NULL, -1 }, /* none_messages() */
    { "bulk", NULL, NULL, 1 },
    { "fixed", "partita_transport_parts", "3", 3 },
    { "fixed", "partita_transport_parts", "96", 96 },  /* every partition cut in 12 pieces */
    { "fixed", "partita_transport_parts", "100", 100 }, /* pieces that straddle partition boundaries */
    { "fixed", "partita_transport_parts", "9", 9 },     /* 9 pieces of 8 partitions: all but two straddle */
    { "static", "partita_min_bytes", "20000", 3 }, /* 8 KiB partitions: 3 per group, 3 groups */
    { "static", "partita_min_bytes", "1", PARTS },
    { "model", NULL, NULL, 0 },
    { "timer", "partita_delta_us", "5", 0 },
    { "table", NULL, NULL, 0 },
};

/* Most messages a planner may pick here: a group per partition, a k-way cut
 * of each partition, or an eager cut within the burst of the parameters the
 * library loads (its file, else the built-in set of this MPI). */
static int most_messages(void)
{
    ptm_params p;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    ptm_params_load_for(&p, version);
    int most = PARTS > PTM_MAX_CUT_MESSAGES ? PARTS : PTM_MAX_CUT_MESSAGES;
    return most > ptm_max_eager_messages(&p) ? most : ptm_max_eager_messages(&p);
}

/* `none`'s transport messages: one per partition, over MPI in k eager pieces
 * each when a partition (8 KiB here) is past the parameters' eager limit,
 * at most 8 a partition and 192 in all (docs/library.md, "Late partitions
 * in eager pieces"); over the fabric one per partition. */
static int none_messages(MPI_Request req)
{
    const char *tp = NULL;
    OK(Partita_Request_transport(req, &tp));
    if (!tp || strcmp(tp, "mpi"))
        return PARTS;
    ptm_params p;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    ptm_params_load_for(&p, version);
    size_t eager = ptm_eager_limit(&p), bytes = PER * sizeof(double);
    size_t k = eager && bytes > eager ? (bytes + eager - 1) / eager : 1;
    return k <= 8 && k * PARTS <= 192 ? (int)k * PARTS : PARTS;
}

static double value(int c, int i) { return c * 100000.0 + i; }

static MPI_Info info_for(const pcase *pc)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", pc->policy);
    if (pc->key)
        MPI_Info_set(info, pc->key, pc->value);
    return info;
}

/* Is send partition p one of this round's laggards? */
static int is_laggard(int round, int nlag, int p)
{
    return p == round % PARTS || (nlag > 1 && p == (round + 3) % PARTS);
}

/* Does group g (groups of `per` consecutive partitions) hold a laggard? */
static int group_lags(int round, int nlag, int g, int per)
{
    for (int p = g * per; p < (g + 1) * per; p++)
        if (is_laggard(round, nlag, p))
            return 1;
    return 0;
}

/* Timer policy, 4 rounds, the send split into `groups` groups: every send
 * partition but nlag laggards is marked, delta passes, and the ready ones
 * must reach the receiver (qparts receive partitions) before any laggard is
 * marked; then the laggards go, last first. With several groups, those
 * without a laggard are marked first and go whole; a pause with no MPI call
 * lets the progress thread find nothing begun and stop watching, and the
 * marks that begin a laggard's group must make it watch again. */
static void timer_laggards(int rank, int by_thread, int nlag, int qparts, int groups, double *buf)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    MPI_Info_set(info, "partita_delta_us", "0");
    char ngroups[16];
    snprintf(ngroups, sizeof ngroups, "%d", groups);
    MPI_Info_set(info, "partita_transport_parts", ngroups);
    MPI_Request req;
    int tag = 50 + 10 * groups + nlag, qper = PARTS * PER / qparts, per = PARTS / groups;
    for (int round = 0; round < 4; round++) {
        if (rank == 0) {
            if (round == 0)
                OK(MPI_Psend_init(buf, PARTS, PER, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, info, &req));
            for (int i = 0; i < PARTS * PER; i++)
                buf[i] = value(round, i);
            OK(MPI_Start(&req));
            for (int lagging = 0; lagging < 2; lagging++) {
                for (int p = 0; p < PARTS; p++)
                    if (group_lags(round, nlag, p / per, per) == lagging && !is_laggard(round, nlag, p))
                        OK(MPI_Pready(p, req));
                if (!lagging && groups > 1)
                    ptest_pause_us(5000);
            }
            int flag = 0, runs = -1;
            if (by_thread) {
                /* No MPI call here: Partita_Request_runs only reads a counter. */
                for (int waited = 0; waited < 10000; waited++) {
                    OK(Partita_Request_runs(req, &runs));
                    if (runs >= 1)
                        break;
                    ptest_pause_us(1000);
                }
            } else {
                ptest_pause_us(1000);
                OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE)); /* delta has passed: the ready runs go now */
                CHECK(!flag, "timer: send complete without its laggard");
            }
            OK(Partita_Request_runs(req, &runs));
            int n = 0;
            OK(Partita_Request_plan(req, &n, NULL));
            if (n < PARTS)
                CHECK(runs >= 1, "timer: round %d, %d groups, no run sent before the laggards", round, n);
            /* The receiver sees the runs before any laggard is even ready. */
            MPI_Recv(&flag, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int p = PARTS - 1; p >= 0; p--)
                if (is_laggard(round, nlag, p))
                    OK(MPI_Pready(p, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            if (round == 0)
                OK(MPI_Precv_init(buf, qparts, qper, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            memset(buf, 0, PARTS * PER * sizeof *buf);
            OK(MPI_Start(&req));
            int spq = PARTS / qparts, flag = 0;
            for (int q = 0; q < qparts; q++) {
                int held = 0;
                for (int p = q * spq; p < (q + 1) * spq; p++)
                    held |= is_laggard(round, nlag, p);
                if (held)
                    continue;
                ptest_parrived_loop(req, q); /* in a run: before the laggards are marked */
                CHECK(buf[q * qper] == value(round, q * qper) && buf[(q + 1) * qper - 1] == value(round, (q + 1) * qper - 1),
                      "timer round %d: partition %d reported early", round, q);
            }
            for (int p = 0; p < PARTS; p++) {
                if (!is_laggard(round, nlag, p))
                    continue;
                OK(MPI_Parrived(req, p / spq, &flag));
                CHECK(!flag, "timer round %d: partition %d reported before its laggard was marked", round, p / spq);
            }
            MPI_Send(&flag, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
            for (int q = 0; q < qparts; q++)
                ptest_parrived_loop(req, q);
            int wrong = 0;
            for (int i = 0; i < PARTS * PER; i++)
                wrong += buf[i] != value(round, i);
            CHECK(wrong == 0, "timer round %d, %d laggards: %d wrong doubles", round, nlag, wrong);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    }
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int by_thread = argc > 1 && !strcmp(argv[1], "thread");
    int table_expect = 0;
    if (argc > 2 && !strcmp(argv[1], "table"))
        table_expect = atoi(argv[2]);
    else if (argc > 1 && !by_thread)
        ptest_usage("policies: arguments are `thread` or `table N`");
    if (argc > 2 && table_expect < 1)
        ptest_usage("policies: `table N` needs N >= 1");
    int rank = ptest_pair_rank("policies");
    static double buf[PARTS * PER];
    int most = most_messages();
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < ncases; c++) {
        MPI_Request req;
        MPI_Info info = info_for(&cases[c]);
        int n = -2;
        const char *name = NULL;
        if (rank == 0) {
            OK(MPI_Psend_init(buf, PARTS, PER, MPI_DOUBLE, 1, c, MPI_COMM_WORLD, info, &req));
            OK(Partita_Request_plan(req, &n, &name));
            CHECK(!strcmp(name, cases[c].policy), "case %d: policy %s", c, name);
            int expect = cases[c].expect < 0 ? none_messages(req) : cases[c].expect;
            if (!strcmp(cases[c].policy, "table") && table_expect)
                expect = table_expect;
            if (expect)
                CHECK(n == expect, "%s: %d transport messages, expected %d", cases[c].policy, n, expect);
            else
                CHECK(n >= 1 && n <= most, "%s: %d transport messages, at most %d", cases[c].policy, n, most);
            if (cases[c].expect < 0) { /* none: the why text names the pieces when there are some */
                char why[1024] = "", says[64];
                OK(Partita_Request_why(req, why, sizeof why));
                snprintf(says, sizeof says, "each partition in %d eager pieces", expect / PARTS);
                CHECK((strstr(why, says) != NULL) == (expect > PARTS), "none: why says '%s'", why);
            }
            for (int i = 0; i < PARTS * PER; i++)
                buf[i] = value(c, i);
            OK(MPI_Start(&req));
            for (int p = 0; p < PARTS; p++)
                OK(MPI_Pready(p, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            MPI_Send(&n, 1, MPI_INT, 1, 1000, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, sizeof buf);
            OK(MPI_Precv_init(buf, PARTS / 2, 2 * PER, MPI_DOUBLE, 0, c, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            OK(MPI_Start(&req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            int sent = 0, wrong = 0;
            MPI_Recv(&sent, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            OK(Partita_Request_plan(req, &n, &name));
            CHECK(n == sent && !strcmp(name, cases[c].policy), "receiver learnt %d (%s), sender uses %d (%s)", n,
                  name, sent, cases[c].policy);
            for (int i = 0; i < PARTS * PER; i++)
                wrong += buf[i] != value(c, i);
            CHECK(wrong == 0, "%s: %d wrong doubles", cases[c].policy, wrong);
        }
        MPI_Info_free(&info);
        OK(MPI_Request_free(&req));
    }

    /* Timer with laggards, several rounds: one laggard, then two marked in
     * reverse order with receive partitions that each span two send
     * partitions (a run and a late partition may fill one), then one
     * laggard in two groups, the other group gone whole before it. */
    timer_laggards(rank, by_thread, 1, PARTS, 1, buf);
    timer_laggards(rank, by_thread, 2, PARTS / 2, 1, buf);
    timer_laggards(rank, by_thread, 1, PARTS, 2, buf);
    return ptest_finish("policies");
}
