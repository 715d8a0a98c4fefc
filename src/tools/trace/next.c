/* Finding the definition a wrapper forwards to. RTLD_NEXT, not the PMPI_ name:
 * with libpartita-mpi.so loaded after the tracer, the next MPI_Pready is
 * libpartita's (which has no PMPI_Pready of its own), so the program's calls
 * keep reaching libpartita. Without it, the next definition is the MPI
 * library's. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

void *ptr_next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        char pname[64];
        snprintf(pname, sizeof pname, "P%s", name);
        f = dlsym(RTLD_NEXT, pname);
    }
    return f; /* NULL only for a call this MPI lacks: the program cannot call it either */
}

const char *ptr_library_of(void *f)
{
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}
