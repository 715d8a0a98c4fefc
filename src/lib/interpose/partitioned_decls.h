/* What an interposer of the partitioned calls needs from mpi.h, on every MPI:
 * the declarations when this MPI predates MPI-4 partitioned communication, and
 * LIST_CONST, the constness of MPI_Pready_list's array in this mpi.h (set
 * PARTITA_PREADY_LIST_CONST from the CMake check). Used by libpartita-mpi and
 * libpartita-trace. */
#ifndef PARTITA_PARTITIONED_DECLS_H
#define PARTITA_PARTITIONED_DECLS_H

#include <mpi.h>

#include "partita/config.h"

#if !PARTITA_NATIVE_PARTITIONED
/* This MPI predates MPI-4 partitioned communication: declare the calls. */
int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Pready(int partition, MPI_Request request);
int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request);
int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request);
int MPI_Parrived(MPI_Request request, int partition, int *flag);
#define PARTITA_PREADY_LIST_CONST 1
#endif

#ifdef PARTITA_PREADY_LIST_CONST
#define LIST_CONST const
#else
#define LIST_CONST /* Open MPI 5 declares a non-const array */
#endif

#endif
