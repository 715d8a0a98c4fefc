/* Counted sends: every payload byte a pattern program hands to MPI goes through
 * these wrappers, which add count * type size to a counter before the call. The
 * programs report these sums ("bytes counted"), never a formula. Persistent and
 * partitioned requests carry their size from init, and every start counts it
 * once (a partitioned start: the whole buffer, partitions x count). */
#ifndef PAT_COUNTED_H
#define PAT_COUNTED_H
#include <mpi.h>

typedef struct pat_counter {
    long long bytes;   /* payload bytes handed to send calls and send starts */
    long long sends;   /* send calls and send-request starts */
    long long preadys; /* MPI_Pready calls */
} pat_counter;

/* A send-side persistent or partitioned request and the bytes one start moves;
 * receive requests have bytes == 0 and are not counted. */
typedef struct pat_req {
    MPI_Request req;
    long long bytes;
    int partitioned;
} pat_req;

/* Thread-safe (the multiple-thread strategies send from every thread). */
void pat_count(pat_counter *c, long long bytes, long long sends, long long preadys);

void pat_isend(pat_counter *c, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *req);
void pat_send_init(pat_req *r, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
void pat_recv_init(pat_req *r, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm);
void pat_psend_init(pat_req *r, const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest,
                    int tag, MPI_Comm comm);
void pat_precv_init(pat_req *r, void *buf, int partitions, MPI_Count count, MPI_Datatype type, int src, int tag,
                    MPI_Comm comm);
/* Start n requests and count the sends: MPI_Startall for persistent requests
 * (scratch holds n handles), one MPI_Start each for partitioned ones, because
 * Open MPI 5.0's part/persist start reuses its outer loop counter in an inner
 * loop and leaves the other requests of a first MPI_Startall unstarted. */
void pat_startall(pat_counter *c, int n, pat_req *r, MPI_Request *scratch);
void pat_waitall(int n, pat_req *r, MPI_Request *scratch);
void pat_pready(pat_counter *c, int partition, pat_req *r);
/* Poll MPI_Parrived until the partition is in (yields the core between polls:
 * the tests run more threads than cores). */
void pat_wait_arrived(pat_req *r, int partition);
int pat_arrived(pat_req *r, int partition);
void pat_req_free(pat_req *r);

/* Request inits in an order that cannot deadlock when an init blocks until the
 * peer has initialised its side (Open MPI 5's partitioned init): sort by (lower
 * rank, higher rank, sender, tag, send first). The smallest key not yet done is
 * then the next init on both ranks concerned, so it always finds its peer. */
typedef struct pat_init_op { int peer, tag, is_send, index; } pat_init_op;
void pat_sort_inits(pat_init_op *ops, int n, int me);

#endif
