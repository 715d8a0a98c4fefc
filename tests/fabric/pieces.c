/* Writes that go in pieces (2 ranks, fabric transport; fabric_wire.h): a
 * write a little over the provider's inject size, up to a few times it, goes
 * as injected pieces, and the receiver counts them before it reports the
 * write. Partition sizes at the pieces' edges, in every round checked byte by
 * byte as soon as MPI_Parrived reports the partition (a write reported at its
 * first piece shows the rest of the round before) and again after MPI_Wait;
 * the sender marks the second half late, so the timer policy sends runs.
 * Then rounds of 1024 partitions of 12 KiB marked back to back: under none,
 * 1024 writes of three pieces each, so the provider's inject queue fills and
 * writes are resumed midway. The sender's Partita_Request_why counts the
 * writes that went in pieces: a message in at most 4 (none's messages of a
 * partition too), a run of the timer's late partitions in up to 32.
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

/* The sender's piece size and its writes in pieces so far, from its why
 * text; piece 0 when every write goes whole. */
static void pieces_of(MPI_Request req, size_t *piece, long *pieced)
{
    char why[2048];
    OK(Partita_Request_why(req, why, sizeof why));
    *piece = 0, *pieced = 0;
    if (strstr(why, "every write goes whole"))
        return;
    const char *a = strstr(why, "a write over "), *b = strstr(why, " writes of this layout went in pieces");
    CHECK(a && b, "no pieces in the why text: %s", why);
    if (!a || !b) {
        *pieced = -1; /* matches no expectation */
        return;
    }
    const char *n = b;
    while (n > why && n[-1] >= '0' && n[-1] <= '9')
        n--;
    *piece = (size_t)strtoull(a + strlen("a write over "), NULL, 10);
    *pieced = strtol(n, NULL, 10);
}

/* What the sender's writes in pieces must be after ROUNDS rounds. */
static void expect_pieced(MPI_Request req, size_t part, int parts, long late_us)
{
    size_t piece;
    long pieced;
    pieces_of(req, &piece, &pieced);
    const char *policy = getenv("PARTITA_POLICY");
    int run_fits = piece && part > piece && part <= 32 * piece, fits = piece && part > piece && part <= 4 * piece;
    if (parts == 1) /* one message */
        CHECK(pieced == (fits ? ROUNDS : 0), "1 partition of %zu bytes, pieces of %zu: %ld writes in pieces, not %d",
              part, piece, pieced, fits ? ROUNDS : 0);
    else if (policy && !strcmp(policy, "none")) /* a message per partition */
        CHECK(pieced == (fits ? (long)parts * ROUNDS : 0),
              "none, %d partitions of %zu bytes, pieces of %zu: %ld writes in pieces, not %ld", parts, part, piece,
              pieced, fits ? (long)parts * ROUNDS : 0L);
    else if (policy && !strcmp(policy, "timer") && late_us && run_fits)
        CHECK(pieced > 0, "timer, %d partitions of %zu bytes, half late: no late run went in pieces of %zu", parts,
              part, piece);
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
    if (rank == 0)
        expect_pieced(req, part, parts, late_us);
    OK(MPI_Request_free(&req));
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-pieces");
    if (argc != 1)
        ptest_usage("usage: partita-test-fabric-pieces");
    /* around shm's 4 KiB inject size: whole, 2, 3 and 4 pieces, over the
     * limit of a message, and around a run's 32 */
    static const size_t parts_of[] = {4095, 4096, 4097, 8192, 8193, 12289, 16384, 16385, 24576, 32768, 131072, 131073};
    for (size_t k = 0; k < sizeof parts_of / sizeof *parts_of; k++) {
        rounds_of(rank, parts_of[k], 1, 0);
        rounds_of(rank, parts_of[k], 8, 2000);
    }
    rounds_of(rank, 12288, 1024, 0); /* 3072 pieces marked back to back */
    return ptest_finish("fabric-pieces");
}
