#include "counted.h"

#include <sched.h>
#include <stdlib.h>
#include <stdio.h>

#include "partita/config.h"

static long long type_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    MPI_Type_size(type, &size);
    return (long long)count * size;
}

void pat_count(pat_counter *c, long long bytes, long long sends, long long preadys)
{
#pragma omp atomic
    c->bytes += bytes;
#pragma omp atomic
    c->sends += sends;
#pragma omp atomic
    c->preadys += preadys;
}

void pat_isend(pat_counter *c, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *req)
{
    pat_count(c, type_bytes(count, type), 1, 0);
    MPI_Isend(buf, (int)count, type, dest, tag, comm, req);
}

void pat_send_init(pat_req *r, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    r->bytes = type_bytes(count, type);
    r->partitioned = 0;
    MPI_Send_init(buf, (int)count, type, dest, tag, comm, &r->req);
}

void pat_recv_init(pat_req *r, void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm)
{
    r->bytes = 0;
    r->partitioned = 0;
    MPI_Recv_init(buf, (int)count, type, src, tag, comm, &r->req);
}

void pat_startall(pat_counter *c, int n, pat_req *r, MPI_Request *scratch)
{
    long long bytes = 0, sends = 0;
    int partitioned = 0;
    for (int i = 0; i < n; i++) {
        scratch[i] = r[i].req;
        bytes += r[i].bytes;
        sends += r[i].bytes > 0;
        partitioned |= r[i].partitioned;
    }
    pat_count(c, bytes, sends, 0);
    if (partitioned)
        for (int i = 0; i < n; i++)
            MPI_Start(&scratch[i]);
    else if (n > 0)
        MPI_Startall(n, scratch);
    for (int i = 0; i < n; i++)
        r[i].req = scratch[i];
}

void pat_waitall(int n, pat_req *r, MPI_Request *scratch)
{
    for (int i = 0; i < n; i++)
        scratch[i] = r[i].req;
    if (n > 0)
        MPI_Waitall(n, scratch, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++)
        r[i].req = scratch[i];
}

#if PARTITA_NATIVE_PARTITIONED
void pat_psend_init(pat_req *r, const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest,
                    int tag, MPI_Comm comm)
{
    r->bytes = type_bytes(count, type) * partitions;
    r->partitioned = 1;
    MPI_Psend_init(buf, partitions, count, type, dest, tag, comm, MPI_INFO_NULL, &r->req);
}

void pat_precv_init(pat_req *r, void *buf, int partitions, MPI_Count count, MPI_Datatype type, int src, int tag,
                    MPI_Comm comm)
{
    r->bytes = 0;
    r->partitioned = 1;
    MPI_Precv_init(buf, partitions, count, type, src, tag, comm, MPI_INFO_NULL, &r->req);
}

void pat_pready(pat_counter *c, int partition, pat_req *r)
{
    pat_count(c, 0, 0, 1);
    MPI_Pready(partition, r->req);
}

int pat_arrived(pat_req *r, int partition)
{
    int flag = 0;
    MPI_Parrived(r->req, partition, &flag);
    return flag;
}

void pat_wait_arrived(pat_req *r, int partition)
{
    while (!pat_arrived(r, partition))
        sched_yield();
}

#else
/* Built against an MPI without partitioned communication: the programs refuse
 * the partitioned strategies before getting here. */
static void unavailable(void)
{
    fprintf(stderr, "partitioned communication is not available in this MPI library\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}
void pat_psend_init(pat_req *r, const void *b, int p, MPI_Count n, MPI_Datatype t, int d, int g, MPI_Comm c)
{
    (void)r, (void)b, (void)p, (void)n, (void)t, (void)d, (void)g, (void)c;
    unavailable();
}
void pat_precv_init(pat_req *r, void *b, int p, MPI_Count n, MPI_Datatype t, int s, int g, MPI_Comm c)
{
    (void)r, (void)b, (void)p, (void)n, (void)t, (void)s, (void)g, (void)c;
    unavailable();
}
void pat_pready(pat_counter *c, int partition, pat_req *r)
{
    (void)c, (void)partition, (void)r;
    unavailable();
}
int pat_arrived(pat_req *r, int partition)
{
    (void)r, (void)partition;
    unavailable();
    return 0;
}
void pat_wait_arrived(pat_req *r, int partition) { pat_arrived(r, partition); }
#endif

void pat_req_free(pat_req *r)
{
    if (r->req != MPI_REQUEST_NULL)
        MPI_Request_free(&r->req);
}

static int my_rank_for_sort; /* qsort has no context argument; set under a single caller */

static void init_key(const pat_init_op *o, int key[5])
{
    int me = my_rank_for_sort;
    key[0] = me < o->peer ? me : o->peer;
    key[1] = me < o->peer ? o->peer : me;
    key[2] = o->is_send ? me : o->peer;
    key[3] = o->tag;
    key[4] = !o->is_send;
}

static int init_cmp(const void *a, const void *b)
{
    int ka[5], kb[5];
    init_key(a, ka);
    init_key(b, kb);
    for (int i = 0; i < 5; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

void pat_sort_inits(pat_init_op *ops, int n, int me)
{
    my_rank_for_sort = me;
    qsort(ops, (size_t)n, sizeof *ops, init_cmp);
}
