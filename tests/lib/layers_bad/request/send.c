#include "transport/mpi/mpi_transport.h" /* past the seam */
