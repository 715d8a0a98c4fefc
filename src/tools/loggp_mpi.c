/* The MPI channels of the PRTT probe (loggp_channel.h). */
#include <mpi.h>

#include "loggp_prtt.h"

enum { TAG_DATA = 71, TAG_REPLY = 72, TAG_GO = 73 };

static void send_blocking(loggp_probe *p, int i, size_t s)
{
    (void)i;
    MPI_Send(p->buf, (int)s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
}

static void send_nonblocking(loggp_probe *p, int i, size_t s)
{
    MPI_Isend(p->buf, (int)s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &p->reqs[i]);
}

static void nothing(loggp_probe *p, int n)
{
    (void)p, (void)n;
}

/* After the reply came the server has every message; completing the send
 * requests is bookkeeping the clock must not see (libpartita completes its
 * transport sends off the critical path too). */
static void wait_sends(loggp_probe *p, int n)
{
    MPI_Waitall(n, p->reqs, MPI_STATUSES_IGNORE);
}

static void prepare_nothing(loggp_probe *p, int n, size_t s)
{
    (void)p, (void)n, (void)s;
}

static void post_receives(loggp_probe *p, int n, size_t s)
{
    for (int i = 0; i < n; i++)
        MPI_Irecv(p->buf + (size_t)i * p->slot, (int)s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &p->reqs[i]);
}

static void recv_blocking(loggp_probe *p, int i, size_t s)
{
    (void)i;
    MPI_Recv(p->buf, (int)s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Polling MPI_Test on each receive in turn, as libpartita's receive progress
 * does. (MPI_Waitall is no model of it: MPICH 5 needs 0.65 us per 4 KiB
 * message in Waitall against 0.24 us polled this way, which misled the model
 * about small messages.) */
static void recv_polled(loggp_probe *p, int i, size_t s)
{
    (void)s;
    for (int flag = 0; !flag;)
        MPI_Test(&p->reqs[i], &flag, MPI_STATUS_IGNORE);
}

static void reply_send(loggp_probe *p, size_t s)
{
    MPI_Send(p->buf, (int)s, MPI_BYTE, 0, TAG_REPLY, MPI_COMM_WORLD);
}

static void reply_recv(loggp_probe *p, size_t s)
{
    MPI_Recv(p->buf, (int)s, MPI_BYTE, 1, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* The server posts the next round's receives after its reply, off the timed
 * path (n of them would otherwise add one MPI_Irecv each to PRTT(n) and
 * inflate the gap), then says "go"; the client waits for it before starting
 * the next round, so every message still finds its receive. */
static void next_round_posted(loggp_probe *p, int n, size_t s)
{
    if (p->rank == 1) {
        post_receives(p, n, s);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

const loggp_channel loggp_mpi_send = {
    .name = "send", .send = send_blocking, .complete_sends = nothing, .prepare = prepare_nothing,
    .recv = recv_blocking, .reply_send = reply_send, .reply_recv = reply_recv, .next_round = prepare_nothing};

const loggp_channel loggp_mpi_isend = {
    .name = "isend", .send = send_nonblocking, .complete_sends = wait_sends, .prepare = post_receives,
    .recv = recv_polled, .reply_send = reply_send, .reply_recv = reply_recv, .next_round = next_round_posted};
