/* MPI_THREAD_MULTIPLE (2 ranks): on the sender, THREADS threads mark their own
 * partitions with MPI_Pready_range while the main thread sits in MPI_Wait; on
 * the receiver, THREADS threads poll MPI_Parrived on their partitions and
 * check the data while the main thread sits in MPI_Wait. 16 send partitions,
 * 32 receive partitions, many rounds. */
#include <pthread.h>
#include <sched.h>

#include "ptest.h"

#define THREADS 4
#define SPARTS 16
#define RPARTS 32
#define PER 64 /* doubles per receive partition */
#define TOTAL (RPARTS * PER)
#define ROUNDS 30

static double buf[TOTAL];
static MPI_Request req;
static int rank, round_no;
static pthread_barrier_t start_line, finish_line;

static double value(int round, int i) { return round * 10000.0 + i; }

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&start_line);
        if (rank == 0) {
            int per_thread = SPARTS / THREADS, spp = TOTAL / SPARTS;
            for (int i = t * per_thread * spp; i < (t + 1) * per_thread * spp; i++)
                buf[i] = value(round_no, i);
            if (t % 2)
                sched_yield(); /* some threads late */
            OK(MPI_Pready_range(t * per_thread, (t + 1) * per_thread - 1, req));
        } else {
            int per_thread = RPARTS / THREADS;
            for (int p = t * per_thread; p < (t + 1) * per_thread; p++) {
                ptest_parrived_loop(req, p);
                for (int i = p * PER; i < (p + 1) * PER; i++)
                    CHECK(buf[i] == value(round_no, i), "round %d partition %d element %d: %g", round_no, p, i,
                          buf[i]);
            }
        }
        pthread_barrier_wait(&finish_line);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    rank = ptest_pair_rank("threads");
    if (provided < MPI_THREAD_MULTIPLE)
        ptest_usage("threads: the MPI library does not provide MPI_THREAD_MULTIPLE");
    if (rank == 0)
        OK(MPI_Psend_init(buf, SPARTS, TOTAL / SPARTS, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, RPARTS, PER, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_PARTITA(req);
    pthread_barrier_init(&start_line, NULL, THREADS + 1);
    pthread_barrier_init(&finish_line, NULL, THREADS + 1);
    pthread_t tid[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&tid[t], NULL, worker, (void *)t);
    for (int round = 0; round < ROUNDS; round++) {
        round_no = round;
        OK(MPI_Start(&req));
        pthread_barrier_wait(&start_line);
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* concurrently with the workers */
        pthread_barrier_wait(&finish_line);
        if (rank == 1) {
            int wrong = 0;
            for (int i = 0; i < TOTAL; i++)
                wrong += buf[i] != value(round, i);
            CHECK(wrong == 0, "round %d: %d wrong doubles after Wait", round, wrong);
        }
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);
    OK(MPI_Request_free(&req));
    return ptest_finish("threads");
}
