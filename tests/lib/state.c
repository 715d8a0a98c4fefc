/* Request state (2 ranks, rank 0 sends, rank 1 receives):
 *  - Test/Wait on an inactive request return at once with an empty status;
 *  - MPI_Parrived on an inactive or null request gives true, and stays false
 *    for a partition whose data the sender has not yet marked ready;
 *  - a send request never completes before all its partitions are ready
 *    (MPI_Test and MPI_Request_get_status keep saying no);
 *  - MPI_Request_get_status does not complete the request; Test on a
 *    completed (inactive) request keeps returning true;
 *  - mixed arrays: Testall/Waitany/Waitsome over partita and ordinary requests;
 *  - the handle stays valid after Wait and is nulled by Request_free;
 *  - many Start rounds on one request. */
#include "ptest.h"

#define PARTS 4
#define PER 256

static int empty_status(const MPI_Status *st)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("state");
    static double buf[PARTS * PER];
    MPI_Request req;
    MPI_Status st;
    int flag = 0, go = 0;
    ptest_pair_request(rank, buf, PARTS, PER, MPI_DOUBLE, 0, MPI_INFO_NULL, &req);

    /* Inactive: Test, Wait, Request_get_status and Parrived answer at once. */
    OK(MPI_Test(&req, &flag, &st));
    CHECK(flag && empty_status(&st), "Test on an inactive request: flag %d", flag);
    OK(MPI_Wait(&req, &st));
    CHECK(empty_status(&st), "Wait on an inactive request: status not empty");
    OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Request_get_status on an inactive request");
    if (rank == 1) {
        OK(MPI_Parrived(req, 0, &flag));
        CHECK(flag, "Parrived on an inactive request must be true");
    }
    OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "Parrived on MPI_REQUEST_NULL must be true");

    /* Round 1: stepwise, synchronised through ordinary messages on tag 9. */
    if (rank == 0) {
        for (int i = 0; i < PARTS * PER; i++)
            buf[i] = i;
        OK(MPI_Start(&req));
        MPI_Recv(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* receiver checked "nothing yet" */
        OK(MPI_Pready(0, req));
        MPI_Recv(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int p = 1; p < PARTS - 1; p++)
            OK(MPI_Pready(p, req));
        /* Not every partition is ready: the send must not complete, however long we ask. */
        for (int i = 0; i < 50; i++) {
            OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "send completed before its last partition was ready");
            OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "Request_get_status: send complete before its last partition was ready");
            if (flag)
                break;
            ptest_pause_us(1000);
        }
        OK(MPI_Pready(PARTS - 1, req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req != MPI_REQUEST_NULL, "Wait must keep a persistent handle");
    } else {
        memset(buf, 0, sizeof buf);
        OK(MPI_Start(&req));
        for (int i = 0; i < 20; i++) {
            OK(MPI_Parrived(req, 0, &flag));
            CHECK(!flag, "Parrived true before the sender marked anything");
            ptest_pause_us(1000);
        }
        MPI_Send(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
        for (int i = 0; i < 20; i++) {
            OK(MPI_Parrived(req, PARTS - 1, &flag));
            CHECK(!flag, "Parrived true for a partition not yet marked ready");
            ptest_pause_us(1000);
        }
        MPI_Send(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
        ptest_parrived_loop(req, 0);
        CHECK(buf[PER - 1] == PER - 1, "partition 0 reported before its data was there");
        /* Request_get_status reports completion but leaves the request active. */
        do
            OK(MPI_Request_get_status(req, &flag, &st));
        while (!flag);
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 0, "Request_get_status status: source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        OK(MPI_Test(&req, &flag, &st));
        CHECK(flag && st.MPI_SOURCE == 0, "Test after Request_get_status must complete with the real status");
        for (int i = 0; i < 3; i++) {
            OK(MPI_Test(&req, &flag, &st));
            CHECK(flag && empty_status(&st), "Test on a completed request must keep returning true");
        }
        int wrong = 0;
        for (int i = 0; i < PARTS * PER; i++)
            wrong += buf[i] != i;
        CHECK(wrong == 0, "round 1: %d wrong doubles", wrong);
    }

    /* Round 2: mixed arrays with an ordinary request. */
    int native_in = 0, native_out = 5;
    MPI_Request mix[3];
    if (rank == 0) {
        OK(MPI_Start(&req));
        OK(MPI_Pready_range(0, PARTS - 1, req));
        mix[0] = req;
        MPI_Isend(&native_out, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &mix[1]);
        mix[2] = MPI_REQUEST_NULL;
        int left = 2;
        while (left > 0) {
            int out = 0, idx[3];
            OK(MPI_Waitsome(3, mix, &out, idx, MPI_STATUSES_IGNORE));
            CHECK(out >= 1 && out != MPI_UNDEFINED, "Waitsome outcount %d", out);
            left -= out;
        }
        CHECK(mix[0] == req && mix[1] == MPI_REQUEST_NULL, "Waitsome: persistent handle kept, ordinary nulled");
        int out = 0, idx[3];
        OK(MPI_Waitsome(3, mix, &out, idx, MPI_STATUSES_IGNORE));
        CHECK(out == MPI_UNDEFINED, "Waitsome over inactive and null requests: outcount %d", out);
    } else {
        OK(MPI_Start(&req));
        mix[0] = req;
        MPI_Irecv(&native_in, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &mix[1]);
        flag = 0;
        while (!flag)
            OK(MPI_Testall(2, mix, &flag, MPI_STATUSES_IGNORE));
        CHECK(native_in == 5 && mix[1] == MPI_REQUEST_NULL, "Testall: ordinary receive");
        int idx = 0;
        OK(MPI_Waitany(1, &req, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == MPI_UNDEFINED, "Waitany on an inactive request: index %d", idx);
    }

    /* Many rounds on one request. */
    for (int round = 0; round < 200; round++) {
        if (rank == 0) {
            buf[0] = round;
            OK(MPI_Start(&req));
            for (int p = 0; p < PARTS; p++)
                OK(MPI_Pready(p, req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Start(&req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(buf[0] == round, "round %d: got %g", round, buf[0]);
            if (buf[0] != round)
                break;
        }
    }
    OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "Request_free must null the handle");
    return ptest_finish("state");
}
