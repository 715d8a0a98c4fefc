/* The four partitioned point-to-point metrics of one iteration, computed from
 * time stamps on one clock (docs/metrics.md has the definitions). Kept apart
 * from the MPI program so it can be tested on synthetic stamps. */
#ifndef PT_P2P_METRICS_H
#define PT_P2P_METRICS_H
#include <stddef.h>
#include <stdint.h>

typedef struct p2p_stamps {
    size_t bytes;           /* message size m */
    int send_parts, recv_parts, threads;
    const int64_t *ready;   /* [send_parts] start of each MPI_Pready call */
    const int64_t *compute_end; /* [threads] when each thread finished computing */
    const int64_t *arrival; /* [recv_parts] first MPI_Parrived == true */
    int64_t pt2pt_ns;       /* reference: single send, join to arrival */
} p2p_stamps;

typedef struct p2p_iteration {
    double t_part_us;       /* first Pready start -> last arrival */
    double t_last_us;       /* last Pready start -> last arrival */
    double t_pt2pt_us;      /* reference single send */
    double t_after_join_us; /* union of [ready, arrival] after the join */
    double t_before_join_us;
    double t_union_us;
    double overhead;        /* t_part / t_pt2pt */
    double perceived_bw;    /* MB/s = bytes / t_last_us */
    double availability;    /* percent: 100 * max(0, 1 - t_after_join / t_pt2pt) */
    double early_bird;      /* percent of the union before the join */
    double early_arrival;   /* percent of the message (receive partitions) arrived by the join */
} p2p_iteration;

/* Earliest ready stamp among the send partitions that hold bytes of receive
 * partition q (partitions split the message evenly). */
int64_t p2p_recv_ready(const p2p_stamps *s, int q);
void p2p_compute_iteration(const p2p_stamps *s, p2p_iteration *out);

#endif
