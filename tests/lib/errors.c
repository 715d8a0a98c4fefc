/* Erroneous use is reported through the communicator's error handler with a
 * fitting error class (run on 1 rank; pairs are self-sends on MPI_COMM_SELF).
 *   errors            every case with MPI_ERRORS_RETURN, checking the class
 *   errors fatal      marks a partition twice under the default handler:
 *                     the run must abort with partita's message */
#include "partita/partita.h"
#include "ptest.h"

#define PARTS 4

static int expect(int rc, int cls, const char *what)
{
    CHECK(ptest_class(rc) == cls, "%s: got class %d, expected %d", what, ptest_class(rc), cls);
    return rc;
}

/* MPI_Parrived on a partition that can never arrive: the error, within 10 s. */
static int parrived_until_error(MPI_Request r, int p)
{
    double until = MPI_Wtime() + 10;
    int flag = 0, rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && !flag && MPI_Wtime() < until)
        rc = MPI_Parrived(r, p, &flag);
    CHECK(!flag, "short send: receive partition %d, past the data sent, reported arrived", p);
    return rc;
}

/* The sender sends less than the receive holds (sent doubles of PARTS): the
 * data that comes is delivered, the partitions past it never arrive (their
 * MPI_Parrived fails rather than spin for ever) and the round completes
 * with MPI_ERR_OTHER, as in MPICH; before, every partition was reported
 * arrived and MPI_Wait succeeded. */
static void short_send(MPI_Comm c, int sent, const char *sent_says)
{
    double sbuf[PARTS], rbuf[PARTS] = { -1, -1, -1, -1 };
    MPI_Request s, r;
    OK(MPI_Precv_init(rbuf, PARTS, 1, MPI_DOUBLE, 0, 2, c, MPI_INFO_NULL, &r));
    OK(MPI_Psend_init(sbuf, sent ? sent : 1, sent ? 1 : 0, MPI_DOUBLE, 0, 2, c, MPI_INFO_NULL, &s));
    for (int round = 0; round < 2; round++) {
        OK(MPI_Start(&r));
        OK(MPI_Start(&s));
        for (int p = 0; p < sent; p++)
            sbuf[p] = 100 * round + p;
        OK(MPI_Pready_range(0, sent ? sent - 1 : 0, s));
        OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        for (int p = 0; p < sent; p++) {
            ptest_parrived_loop(r, p);
            CHECK(rbuf[p] == 100 * round + p, "short send: partition %d holds %g, expected %d", p, rbuf[p],
                  100 * round + p);
        }
        ptest_expect_says(parrived_until_error(r, sent), MPI_ERR_OTHER, "MPI_Parrived past a short send's data",
                          "MPI_Parrived", sent_says, "holds 32", NULL);
        MPI_Status st;
        ptest_expect_says(MPI_Wait(&r, &st), MPI_ERR_OTHER, "MPI_Wait of a short send", "MPI_Wait", sent_says,
                          "holds 32", NULL);
        int n = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &n);
        CHECK(n == sent, "short send: the status counts %d doubles, %d were sent", n, sent);
    }
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
}

/* NULL pointers and negative counts in the calls partita wraps: MPI_ERR_ARG
 * or MPI_ERR_COUNT naming the call and the argument, never a crash (each
 * of these segfaulted in the interposer before); an uncommitted datatype is
 * MPI_ERR_TYPE at init, as in MPICH. */
static void null_arguments(MPI_Comm c)
{
    double sbuf[PARTS] = { 0 }, rbuf[PARTS] = { 0 };
    MPI_Request s, r, bad;
    int flag, index, outcount, indices[2];
    ptest_expect_says(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 2, c, MPI_INFO_NULL, NULL), MPI_ERR_ARG,
                      "Psend_init with a NULL request", "MPI_Psend_init", "request is NULL", NULL);
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    ptest_expect_says(MPI_Precv_init(rbuf, 2, 1, pair, 0, 2, c, MPI_INFO_NULL, &bad), MPI_ERR_TYPE,
                      "an uncommitted datatype", "MPI_Precv_init", "not committed", NULL);
    OK(MPI_Type_free(&pair));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (strstr(lib, "MPICH")) /* a made-up handle: MPICH checks it, Open MPI's is a pointer */
        ptest_expect_says(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 2, c, (MPI_Info)0x12345, &bad), MPI_ERR_INFO,
                          "a made-up MPI_Info handle", "MPI_Psend_init", "not a valid MPI_Info", NULL);
    ptest_expect_says(MPI_Start(NULL), MPI_ERR_ARG, "Start(NULL)", "MPI_Start", "request is NULL", NULL);
    ptest_expect_says(MPI_Startall(-1, &bad), MPI_ERR_COUNT, "Startall, count -1", "MPI_Startall", "count = -1", NULL);
    ptest_expect_says(MPI_Startall(2, NULL), MPI_ERR_ARG, "Startall, NULL array", "MPI_Startall", "array_of_requests",
                      NULL);
    ptest_expect_says(MPI_Wait(NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "Wait(NULL)", "MPI_Wait", "request is NULL",
                      NULL);
    ptest_expect_says(MPI_Request_free(NULL), MPI_ERR_ARG, "Request_free(NULL)", "MPI_Request_free", NULL);
    ptest_expect_says(MPI_Cancel(NULL), MPI_ERR_ARG, "Cancel(NULL)", "MPI_Cancel", NULL);
    OK(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 2, c, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(rbuf, PARTS, 1, MPI_DOUBLE, 0, 2, c, MPI_INFO_NULL, &r));
    MPI_Request both[2] = { s, r };
    OK(MPI_Startall(2, both));
    ptest_expect_says(MPI_Test(&r, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "Test, NULL flag", "MPI_Test", "flag is NULL",
                      NULL);
    ptest_expect_says(MPI_Parrived(r, 1, NULL), MPI_ERR_ARG, "Parrived, NULL flag", "MPI_Parrived", "flag is NULL",
                      "partition 1", NULL);
    ptest_expect_says(MPI_Request_get_status(r, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "Request_get_status, NULL flag",
                      "MPI_Request_get_status", "flag", NULL);
    ptest_expect_says(MPI_Testall(2, both, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "Testall, NULL flag", "MPI_Testall",
                      "flag", NULL);
    ptest_expect_says(MPI_Testany(2, both, NULL, &flag, MPI_STATUS_IGNORE), MPI_ERR_ARG, "Testany, NULL index",
                      "MPI_Testany", "index", NULL);
    ptest_expect_says(MPI_Waitany(2, both, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "Waitany, NULL index", "MPI_Waitany",
                      "index", NULL);
    ptest_expect_says(MPI_Testsome(2, both, NULL, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "Testsome, NULL outcount",
                      "MPI_Testsome", "outcount", NULL);
    ptest_expect_says(MPI_Waitsome(2, both, &outcount, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG,
                      "Waitsome, NULL indices", "MPI_Waitsome", "array_of_indices", NULL);
    ptest_expect_says(MPI_Waitsome(-1, both, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_COUNT,
                      "Waitsome, count -1", "MPI_Waitsome", "count = -1", NULL);
    ptest_expect_says(MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "Waitall, NULL array", "MPI_Waitall",
                      "array_of_requests", NULL);
    ptest_expect_says(MPI_Pready_list(2, NULL, s), MPI_ERR_ARG, "Pready_list, NULL array", "MPI_Pready_list",
                      "array_of_partitions is NULL", "nothing was marked", NULL);
    OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE)); /* no requests, no array: nothing to do */
    /* partita's own introspection calls */
    ptest_expect_says(Partita_Request_plan(s, NULL, NULL), MPI_ERR_ARG, "Request_plan, NULL count",
                      "Partita_Request_plan", "transport_parts is NULL", NULL);
    ptest_expect_says(Partita_Request_runs(s, NULL), MPI_ERR_ARG, "Request_runs, NULL", "Partita_Request_runs", NULL);
    ptest_expect_says(Partita_Request_transport(s, NULL), MPI_ERR_ARG, "Request_transport, NULL", "name is NULL", NULL);
    ptest_expect_says(Partita_Request_layouts(s, 0, NULL, NULL, NULL, NULL), MPI_ERR_ARG, "Request_layouts, NULL",
                      "Partita_Request_layouts", "ncand is NULL", NULL);
    char why[8];
    ptest_expect_says(Partita_Request_why(s, NULL, 8), MPI_ERR_ARG, "Request_why, NULL text", "Partita_Request_why",
                      "text is NULL", NULL);
    ptest_expect_says(Partita_Request_why(s, why, 0), MPI_ERR_ARG, "Request_why, len 0", "Partita_Request_why",
                      "len = 0", NULL);
    ptest_expect_says(Partita_Request_why(MPI_REQUEST_NULL, why, 8), MPI_ERR_REQUEST, "Request_why, not partitioned",
                      "Partita_Request_why", "not a partitioned request", NULL);
    ptest_expect_says(Partita_Progress_thread_waits(NULL, NULL), MPI_ERR_ARG, "Progress_thread_waits, NULL",
                      "short_count is NULL", NULL);
    (void)index;
    for (int p = 0; p < PARTS; p++)
        sbuf[p] = p;
    OK(MPI_Pready_range(0, PARTS - 1, s)); /* the requests still work after every error above */
    OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    CHECK(rbuf[PARTS - 1] == PARTS - 1, "after the argument errors: partition %d holds %g", PARTS - 1,
          rbuf[PARTS - 1]);
    OK(MPI_Request_free(&both[0]));
    OK(MPI_Request_free(&both[1]));
}

/* Sizes no buffer can hold: partitions x count x type size past the address
 * space is MPI_ERR_COUNT at init. 2^30 partitions of 2^40 bytes wrapped to a
 * request of 0 bytes, whose planning divided by zero (SIGFPE). */
static void impossible_sizes(MPI_Comm c)
{
    static char buf[64];
    MPI_Request bad;
    ptest_expect_says(MPI_Psend_init(buf, 1 << 30, (MPI_Count)1 << 40, MPI_BYTE, 0, 3, c, MPI_INFO_NULL, &bad),
                      MPI_ERR_COUNT, "2^30 partitions of 2^40 bytes", "MPI_Psend_init", "1073741824 x 1099511627776",
                      "more than a buffer can hold", NULL);
    ptest_expect_says(MPI_Precv_init(buf, 2, (MPI_Count)1 << 62, MPI_INT, 0, 3, c, MPI_INFO_NULL, &bad), MPI_ERR_COUNT,
                      "2 partitions of 2^62 ints", "MPI_Precv_init", "of 4 bytes", NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double sbuf[PARTS], rbuf[PARTS];
    MPI_Request s, r, bad;
    MPI_Comm c = MPI_COMM_SELF;
    if (argc > 1 && !strcmp(argv[1], "fatal")) {
        OK(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &s));
        OK(MPI_Start(&s));
        MPI_Pready(1, s);
        MPI_Pready(1, s); /* must not return */
        printf("errors: a duplicate MPI_Pready returned under MPI_ERRORS_ARE_FATAL\n");
        MPI_Finalize();
        return 0;
    }
    if (argc > 1)
        ptest_usage("errors: the only argument is `fatal`");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    ptest_expect_says(MPI_Psend_init(sbuf, 0, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_ARG,
                      "send, 0 partitions", "MPI_Psend_init", "partitions = 0", "at least 1", NULL);
    /* A NULL buffer with data to move: MPI_ERR_BUFFER at init, as MPICH. */
    ptest_expect_says(MPI_Precv_init(NULL, PARTS, 256, MPI_INT, 0, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_BUFFER,
                      "NULL receive buffer", "MPI_Precv_init", "NULL", "count = 256", NULL);
    ptest_expect_says(MPI_Psend_init(NULL, PARTS, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_BUFFER,
                      "NULL send buffer", "MPI_Psend_init", NULL);
    MPI_Request empty[2];
    OK(MPI_Precv_init(NULL, PARTS, 0, MPI_INT, 0, 7, c, MPI_INFO_NULL, &empty[0])); /* count 0: nothing to move */
    OK(MPI_Psend_init(NULL, PARTS, 0, MPI_INT, 0, 7, c, MPI_INFO_NULL, &empty[1]));
    OK(MPI_Request_free(&empty[0]));
    OK(MPI_Request_free(&empty[1]));
    expect(MPI_Precv_init(rbuf, -1, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_ARG, "recv, -1 partitions");
    expect(MPI_Precv_init(rbuf, PARTS, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_RANK,
           "MPI_ANY_SOURCE");
    expect(MPI_Precv_init(rbuf, PARTS, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, c, MPI_INFO_NULL, &bad), MPI_ERR_TAG,
           "MPI_ANY_TAG");
    ptest_expect_says(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 5, 0, c, MPI_INFO_NULL, &bad), MPI_ERR_RANK,
                      "rank 5 of 1", "MPI_Psend_init", "rank 5", "[0, 1)", NULL);
    expect(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, -3, c, MPI_INFO_NULL, &bad), MPI_ERR_TAG, "negative tag");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "sometimes");
    expect(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 0, c, info, &bad), MPI_ERR_INFO_VALUE, "bad policy info");
    MPI_Info_free(&info);

    OK(MPI_Precv_init(rbuf, PARTS, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &r));
    OK(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 0, c, MPI_INFO_NULL, &s));
    ptest_expect_says(MPI_Pready(0, s), MPI_ERR_REQUEST, "Pready before Start", "MPI_Pready", "never started", NULL);
    OK(MPI_Start(&s));
    OK(MPI_Start(&r));
    ptest_expect_says(MPI_Start(&s), MPI_ERR_REQUEST, "Start on an active request", "MPI_Start", "active", "round 1",
                      NULL);
    ptest_expect_says(MPI_Pready(PARTS, s), MPI_ERR_ARG, "Pready index == partitions", "MPI_Pready", "partition 4",
                      "[0, 4)", "round 1", NULL);
    ptest_expect_says(MPI_Pready(-1, s), MPI_ERR_ARG, "Pready index -1", "MPI_Pready", "partition -1", "[0, 4)", NULL);
    ptest_expect_says(MPI_Pready_range(2, PARTS, s), MPI_ERR_ARG, "Pready_range past the end", "MPI_Pready_range",
                      "[2, 4]", "[0, 4)", NULL);
    int outside[2] = { 0, PARTS + 3 };
    ptest_expect_says(MPI_Pready_list(2, outside, s), MPI_ERR_ARG, "Pready_list with an entry out of range",
                      "MPI_Pready_list", "entry 1 of 2", "partition 7", "[0, 4)", "nothing was marked", NULL);
    ptest_expect_says(MPI_Pready_list(-1, outside, s), MPI_ERR_ARG, "Pready_list with a negative length",
                      "MPI_Pready_list", "length = -1", NULL);
    expect(MPI_Pready(0, r), MPI_ERR_REQUEST, "Pready on a receive request");
    int flag;
    ptest_expect_says(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "Parrived on a send request", "MPI_Parrived", NULL);
    ptest_expect_says(MPI_Parrived(r, PARTS, &flag), MPI_ERR_ARG, "Parrived index == partitions", "MPI_Parrived",
                      "partition 4", "[0, 4)", NULL);
    OK(MPI_Pready(0, s)); /* the list above marked nothing: partition 0 is still free */
    ptest_expect_says(MPI_Pready(0, s), MPI_ERR_ARG, "Pready twice in one round", "MPI_Pready", "partition 0",
                      "already marked", "round 1", NULL);
    int dup[2] = { 1, 1 }; /* not const: Open MPI 5 declares a non-const array */
    ptest_expect_says(MPI_Pready_list(2, dup, s), MPI_ERR_ARG, "Pready_list naming a partition twice",
                      "MPI_Pready_list", "entry 1 of 2", "entry 0", NULL);
    int late_dup[2] = { 1, 0 };
    ptest_expect_says(MPI_Pready_list(2, late_dup, s), MPI_ERR_ARG, "Pready_list with a marked entry last",
                      "MPI_Pready_list", "entry 1 of 2", "already marked", NULL);
    ptest_expect_says(MPI_Pready_range(0, 1, s), MPI_ERR_ARG, "Pready_range over a marked partition",
                      "MPI_Pready_range", "partition 0", NULL);
    OK(MPI_Pready(1, s)); /* none of the failed lists and ranges marked partition 1 */
    ptest_expect_says(MPI_Request_free(&s), MPI_ERR_REQUEST, "free an active send request", "MPI_Request_free", NULL);
    expect(MPI_Request_free(&r), MPI_ERR_REQUEST, "free an active receive request");
    expect(MPI_Cancel(&r), MPI_ERR_REQUEST, "cancel an active request");
    CHECK(s != MPI_REQUEST_NULL && r != MPI_REQUEST_NULL, "a failed free must keep the handle");

    /* Partitioned calls on an ordinary request. */
    int x = 0;
    MPI_Request plain;
    MPI_Irecv(&x, 1, MPI_INT, 0, 99, c, &plain);
    ptest_expect_says(MPI_Pready(0, plain), MPI_ERR_REQUEST, "Pready on an MPI_Irecv request", "MPI_Pready",
                      "not a partitioned request", NULL);
    expect(MPI_Parrived(plain, 0, &flag), MPI_ERR_REQUEST, "Parrived on an MPI_Irecv request");
    int y = 1;
    MPI_Send(&y, 1, MPI_INT, 0, 99, c);
    MPI_Wait(&plain, MPI_STATUS_IGNORE);

    /* The pair still works after all that. */
    for (int p = 2; p < PARTS; p++)
        OK(MPI_Pready(p, s));
    MPI_Request both[2] = { s, r };
    OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    MPI_Request freed = s;
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));

    /* MPI may give a freed handle to the next request: an ordinary one made
     * right after a free (MPICH reuses the handle) is not partitioned, even
     * to a thread that has just looked the freed one up. */
    MPI_Request later;
    OK(MPI_Send_init(&y, 1, MPI_INT, 0, 98, c, &later));
    CHECK(!ptest_is_partita(later), "an MPI_Send_init request made after a free is taken for partita's (%s handle)",
          later == freed ? "reused" : "new");
    expect(MPI_Pready(0, later), MPI_ERR_REQUEST, "Pready on an MPI_Send_init request made after a free");
    OK(MPI_Request_free(&later));

    /* The sender sends more than the receive holds: MPI_ERR_TRUNCATE at completion. */
    OK(MPI_Precv_init(rbuf, 2, 1, MPI_DOUBLE, 0, 1, c, MPI_INFO_NULL, &r));
    OK(MPI_Psend_init(sbuf, PARTS, 1, MPI_DOUBLE, 0, 1, c, MPI_INFO_NULL, &s));
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    for (int p = 0; p < PARTS; p++)
        sbuf[p] = 100 + p;
    rbuf[0] = rbuf[1] = -1;
    OK(MPI_Pready_range(0, PARTS - 1, s));
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    /* What MPI_Parrived reports is in the buffer: the first bytes, as a
     * point-to-point receive that truncates delivers them. */
    for (int p = 0; p < 2; p++) {
        ptest_parrived_loop(r, p);
        CHECK(rbuf[p] == 100 + p, "truncated receive: partition %d reported arrived holds %g, expected %d", p,
              rbuf[p], 100 + p);
    }
    MPI_Status st;
    ptest_expect_says(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE, "receive smaller than the message", "MPI_Wait", "32 bytes",
                      "holds 16", NULL);
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
    short_send(c, 2, "16 bytes");
    short_send(c, 0, "0 bytes");
    null_arguments(c);
    impossible_sizes(c);
    return ptest_finish("errors");
}
