/* partita's progress thread leaves a receive to an application that polls it
 * (2 ranks, PARTITA_PROGRESS_THREAD=1). A timer request whose groups may be
 * split stays on the progress thread's list all round, and an application
 * polling MPI_Parrived in a loop holds the request's progress lock most of
 * the time. The thread used to take a lock it could not get as a reason to
 * look again at its regular interval (20 us): through a long round it
 * polled MPI every 20 us beside the application, which on a machine with no
 * idle core slowed large transfers (docs/library.md, "The progress
 * thread"). It must wait as for a polled receive (up to 1 ms).
 * Each round: the sender marks the second half of 1 MiB in 8 partitions,
 * sleeps LATE_MS with no MPI call, then marks the first half; the receiver
 * polls MPI_Parrived over every partition without pause and counts its
 * progress thread's context switches ("pt-progress", /proc/self/task/TID/
 * status) over the first WINDOW_MS of that. Waiting 1 ms at a time makes
 * about 200; polling at the regular interval made 304-847 on the 2-core VM
 * (a sleep of 20 us ends 30-55 us late there), more on a machine that wakes
 * faster. A second round is run when the first exceeds the bound (a passing
 * disturbance may spoil one; a thread that polls spoils both); a loaded
 * machine only makes the count smaller. Every byte is checked. Linux only (exit 77 elsewhere).
 * Usage: partita-test-quiet_receiver */
#include "ptest_threads.h"
#include "ptest_timer.h"

#define LATE_MS 400
#define WINDOW_MS 200
#define MAX_SWITCHES 250 /* 1.25 per ms: a 1 ms wait cannot make more than 1 */
#define TOTAL (1 << 20)
#define PARTS 8

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 1: poll every partition until all are in; the progress thread's
 * switches over the first WINDOW_MS go to made[] (their sum returned). */
static long poll_round(MPI_Request req, long progress, long made[2])
{
    unsigned char in[PARTS] = {0};
    long before[2], after[2] = {-1, -1};
    ptest_thread_switches(progress, before);
    double t0 = now_s();
    for (int left = PARTS; left;) {
        for (int p = 0; p < PARTS; p++) {
            int flag = 0;
            if (in[p])
                continue;
            OK(MPI_Parrived(req, p, &flag));
            if (flag)
                in[p] = 1, left--;
        }
        if (after[0] < 0 && now_s() - t0 >= WINDOW_MS * 1e-3)
            ptest_thread_switches(progress, after);
    }
    CHECK(after[0] >= 0, "the round ended before the %d ms window: the sender's %d ms pause did not hold it back",
          WINDOW_MS, LATE_MS);
    return ptest_switches_between(before, after, made);
}

/* One round; returns the receiver's count (rank 1) or 0 (rank 0). */
static long round_once(int rank, MPI_Request req, unsigned char *buf, int tag, long progress, long made[2])
{
    long total = 0;
    OK(MPI_Start(&req));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_Pready_range(PARTS / 2, PARTS - 1, req));
        ptest_pause_us(LATE_MS * 1000L);
        OK(MPI_Pready_range(0, PARTS / 2 - 1, req));
    } else {
        total = poll_round(req, progress, made);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 1)
        ptest_check_bytes(buf, TOTAL, tag, "timer, a laggard");
    return total;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("quiet-receiver");
    if (argc != 1)
        ptest_usage("usage: partita-test-quiet_receiver");
    ptest_require_proc_tasks(rank, "quiet-receiver");
    static unsigned char buf[TOTAL];
    const int tag = 9;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", "timer");
    MPI_Request req;
    if (rank == 0) {
        ptest_fill(buf, TOTAL, tag);
        OK(MPI_Psend_init(buf, PARTS, TOTAL / PARTS, MPI_BYTE, 1, tag, MPI_COMM_WORLD, info, &req));
    } else {
        OK(MPI_Precv_init(buf, PARTS, TOTAL / PARTS, MPI_BYTE, 0, tag, MPI_COMM_WORLD, info, &req));
    }
    long progress = rank == 1 ? ptest_thread_named_soon("pt-progress") : 1;
    CHECK(progress > 0, "rank %d: no thread named pt-progress (PARTITA_PROGRESS_THREAD=1)", rank);
    long made[2][2] = {{0, 0}, {0, 0}}, total[2] = {0, 0};
    int again = 1;
    for (int w = 0; w < 2 && again && progress > 0; w++) {
        if (rank == 1)
            memset(buf, 0, TOTAL);
        total[w] = round_once(rank, req, buf, tag, progress, made[w]);
        if (rank == 1)
            printf("quiet-receiver: round %d: the receiver's progress thread switched %ld times in %d ms of "
                   "MPI_Parrived polling (%ld voluntary, %ld not)\n",
                   w + 1, total[w], WINDOW_MS, made[w][0], made[w][1]);
        again = rank == 1 && total[w] > MAX_SWITCHES;
        MPI_Bcast(&again, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        long fewest = total[0] <= MAX_SWITCHES ? total[0] : total[1];
        CHECK(fewest >= 0 && fewest <= MAX_SWITCHES,
              "the receiver's progress thread switched %ld and %ld times in two windows of %d ms while the "
              "application polled MPI_Parrived (at most %d expected: it must not poll what the application polls)",
              total[0], total[1], WINDOW_MS, MAX_SWITCHES);
    }
    OK(MPI_Request_free(&req));
    MPI_Info_free(&info);
    return ptest_finish("quiet-receiver");
}
