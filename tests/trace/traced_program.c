/* A small partitioned program with a known event count, for the tracer tests.
 *   traced_program -p PARTITIONS -r ROUNDS -t THREADS [-m pready|range|list] [-n | -s]
 * Rank 0 sends PARTITIONS partitions of 16 doubles to rank 1 ROUNDS times (tag
 * 7); THREADS worker threads (kept for the whole run) mark partition p from
 * thread p % THREADS (with -n: new worker threads every round; with -s: new
 * ones every round, one after the other, each joined before the next
 * starts), the main thread starts and waits. Rank 1 polls
 * MPI_Parrived until every partition came, then waits. Around it: BARRIERS
 * (3) MPI_Barrier calls and one MPI_Send/MPI_Recv pair. The exit status is 3
 * when MPI_Finalize returns an error (the tracer could not write its file). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { COUNT = 16, TAG = 7, BARRIERS = 3 };

static int P = 8, R = 3, T = 2, new_threads, sequential;
static char mode[16] = "pready";
static MPI_Request request;
static pthread_barrier_t go, done;

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    for (int r = 0; r < (new_threads ? 1 : R); r++) {
        if (!sequential)
            pthread_barrier_wait(&go);
        if (strcmp(mode, "list") == 0) {
            int list[P], n = 0;
            for (int p = me; p < P; p += T)
                list[n++] = p;
            MPI_Pready_list(n, list, request);
        } else if (strcmp(mode, "range") == 0 && T == 1) {
            MPI_Pready_range(0, P - 1, request);
        } else {
            for (int p = me; p < P; p += T)
                MPI_Pready(p, request);
        }
        if (!sequential)
            pthread_barrier_wait(&done);
    }
    return NULL;
}

static void fail(const char *msg)
{
    fprintf(stderr, "traced_program: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int provided, rank, size, c;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    while ((c = getopt(argc, argv, "p:r:t:m:ns")) != -1) {
        switch (c) {
        case 'p': P = atoi(optarg); break;
        case 'r': R = atoi(optarg); break;
        case 't': T = atoi(optarg); break;
        case 'm': snprintf(mode, sizeof mode, "%s", optarg); break;
        case 'n': new_threads = 1; break;
        case 's': new_threads = sequential = 1; break;
        default: fail("usage: traced_program -p P -r R -t T [-m pready|range|list] [-n | -s]");
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || P < 1 || R < 1 || T < 1 || provided < MPI_THREAD_MULTIPLE)
        fail("needs 2 ranks, MPI_THREAD_MULTIPLE, and P, R, T >= 1");
    double *buf = calloc((size_t)P * COUNT, sizeof *buf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Psend_init(buf, P, COUNT, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
        pthread_t th[T];
        pthread_barrier_init(&go, NULL, (unsigned)T + 1);
        pthread_barrier_init(&done, NULL, (unsigned)T + 1);
        for (int r = 0; r < R; r++) {
            if (!sequential && (r == 0 || new_threads))
                for (int t = 0; t < T; t++)
                    pthread_create(&th[t], NULL, worker, (void *)(long)t);
            for (int i = 0; i < P * COUNT; i++)
                buf[i] = r * 1000.0 + i;
            MPI_Start(&request);
            if (sequential) {
                for (int t = 0; t < T; t++) {
                    pthread_create(&th[t], NULL, worker, (void *)(long)t);
                    pthread_join(th[t], NULL);
                }
                MPI_Wait(&request, MPI_STATUS_IGNORE);
                continue;
            }
            pthread_barrier_wait(&go);
            pthread_barrier_wait(&done);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            if (r == R - 1 || new_threads)
                for (int t = 0; t < T; t++)
                    pthread_join(th[t], NULL);
        }
    } else {
        MPI_Precv_init(buf, P, COUNT, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
        for (int r = 0; r < R; r++) {
            MPI_Start(&request);
            for (int left = P; left > 0;) {
                left = P;
                for (int p = 0; p < P; p++) {
                    int flag = 0;
                    MPI_Parrived(request, p, &flag);
                    left -= flag;
                }
            }
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            for (int i = 0; i < P * COUNT; i++)
                if (buf[i] != r * 1000.0 + i)
                    fail("wrong data received");
        }
    }
    MPI_Request_free(&request);
    int token = rank;
    if (rank == 0)
        MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    else
        MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    if (MPI_Finalize() != MPI_SUCCESS)
        return 3;
    if (rank == 0)
        printf("traced_program: done\n");
    return 0;
}
