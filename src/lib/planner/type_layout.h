/* Whether a datatype's bytes, in type-map order, lie in memory as one gap-free
 * run starting at its true lower bound, and elements follow each other
 * without gaps. Only then may partita move them as raw bytes. */
#ifndef PARTITA_TYPE_LAYOUT_H
#define PARTITA_TYPE_LAYOUT_H

#include <mpi.h>

int pt_type_contiguous(MPI_Datatype type);

#endif
