#include "loggp_prtt.h"

#include "clock.h"
#include "compute.h"
#include "stats.h"

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

/* Client: n sends with d between them; returns the mean time inside the send calls. */
static double send_all(loggp_probe *p, int n, double d_us, size_t s)
{
    int64_t in_send = 0;
    for (int i = 0; i < n; i++) {
        int64_t t = pt_now_ns();
        p->ch->send(p, i, s);
        in_send += pt_now_ns() - t;
        /* Busy wait: the client stays on its core, as a sender between sends. */
        if (i + 1 < n)
            spin_us(d_us);
    }
    return pt_ns_to_us(in_send) / n;
}

/* One round; `more`: another round follows. */
static double one_prtt(loggp_probe *p, int n, double d_us, size_t s, int more, double *send_us)
{
    if (p->rank == 1) {
        for (int i = 0; i < n; i++)
            p->ch->recv(p, i, s);
        p->ch->reply_send(p, s);
        if (more)
            p->ch->next_round(p, n, s);
        return 0;
    }
    int64_t t0 = pt_now_ns();
    *send_us = send_all(p, n, d_us, s);
    p->ch->reply_recv(p, s);
    double t = pt_ns_to_us(pt_now_ns() - t0);
    p->ch->complete_sends(p, n);
    if (more)
        p->ch->next_round(p, n, s);
    return t;
}

double loggp_prtt(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps, double *o_s)
{
    double send_us = 0;
    int rounds = warmup + reps;
    if (p->rank == 1)
        p->ch->prepare(p, n, s);
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
        p->ch->reply_recv(p, 0);
        p->ch->complete_sends(p, n);
        if (more)
            p->ch->next_round(p, n, s);
        return 0;
    }
    int64_t in_recv = 0;
    for (int i = 0; i < n; i++) {
        spin_us(d_us);
        int64_t t = pt_now_ns();
        p->ch->recv(p, i, s);
        in_recv += pt_now_ns() - t;
    }
    p->ch->reply_send(p, 0);
    if (more)
        p->ch->next_round(p, n, s);
    return pt_ns_to_us(in_recv) / n;
}

double loggp_recv_overhead(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps)
{
    int rounds = warmup + reps;
    if (p->rank == 1)
        p->ch->prepare(p, n, s);
    for (int r = 0; r < rounds; r++) {
        double t = one_recv_round(p, n, d_us, s, r + 1 < rounds);
        if (r >= warmup)
            p->scratch[r - warmup] = t;
    }
    double o_r = p->rank == 1 ? quantile_of(p, p->scratch, reps) : 0.0;
    MPI_Bcast(&o_r, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    return o_r;
}
