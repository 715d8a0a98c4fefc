#include "transport/mpi/mpi_transport.h" /* another transport's folder */
