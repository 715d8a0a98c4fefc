#include "clocksync.h"

#include "clock.h"

enum { TAG_SYNC = 31001 };

void pt_clock_sync(MPI_Comm comm, int peer, int leader, int same_node, int rounds, pt_clock_offset *out)
{
    out->shared = same_node;
    out->offset_ns = 0;
    out->uncert_ns = 0;
    if (same_node)
        return;
    int64_t best_rtt = INT64_MAX, best_off = 0;
    for (int i = 0; i < rounds; i++) {
        if (leader) {
            int64_t t0 = pt_now_ns(), tp;
            MPI_Send(&t0, 1, MPI_INT64_T, peer, TAG_SYNC, comm);
            MPI_Recv(&tp, 1, MPI_INT64_T, peer, TAG_SYNC, comm, MPI_STATUS_IGNORE);
            int64_t t1 = pt_now_ns();
            if (t1 - t0 < best_rtt) {
                best_rtt = t1 - t0;
                best_off = tp - (t0 + t1) / 2;
            }
        } else {
            int64_t t0, tp;
            MPI_Recv(&t0, 1, MPI_INT64_T, peer, TAG_SYNC, comm, MPI_STATUS_IGNORE);
            tp = pt_now_ns();
            MPI_Send(&tp, 1, MPI_INT64_T, peer, TAG_SYNC, comm);
        }
    }
    int64_t res[2] = {best_off, best_rtt / 2};
    if (leader)
        MPI_Send(res, 2, MPI_INT64_T, peer, TAG_SYNC, comm);
    else {
        MPI_Recv(res, 2, MPI_INT64_T, peer, TAG_SYNC, comm, MPI_STATUS_IGNORE);
        res[0] = -res[0]; /* from the other side, the offset is reversed */
    }
    out->offset_ns = res[0];
    out->uncert_ns = res[1];
}
