/* Comparing time stamps of two ranks. On one node CLOCK_MONOTONIC is shared, so
 * the offset is 0 exactly. Across nodes the offset of the peer's clock is
 * estimated with ping-pongs (the exchange with the smallest round trip wins):
 *   offset = t_peer - (t_send + t_recv) / 2,  uncertainty = round_trip / 2. */
#ifndef PT_CLOCKSYNC_H
#define PT_CLOCKSYNC_H
#include <mpi.h>
#include <stdint.h>

typedef struct pt_clock_offset {
    int shared;          /* 1: same node, one clock */
    int64_t offset_ns;   /* peer clock minus our clock */
    int64_t uncert_ns;   /* half the best round trip (0 when shared) */
} pt_clock_offset;

/* Collective over the pair (me, peer): `leader` measures, the other answers.
 * same_node: whether both ranks run on one host. Both ranks get the result. */
void pt_clock_sync(MPI_Comm comm, int peer, int leader, int same_node, int rounds, pt_clock_offset *out);

#endif
