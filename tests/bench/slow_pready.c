/* Preloaded under partita-p2p, in front of libpartita, by
 * tests/python/test_p2p.py: the MPI_Pready of partition
 * PARTITA_TEST_SLOW_PARTITION sleeps PARTITA_TEST_SLOW_US microseconds before
 * it marks, so the test knows which call took long and can check where the
 * benchmark's time stamps put the calls' starts. The call then goes to the
 * next MPI_Pready in the search order (libpartita's or the MPI library's); it
 * needs only mpi.h, not the MPI library. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int MPI_Pready(int partition, MPI_Request request)
{
    static int (*next)(int, MPI_Request);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "MPI_Pready"); /* POSIX's way to a function pointer */
    if (!next)
        abort(); /* nothing behind the stand-in: no test can run */
    const char *slow = getenv("PARTITA_TEST_SLOW_PARTITION"), *us = getenv("PARTITA_TEST_SLOW_US");
    if (slow && us && partition == atoi(slow)) {
        long v = atol(us);
        struct timespec left = {v / 1000000, (v % 1000000) * 1000};
        while (nanosleep(&left, &left) != 0)
            ;
    }
    return next(partition, request);
}
