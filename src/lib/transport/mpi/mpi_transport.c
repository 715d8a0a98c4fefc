/* The MPI transport's operations and its process-wide state: the data
 * communicator and the tag ranges on it. */
#include "transport/mpi/mpi_transport.h"

#include <stdio.h>

#include "transport/mpi/tag_alloc.h"

static MPI_Comm data_comm = MPI_COMM_NULL;

MPI_Comm pt_data_comm(void) { return data_comm; }

static int mpi_connect(char *err, size_t errlen)
{
    int rc = PMPI_Comm_dup(MPI_COMM_WORLD, &data_comm);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "could not duplicate MPI_COMM_WORLD");
        return rc;
    }
    PMPI_Comm_set_errhandler(data_comm, MPI_ERRORS_RETURN);
    int *ub = NULL, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    pt_tags_init((flag && ub) ? *ub : 32767);
    return MPI_SUCCESS;
}

static void mpi_disconnect(void)
{
    if (data_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&data_comm);
    pt_tags_finalize();
}

const pt_transport_ops pt_mpi_transport = {
    .name = "mpi",
    .init = mpi_connect,
    .finalize = mpi_disconnect,
    .send_init = pt_mpi_send_init,
    .send_start = pt_mpi_send_start,
    .send_message = pt_mpi_send_message,
    .send_runs = pt_mpi_send_runs,
    .send_finish_group = pt_mpi_send_finish_group,
    .send_progress = pt_mpi_send_progress,
    .send_drain = pt_mpi_send_drain,
    .send_destroy = pt_mpi_send_destroy,
    .recv_setup = pt_mpi_recv_setup,
    .recv_start = pt_mpi_recv_start,
    .recv_progress = pt_mpi_recv_progress,
    .recv_settled = pt_mpi_recv_settled,
    .recv_runs_may_come = pt_mpi_recv_runs_may_come,
    .recv_destroy = pt_mpi_recv_destroy,
};
