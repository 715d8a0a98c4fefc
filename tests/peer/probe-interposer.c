/* probe-interposer: name the shared object that provides each MPI entry point the
 * peer suites reach, so the runner can prove that LD_PRELOAD put libpartita in front
 * of the MPI library (a failed preload is only a warning from the dynamic loader).
 * Rank 0 prints one line "symbol object-path" per entry point. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static const char *const entry_points[] = {
  "MPI_Psend_init", "MPI_Precv_init", "MPI_Pready", "MPI_Pready_range", "MPI_Pready_list",
  "MPI_Parrived", "MPI_Start", "MPI_Startall", "MPI_Wait", "MPI_Waitall", "MPI_Test",
  "MPI_Request_free",
};

int main(int argc, char **argv)
{
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
      void *addr = dlsym(RTLD_DEFAULT, entry_points[i]);
      Dl_info info;
      const char *object = "(missing)";
      if (addr && dladdr(addr, &info) && info.dli_fname)
        object = info.dli_fname;
      printf("%s %s\n", entry_points[i], object);
    }
  }
  MPI_Finalize();
  return 0;
}
