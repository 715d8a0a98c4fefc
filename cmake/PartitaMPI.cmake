# Facts about the MPI library this tree is built against.
include(CheckSymbolExists)
include(CheckCSourceCompiles)

set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
# Partitioned support is detected by the symbol, never by MPI_VERSION:
# Open MPI 5 reports MPI 3.1 yet implements MPI_Psend_init.
check_symbol_exists(MPI_Psend_init "mpi.h" PARTITA_NATIVE_PARTITIONED)
# The MPI-4 large-count calls (MPI_Send_c, MPI_Bcast_c, ...), which mpi4py 4
# calls instead of the int-count ones; the tracer wraps them when present.
check_symbol_exists(MPI_Send_c "mpi.h" PARTITA_MPI_LARGE_COUNT)
check_c_source_compiles("
#include <mpi.h>
int main(void) { return MPI_ABI_VERSION; }" PARTITA_MPI_IS_ABI)
check_c_source_compiles("
#include <mpi.h>
#if !defined(OPEN_MPI)
#error not open mpi
#endif
int main(void) { return 0; }" PARTITA_MPI_IS_OPENMPI)
check_c_source_compiles("
#include <mpi.h>
#if !defined(MPICH)
#error not mpich
#endif
int main(void) { return 0; }" PARTITA_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_LIBRARIES)

if(PARTITA_MPI_IS_OPENMPI)
  set(PARTITA_MPI_FLAVOR "openmpi")
elseif(PARTITA_MPI_IS_ABI)
  # the standard MPI ABI (MPICH's mpicc_abi): mpi.h names no implementation
  set(PARTITA_MPI_FLAVOR "mpi-abi")
elseif(PARTITA_MPI_IS_MPICH)
  set(PARTITA_MPI_FLAVOR "mpich")
else()
  set(PARTITA_MPI_FLAVOR "other")
endif()
if(PARTITA_NATIVE_PARTITIONED)
  set(PARTITA_NATIVE_PARTITIONED_01 1)
  set(PARTITA_NATIVE_PARTITIONED_JSON true)
else()
  set(PARTITA_NATIVE_PARTITIONED_01 0)
  set(PARTITA_NATIVE_PARTITIONED_JSON false)
endif()
if(PARTITA_MPI_LARGE_COUNT)
  set(PARTITA_MPI_LARGE_COUNT_01 1)
else()
  set(PARTITA_MPI_LARGE_COUNT_01 0)
endif()
message(STATUS "partita: MPI flavour ${PARTITA_MPI_FLAVOR}, native partitioned: ${PARTITA_NATIVE_PARTITIONED_01}, large-count calls: ${PARTITA_MPI_LARGE_COUNT_01}")
message(STATUS "partita: launcher ${MPIEXEC_EXECUTABLE}")
