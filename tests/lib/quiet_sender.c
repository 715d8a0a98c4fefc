/* partita's progress thread sleeps between its looks at a send request whose
 * stalled group it has flushed and which has nothing new to send (2 ranks,
 * PARTITA_PROGRESS_THREAD=1, the timer, built-in LogGP parameters). With
 * partitions so large that one sent alone would wait for MPI's rendezvous
 * handshake, a split group sends the rest of its partitions in runs
 * (PT_GROUP_RUNS): at its last mark, or when its marking stalls again, so the
 * thread keeps looking at it. Its next look used to be due at the flush's
 * time, already past, and the thread looked again at once, without a pause,
 * until the laggard came back: a core taken from the ranks for the whole
 * pause (at 8 MiB in 8 partitions the marking thread's 100 us sleep lasted
 * 0.5-2.4 ms in a quarter to half of the rounds on the 2-core VM). Each
 * round: the sender marks the second half of 4 MiB in 4 partitions, sleeps
 * LATE_MS with no MPI call and counts its progress thread's waits at the
 * regular interval (Partita_Progress_thread_waits) over WINDOW_MS of that,
 * starting SETTLE_MS in (the flush is long done), then marks the first half.
 * Before the fix: 0 waits in the window; after: 1392-2066 on the 2-core VM
 * (MPICH, Open MPI, ASan, TSan).
 * A thread that sleeps its interval (20 us) and looks makes hundreds; the
 * test asks for MIN_WAITS, one a millisecond. A second round is run when the
 * first has fewer (a passing disturbance may starve the thread in one).
 * Every byte is checked.
 * Usage: partita-test-quiet_sender */
#include <string.h>

#include "partita/partita.h"
#include "ptest_timer.h"

#define LATE_MS 150
#define SETTLE_MS 20
#define WINDOW_MS 100
#define MIN_WAITS 100

#define TOTAL (4 << 20)
#define PARTS 4

/* Rank 0: one round; returns the progress thread's waits at its regular
 * interval in the window of its pause. */
static long long send_round(MPI_Request req)
{
    long long before, after, long_waits;
    OK(MPI_Pready_range(PARTS / 2, PARTS - 1, req));
    ptest_pause_us(SETTLE_MS * 1000L);
    OK(Partita_Progress_thread_waits(&before, &long_waits));
    ptest_pause_us(WINDOW_MS * 1000L);
    OK(Partita_Progress_thread_waits(&after, &long_waits));
    ptest_pause_us((LATE_MS - SETTLE_MS - WINDOW_MS) * 1000L);
    OK(MPI_Pready_range(0, PARTS / 2 - 1, req));
    return after - before;
}

int main(int argc, char **argv)
{
    ptm_params params;
    char loggp[512];
    if (ptest_builtin_loggp("quiet-sender", &params, loggp, sizeof loggp))
        return 1;
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank_no_args("quiet-sender", "quiet_sender", argc);
    static unsigned char buf[TOTAL];
    const int tag = 11;
    MPI_Request req;
    ptest_timer_pair(buf, TOTAL, PARTS, tag, rank, "mpi", &req);
    long long waits[2] = { -1, -1 };
    int again = 1;
    for (int w = 0; w < 2 && again; w++) {
        if (rank == 1)
            memset(buf, 0, TOTAL);
        OK(MPI_Start(&req));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            waits[w] = send_round(req);
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == 1)
            ptest_check_bytes(buf, TOTAL, tag, "timer, a laggard, the rest in runs");
        if (rank == 0) {
            printf("quiet-sender: round %d: the sender's progress thread waited %lld times at its regular interval "
                   "in %d ms of its application's pause\n", w + 1, waits[w], WINDOW_MS);
            again = waits[w] < MIN_WAITS;
        }
        MPI_Bcast(&again, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        char why[1024] = "";
        OK(Partita_Request_why(req, why, sizeof why));
        CHECK(strstr(why, "in runs") != NULL,
              "the plan does not send a split group's rest in runs, the case this test is about: %s", why);
        long long most = waits[0] > waits[1] ? waits[0] : waits[1];
        CHECK(most >= MIN_WAITS,
              "the sender's progress thread waited %lld and %lld times at its regular interval in two windows of "
              "%d ms of its application's pause (at least %d expected): it looked at a flushed group that had "
              "nothing new without pausing",
              waits[0], waits[1], WINDOW_MS, MIN_WAITS);
    }
    OK(MPI_Request_free(&req));
    ptest_builtin_loggp_remove(loggp);
    return ptest_finish("quiet-sender");
}
