/* libpartita-mpi: the standard MPI names of partitioned communication and of
 * every call a request handle can reach, implemented by libpartita (which
 * passes requests that are not partitioned on to the MPI library), plus the
 * set-up and tear-down partita needs in MPI_Init*, MPI_Finalize. Load it with
 * LD_PRELOAD or link it before the MPI library. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "partita/config.h"
#include "partita/partita.h"

#include "abort_output.h"
#include "partitioned_decls.h" /* the calls on an MPI older than MPI-4; LIST_CONST */

static int after_init(int rc)
{
    if (rc != MPI_SUCCESS)
        return rc;
    rc = Partita_Init_hook();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "partita: %s\n", Partita_Init_error());
        pt_let_launcher_forward_output();
        PMPI_Abort(MPI_COMM_WORLD, 1);
        /* Some MPI libraries return from MPI_Abort (this MPICH with a
         * singleton or a launcher that does not kill): the program must not
         * go on with settings it did not ask for. */
        fflush(NULL);
        _exit(1);
    }
    return rc;
}

/* A progress thread (PARTITA_PROGRESS_THREAD=1) needs MPI_THREAD_MULTIPLE:
 * ask for it; a program may always be given more than it required. */
int MPI_Init(int *argc, char ***argv)
{
    int needed = Partita_Thread_level_needed(), provided;
    if (needed == MPI_THREAD_SINGLE)
        return after_init(PMPI_Init(argc, argv));
    return after_init(PMPI_Init_thread(argc, argv, needed, &provided));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int needed = Partita_Thread_level_needed();
    return after_init(PMPI_Init_thread(argc, argv, required > needed ? required : needed, provided));
}

int MPI_Finalize(void)
{
    Partita_Finalize_hook();
    return PMPI_Finalize();
}

int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return Partita_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info, request);
}

int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return Partita_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, request);
}

int MPI_Pready(int partition, MPI_Request request) { return Partita_Pready(partition, request); }

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    return Partita_Pready_range(partition_low, partition_high, request);
}

int MPI_Pready_list(int length, LIST_CONST int array_of_partitions[], MPI_Request request)
{
    return Partita_Pready_list(length, array_of_partitions, request);
}

int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    return Partita_Parrived(request, partition, flag);
}

int MPI_Start(MPI_Request *request) { return Partita_Start(request); }

int MPI_Startall(int count, MPI_Request array_of_requests[]) { return Partita_Startall(count, array_of_requests); }

int MPI_Wait(MPI_Request *request, MPI_Status *status) { return Partita_Wait(request, status); }

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    return Partita_Waitall(count, array_of_requests, array_of_statuses);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return Partita_Waitany(count, array_of_requests, index, status);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    return Partita_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) { return Partita_Test(request, flag, status); }

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    return Partita_Testall(count, array_of_requests, flag, array_of_statuses);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    return Partita_Testany(count, array_of_requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    return Partita_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int MPI_Request_free(MPI_Request *request) { return Partita_Request_free(request); }

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    return Partita_Request_get_status(request, flag, status);
}

#ifdef PARTITA_HAVE_GET_STATUS_ALL
int MPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                               MPI_Status array_of_statuses[])
{
    return Partita_Request_get_status_all(count, array_of_requests, flag, array_of_statuses);
}

int MPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index, int *flag,
                               MPI_Status *status)
{
    return Partita_Request_get_status_any(count, array_of_requests, index, flag, status);
}

int MPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                int array_of_indices[], MPI_Status array_of_statuses[])
{
    return Partita_Request_get_status_some(incount, array_of_requests, outcount, array_of_indices,
                                           array_of_statuses);
}
#endif

int MPI_Cancel(MPI_Request *request) { return Partita_Cancel(request); }
