/* The MPI-4 large-count calls under the tracer (mpi4py 4 calls these instead of
 * the int-count ones). On 2 ranks, each rank makes exactly:
 *   point-to-point: MPI_Send_c or MPI_Recv_c, MPI_Isend_c or MPI_Irecv_c, MPI_Wait (3)
 *   collective:     MPI_Bcast_c, MPI_Allreduce_c                             (2)
 * and checks the data it receives (exit 2 with a message when wrong). */
#include <mpi.h>
#include <stdio.h>

enum { N = 1000 };

static void fail(const char *msg)
{
    fprintf(stderr, "large_count_program: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        fail("needs 2 ranks");
    static int a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = rank == 0 ? i : -1;
    MPI_Request request;
    if (rank == 0) {
        MPI_Send_c(a, N, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Isend_c(a, N, MPI_INT, 1, 2, MPI_COMM_WORLD, &request);
    } else {
        MPI_Recv_c(a, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv_c(b, N, MPI_INT, 0, 2, MPI_COMM_WORLD, &request);
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        if (a[i] != i || (rank == 1 && b[i] != i))
            fail("wrong data after MPI_Recv_c / MPI_Irecv_c");
    MPI_Count root_value = rank == 0 ? 42 : 0;
    MPI_Bcast_c(&root_value, 1, MPI_COUNT, 0, MPI_COMM_WORLD);
    long long one = 1, sum = 0;
    MPI_Allreduce_c(&one, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (root_value != 42 || sum != size)
        fail("wrong result of MPI_Bcast_c / MPI_Allreduce_c");
    if (MPI_Finalize() != MPI_SUCCESS)
        return 3;
    if (rank == 0)
        printf("large_count_program: done\n");
    return 0;
}
