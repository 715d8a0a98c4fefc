#include "mech_transfer.h"

#include <omp.h>
#include <stdlib.h>

#include "harness/clock.h"
#include "partita/config.h"

const char *const mech_kind_names[] = {"send", "isend", "persistent", "psend", NULL};

int mech_kind_available(mech_kind kind) { return kind != MECH_PSEND || PARTITA_NATIVE_PARTITIONED; }

static void *part_ptr(const mech_xfer *x, int p) { return x->buf + (size_t)p * x->part_bytes; }

int mech_xfer_init(mech_xfer *x, mech_kind kind, MPI_Comm comm, int sender, int peer, unsigned char *buf, int P,
                   size_t part_bytes)
{
    *x = (mech_xfer){.kind = kind, .comm = comm, .sender = sender, .peer = peer, .buf = buf, .P = P,
                     .part_bytes = part_bytes};
    int count = (int)part_bytes;
    if (kind != MECH_SEND) {
        x->reqs = malloc((size_t)(kind == MECH_PSEND ? 1 : P) * sizeof *x->reqs);
        if (!x->reqs)
            return -1;
    }
    if (kind == MECH_PERSISTENT)
        for (int p = 0; p < P; p++) {
            if (sender)
                MPI_Send_init(part_ptr(x, p), count, MPI_BYTE, peer, p, comm, &x->reqs[p]);
            else
                MPI_Recv_init(part_ptr(x, p), count, MPI_BYTE, peer, p, comm, &x->reqs[p]);
        }
#if PARTITA_NATIVE_PARTITIONED
    if (kind == MECH_PSEND) {
        if (sender)
            MPI_Psend_init(buf, P, (MPI_Count)part_bytes, MPI_BYTE, peer, 0, comm, MPI_INFO_NULL, x->reqs);
        else
            MPI_Precv_init(buf, P, (MPI_Count)part_bytes, MPI_BYTE, peer, 0, comm, MPI_INFO_NULL, x->reqs);
    }
#endif
    return 0;
}

void mech_xfer_free(mech_xfer *x)
{
    if (!x->reqs)
        return;
    if (x->kind == MECH_PERSISTENT)
        for (int p = 0; p < x->P; p++)
            MPI_Request_free(&x->reqs[p]);
    if (x->kind == MECH_PSEND)
        MPI_Request_free(x->reqs);
    free(x->reqs);
    x->reqs = NULL;
}

/* What one thread does for partition p. */
static void mark(mech_xfer *x, int p)
{
    int count = (int)x->part_bytes;
    switch (x->kind) {
    case MECH_SEND:
        if (x->sender)
            MPI_Send(part_ptr(x, p), count, MPI_BYTE, x->peer, p, x->comm);
        else
            MPI_Recv(part_ptr(x, p), count, MPI_BYTE, x->peer, p, x->comm, MPI_STATUS_IGNORE);
        break;
    case MECH_ISEND:
        if (x->sender)
            MPI_Isend(part_ptr(x, p), count, MPI_BYTE, x->peer, p, x->comm, &x->reqs[p]);
        else
            MPI_Irecv(part_ptr(x, p), count, MPI_BYTE, x->peer, p, x->comm, &x->reqs[p]);
        break;
    case MECH_PERSISTENT:
        MPI_Start(&x->reqs[p]);
        break;
    case MECH_PSEND:
#if PARTITA_NATIVE_PARTITIONED
        if (x->sender)
            MPI_Pready(p, x->reqs[0]);
#endif
        break;
    default: break;
    }
}

/* Thread t of T walks its share of every segment; returns when its last call returned. */
static int64_t walk(mech_xfer *x, const mech_schedule *s, int t, int T)
{
    for (int seg = 0; seg < s->nseg; seg++) {
        int lo, hi;
        mech_schedule_chunk(s, seg, t, T, &lo, &hi);
        for (int i = lo; i < hi; i++)
            mark(x, s->seq[i]);
    }
    return pt_now_ns();
}

int64_t mech_xfer_round(mech_xfer *x, const mech_schedule *s, int threads, int64_t *start_ns)
{
    *start_ns = pt_now_ns();
    if (x->kind == MECH_PSEND)
        MPI_Start(x->reqs);
    int64_t last = 0;
    if (x->kind != MECH_PSEND || x->sender) {
        /* No parallel region for one thread: its fork/join would be timed too. */
        if (threads == 1)
            last = walk(x, s, 0, 1);
        else {
#pragma omp parallel num_threads(threads) reduction(max : last)
            last = walk(x, s, omp_get_thread_num(), threads);
        }
    }
    if (x->kind == MECH_SEND)
        return last;
    if (x->kind == MECH_PSEND)
        MPI_Wait(x->reqs, MPI_STATUS_IGNORE);
    else
        MPI_Waitall(x->P, x->reqs, MPI_STATUSES_IGNORE);
    return pt_now_ns();
}
