/* One case of a ghost-cell pattern (Halo3D, stencil): a field, one exchange or
 * one per dimension (Halo3D's dimension-ordered exchange), the compute before
 * it and an optional Allreduce, driven by driver.h. */
#ifndef PAT_GHOST_H
#define PAT_GHOST_H
#include "driver.h"
#include "exchange.h"

typedef struct pat_ghost_case {
    const pt_common *c;
    const pat_grid *grid;
    pat_field *field;
    pat_exchange ex[3];
    int nex;
    double compute_us;  /* per thread per iteration, before the first exchange */
    int allreduce;      /* one MPI_Allreduce of a double per iteration */
    MPI_Comm comm;
    long long payload, padding; /* per iteration, this rank */
} pat_ghost_case;

/* specs: nex exchanges run one after another. Returns 0 or -1 with err. */
int pat_ghost_setup(pat_ghost_case *gc, const pt_common *c, const pat_grid *grid, pat_field *field,
                    const pat_exchange_spec *specs, int nex, double compute_us, int allreduce, MPI_Comm comm,
                    pat_counter *cnt, char *err, size_t errlen);
pat_case_ops pat_ghost_ops(pat_ghost_case *gc);
void pat_ghost_free(pat_ghost_case *gc);

#endif
