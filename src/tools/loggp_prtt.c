#include "loggp_prtt.h"

#include "clock.h"
#include "compute.h"
#include "stats.h"

enum { TAG_DATA = 71, TAG_REPLY = 72, TAG_GO = 73 };

/* The probe's quantile of n samples; sorts v. */
static double quantile_of(const loggp_probe *p, double *v, int n)
{
    pt_sort_doubles(v, (size_t)n);
    return pt_quantile_sorted(v, (size_t)n, p->quantile);
}

static void spin_us(double us)
{
    if (us > 0)
        pt_compute_until(PT_COMPUTE_SPIN, pt_now_ns() + (int64_t)(us * 1e3));
}

/* Server, nonblocking: the receives of the next round, posted ahead. */
static void post_receives(loggp_probe *p, int n, size_t s)
{
    for (int i = 0; i < n; i++)
        MPI_Irecv(p->buf + (size_t)i * p->slot, (int)s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &p->reqs[i]);
}

/* Client: n sends with d between them; returns the mean time inside the send calls.
 * Nonblocking sends are completed later by complete_sends(). */
static double send_all(loggp_probe *p, int n, double d_us, size_t s)
{
    int64_t in_send = 0;
    for (int i = 0; i < n; i++) {
        int64_t t = pt_now_ns();
        if (p->nonblocking)
            MPI_Isend(p->buf, (int)s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &p->reqs[i]);
        else
            MPI_Send(p->buf, (int)s, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
        in_send += pt_now_ns() - t;
        /* Busy wait: the client stays on its core, as a sender between sends. */
        if (i + 1 < n)
            spin_us(d_us);
    }
    return pt_ns_to_us(in_send) / n;
}

/* After the reply came the server has every message; completing the send
 * requests is bookkeeping the clock must not see (libpartita completes its
 * transport sends off the critical path too). */
static void complete_sends(loggp_probe *p, int n)
{
    if (p->nonblocking)
        MPI_Waitall(n, p->reqs, MPI_STATUSES_IGNORE);
}

/* Server, nonblocking: complete the receives by polling MPI_Test on each in
 * turn, as libpartita's receive progress does. (MPI_Waitall is no model of
 * it: MPICH 5 needs 0.65 us per 4 KiB message in Waitall against 0.24 us
 * polled this way, which misled the model about small messages.) */
static void test_in_order(loggp_probe *p, int n)
{
    for (int i = 0; i < n;) {
        int flag = 0;
        MPI_Test(&p->reqs[i], &flag, MPI_STATUS_IGNORE);
        i += flag;
    }
}

/* Nonblocking: the server posts the next round's receives after its reply,
 * off the timed path (n of them would otherwise add one MPI_Irecv each to
 * PRTT(n) and inflate the gap), then says "go"; the client waits for it
 * before starting the next round, so every message still finds its receive. */
static void next_round_posted(loggp_probe *p, int n, size_t s)
{
    if (p->rank == 1) {
        post_receives(p, n, s);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* One round; `more`: another round follows. */
static double one_prtt(loggp_probe *p, int n, double d_us, size_t s, int more, double *send_us)
{
    if (p->rank == 1) {
        if (p->nonblocking) {
            test_in_order(p, n);
        } else {
            for (int i = 0; i < n; i++)
                MPI_Recv(p->buf, (int)s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Send(p->buf, (int)s, MPI_BYTE, 0, TAG_REPLY, MPI_COMM_WORLD);
        if (p->nonblocking && more)
            next_round_posted(p, n, s);
        return 0;
    }
    int64_t t0 = pt_now_ns();
    *send_us = send_all(p, n, d_us, s);
    MPI_Recv(p->buf, (int)s, MPI_BYTE, 1, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t = pt_ns_to_us(pt_now_ns() - t0);
    complete_sends(p, n);
    if (p->nonblocking && more)
        next_round_posted(p, n, s);
    return t;
}

double loggp_prtt(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps, double *o_s)
{
    double send_us = 0;
    int rounds = warmup + reps;
    if (p->rank == 1 && p->nonblocking)
        post_receives(p, n, s);
    for (int r = 0; r < rounds; r++) {
        double t = one_prtt(p, n, d_us, s, r + 1 < rounds, &send_us);
        if (r >= warmup) {
            p->scratch[r - warmup] = t;
            p->scratch[reps + r - warmup] = send_us;
        }
    }
    if (o_s)
        *o_s = p->rank == 0 ? quantile_of(p, p->scratch + reps, reps) : 0.0;
    return p->rank == 0 ? quantile_of(p, p->scratch, reps) : 0.0;
}

/* One round of the receive probe; the server returns the mean time per receive. */
static double one_recv_round(loggp_probe *p, int n, double d_us, size_t s, int more)
{
    if (p->rank == 0) {
        send_all(p, n, 0.0, s);
        MPI_Recv(p->buf, 0, MPI_BYTE, 1, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        complete_sends(p, n);
        if (p->nonblocking && more)
            next_round_posted(p, n, s);
        return 0;
    }
    int64_t in_recv = 0;
    for (int i = 0; i < n; i++) {
        spin_us(d_us);
        int64_t t = pt_now_ns();
        if (p->nonblocking)
            for (int flag = 0; !flag;)
                MPI_Test(&p->reqs[i], &flag, MPI_STATUS_IGNORE);
        else
            MPI_Recv(p->buf, (int)s, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        in_recv += pt_now_ns() - t;
    }
    MPI_Send(p->buf, 0, MPI_BYTE, 0, TAG_REPLY, MPI_COMM_WORLD);
    if (p->nonblocking && more)
        next_round_posted(p, n, s);
    return pt_ns_to_us(in_recv) / n;
}

double loggp_recv_overhead(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps)
{
    int rounds = warmup + reps;
    if (p->rank == 1 && p->nonblocking)
        post_receives(p, n, s);
    for (int r = 0; r < rounds; r++) {
        double t = one_recv_round(p, n, d_us, s, r + 1 < rounds);
        if (r >= warmup)
            p->scratch[r - warmup] = t;
    }
    double o_r = p->rank == 1 ? quantile_of(p, p->scratch, reps) : 0.0;
    MPI_Bcast(&o_r, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return o_r;
}
