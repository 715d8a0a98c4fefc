/* Which transport a request uses (2 ranks): the environment's choice
 * (PARTITA_TRANSPORT, given as the first argument: what the requests
 * without an info key must report), the info key partita_transport
 * overriding it per request, and the bytes arriving intact either way,
 * including a non-contiguous type on both sides.
 * Usage: partita-test-fabric-select EXPECTED [no-fabric-key]   (EXPECTED: mpi
 * or fabric; no-fabric-key leaves out the requests that ask for the fabric
 * by info key) */
#include "../lib/ptest.h"
#include "partita/partita.h"

#define PARTS 8
#define N 4096

/* One round of a vector type (every other double) or plain doubles. */
static void one_round(int rank, const char *info_transport, const char *expected, int strided)
{
    static double buf[2 * N];
    MPI_Info info = MPI_INFO_NULL;
    if (info_transport) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "partita_transport", info_transport);
    }
    MPI_Datatype type = MPI_DOUBLE;
    if (strided) {
        MPI_Type_vector(N / PARTS, 1, 2, MPI_DOUBLE, &type);
        MPI_Type_commit(&type);
    }
    int count = strided ? 1 : N / PARTS;
    MPI_Aint stride = strided ? 2 * N / PARTS - 1 : N / PARTS; /* doubles between partitions (the extent) */
    MPI_Request req;
    for (int i = 0; i < 2 * N; i++)
        buf[i] = rank == 0 ? i : -1;
    if (rank == 0) {
        OK(MPI_Psend_init(buf, PARTS, count, type, 1, 7, MPI_COMM_WORLD, info, &req));
        OK(MPI_Start(&req));
        for (int p = PARTS - 1; p >= 0; p--)
            OK(MPI_Pready(p, req));
    } else {
        OK(MPI_Precv_init(buf, PARTS, count, type, 0, 7, MPI_COMM_WORLD, info, &req));
        OK(MPI_Start(&req));
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    const char *name = "";
    OK(Partita_Request_transport(req, &name));
    CHECK(!strcmp(name, expected), "transport %s, expected %s (info %s)", name, expected,
          info_transport ? info_transport : "none");
    if (rank == 1) {
        int wrong = 0;
        for (int p = 0; p < PARTS; p++)
            for (int k = 0; k < N / PARTS; k++) {
                MPI_Aint at = p * stride + (strided ? 2 * k : k);
                wrong += buf[at] != (double)at;
            }
        CHECK(wrong == 0, "%d wrong elements (transport %s, %s)", wrong, name, strided ? "strided" : "contiguous");
    }
    OK(MPI_Request_free(&req));
    if (strided)
        MPI_Type_free(&type);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = ptest_pair_rank("fabric-select");
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "no-fabric-key")))
        ptest_usage("usage: partita-test-fabric-select mpi|fabric [no-fabric-key]");
    for (int strided = 0; strided < 2; strided++) {
        one_round(rank, NULL, argv[1], strided);
        one_round(rank, "mpi", "mpi", strided);
        if (argc == 2)
            one_round(rank, "fabric", "fabric", strided);
    }
    return ptest_finish("fabric-select");
}
