/* The parameterised round trip PRTT(n, d, s) of Hoefler, Lichei and Rehm between
 * rank 0 (client) and rank 1 (server), and the receive-overhead probe. Both
 * ranks call the same functions with the same arguments. How the messages
 * move is the probe's channel (loggp_channel.h). */
#ifndef PARTITA_LOGGP_PRTT_H
#define PARTITA_LOGGP_PRTT_H
#include <mpi.h>
#include <stddef.h>

#include "loggp_channel.h"

struct loggp_probe {
    int rank;           /* 0 client, 1 server */
    const loggp_channel *ch;
    void *ch_state;     /* the channel's own */
    char *buf;          /* client: the largest size; server: n times it (receives posted ahead) */
    size_t slot;        /* distance between the server's receive buffers */
    MPI_Request *reqs;  /* n requests */
    double *scratch;    /* at least 2 * reps doubles */
    double quantile;    /* statistic of the repetitions: 0.5 is the median */
};

/* The quantile (median by default) over reps (after warmup) of PRTT(n, d, s)
 * in microseconds, on rank 0; the server returns 0. o_s, if not NULL, receives
 * (rank 0) the quantile of the mean time spent inside the send call per
 * round: the send overhead timed directly. */
double loggp_prtt(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps, double *o_s);
/* The quantile of the time to receive one message of s bytes that is already
 * there (the server waits d before receiving each of n back-to-back
 * messages). Both ranks return it. */
double loggp_recv_overhead(loggp_probe *p, int n, double d_us, size_t s, int warmup, int reps);

#endif
