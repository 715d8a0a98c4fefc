/* Writes that go in pieces (2 ranks, fabric transport; fabric_wire.h): a
 * write a little over the provider's inject size, up to a few times it, goes
 * as injected pieces, and the receiver counts them before it reports the
 * write. Partition sizes at the pieces' edges, in every round checked byte by
 * byte as soon as MPI_Parrived reports the partition (a write reported at its
 * first piece shows the rest of the round before) and again after MPI_Wait;
 * the sender marks the second half late, so the timer policy sends runs.
 * Then rounds of 1024 partitions of 12 KiB marked back to back: under none,
 * 1024 writes of three pieces each, so the provider's inject queue fills and
 * writes are resumed midway.
 * Usage: partita-test-fabric-pieces */
#include "fabric_round.h"

#define ROUNDS 3

static unsigned char byte_of(size_t i, int round) { return (unsigned char)(i * 7 + (size_t)round * 31 + 1); }

/* The bytes of partition p that are not round's: 0 when all are. */
static long wrong_in(const unsigned char *buf, size_t part, int p, int round)
{
    long wrong = 0;
    for (size_t i = (size_t)p * part; i < (size_t)(p + 1) * part; i++)
        wrong += buf[i] != byte_of(i, round);
    return wrong;
}

static void rounds_of(int rank, size_t part, int parts, long late_us)
{
    size_t bytes = part * (size_t)parts;
    unsigned char *buf = malloc(bytes);
    CHECK(buf != NULL, "out of memory for %zu bytes", bytes);
    MPI_Request req;
    if (rank == 0)
        OK(MPI_Psend_init(buf, parts, (MPI_Count)part, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        OK(MPI_Precv_init(buf, parts, (MPI_Count)part, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int round = 0; round < ROUNDS; round++) {
        if (rank == 0) {
            for (size_t i = 0; i < bytes; i++)
                buf[i] = byte_of(i, round);
            OK(MPI_Start(&req));
            for (int p = 0; p < parts; p++) {
                if (late_us && p == parts / 2)
                    ptest_pause_us(late_us);
                OK(MPI_Pready(p, req));
            }
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Start(&req));
            long early = 0;
            for (int p = 0; p < parts; p++) {
                int flag = 0;
                while (!flag)
                    OK(MPI_Parrived(req, p, &flag));
                early += wrong_in(buf, part, p, round);
            }
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            long wrong = 0;
            for (int p = 0; p < parts; p++)
                wrong += wrong_in(buf, part, p, round);
            CHECK(early == 0, "%d partitions of %zu bytes, round %d: %ld bytes not in yet when MPI_Parrived said so",
                  parts, part, round, early);
            CHECK(wrong == 0, "%d partitions of %zu bytes, round %d: %ld wrong bytes", parts, part, round, wrong);
        }
    }
    fabric_expect_transport(req);
    OK(MPI_Request_free(&req));
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-pieces");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-pieces");
    /* around shm's 4 KiB inject size: whole, 2, 3 and 4 pieces, and over the limit */
    static const size_t parts_of[] = {4095, 4096, 4097, 8192, 8193, 12289, 16384, 16385, 24576};
    for (size_t k = 0; k < sizeof parts_of / sizeof *parts_of; k++) {
        rounds_of(rank, parts_of[k], 1, 0);
        rounds_of(rank, parts_of[k], 8, 2000);
    }
    rounds_of(rank, 12288, 1024, 0); /* 3072 pieces marked back to back */
    return ptest_finish("fabric-pieces");
}
