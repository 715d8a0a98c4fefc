/* MPI_Init returns with partita's progress thread running (1 rank,
 * PARTITA_PROGRESS_THREAD=1). The thread names itself "pt-progress" when it
 * first runs; right after MPI_Init_thread it must have. The process is
 * first confined to one CPU, so that the thread created in MPI_Init cannot
 * run beside the main thread, only instead of it: a library that returns
 * from MPI_Init at once leaves it unnamed (it had not run yet), which is
 * what a busy machine did to the groups stalled in a program's first rounds
 * (docs/library.md, "The progress thread's schedule"). Linux only
 * (sched_setaffinity, /proc). */
#include "ptest.h"
#include "ptest_threads.h"

#ifdef __linux__
#include <sched.h>

/* The first CPU this process may run on, alone. */
static void confine_to_one_cpu(void)
{
    cpu_set_t mask, one;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof one, &one);
            return;
        }
}
#endif

int main(int argc, char **argv)
{
#ifdef __linux__
    confine_to_one_cpu();
#endif
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifdef __linux__
    const char *wanted = getenv("PARTITA_PROGRESS_THREAD");
    CHECK(ptest_thread_named("pt-progress") > 0, "MPI_Init_thread returned before partita's progress thread first "
          "ran (no thread named pt-progress; PARTITA_PROGRESS_THREAD=%s)", wanted ? wanted : "unset");
    return ptest_finish("progress_started");
#else
    printf("progress_started: SKIPPED: needs Linux's sched_setaffinity and /proc/self/task\n");
    MPI_Finalize();
    return 77;
#endif
}
