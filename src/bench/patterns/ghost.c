#include "ghost.h"

#include <string.h>

#include "harness/cache.h"

int pat_ghost_setup(pat_ghost_case *gc, const pt_common *c, const pat_grid *grid, pat_field *field,
                    const pat_exchange_spec *specs, int nex, double compute_us, int allreduce, MPI_Comm comm,
                    pat_counter *cnt, char *err, size_t errlen)
{
    memset(gc, 0, sizeof *gc);
    gc->c = c;
    gc->grid = grid;
    gc->field = field;
    gc->compute_us = compute_us;
    gc->allreduce = allreduce;
    gc->comm = comm;
    pat_field_clear_marks(field);
    for (int e = 0; e < nex; e++) {
        if (pat_exchange_setup(&gc->ex[e], &specs[e], grid, field, comm, cnt, err, errlen) != 0)
            return -1;
        gc->nex = e + 1;
        gc->payload += gc->ex[e].payload;
        gc->padding += gc->ex[e].padding;
    }
    return 0;
}

static void prepare(void *self, long iter, int validate)
{
    pat_ghost_case *gc = self;
    if (validate)
        pat_field_fill(gc->field, gc->grid, iter + 1);
}

static void run(void *self, long iter, int validate, pat_stamps *st)
{
    (void)validate;
    pat_ghost_case *gc = self;
    for (int e = 0; e < gc->nex; e++) {
        pat_stamps s = {0};
        /* the compute (and the noise) comes once per iteration, before the first exchange */
        pat_exchange_run(&gc->ex[e], gc->field, gc->c, e == 0 ? gc->compute_us : PAT_NO_COMPUTE, iter, &s);
        if (e == 0)
            st->compute = s.compute;
        if (gc->nex == 1) { /* phases only mean something for a single exchange */
            st->post = s.post;
            st->recv = s.recv;
            st->unpack = s.unpack;
        }
    }
    if (gc->allreduce) {
        double one = 1.0, sum = 0.0;
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, gc->comm);
    }
}

static long check(void *self, long iter)
{
    pat_ghost_case *gc = self;
    return pat_field_check(gc->field, gc->grid, iter + 1);
}

static void evict(void *self)
{
    pat_ghost_case *gc = self;
    pt_cache_evict(gc->field->data, gc->field->cells * (size_t)gc->field->vars * sizeof(double));
}

pat_case_ops pat_ghost_ops(pat_ghost_case *gc)
{
    return (pat_case_ops){.self = gc, .prepare = prepare, .run = run, .check = check, .evict = evict};
}

void pat_ghost_free(pat_ghost_case *gc)
{
    for (int e = 0; e < gc->nex; e++)
        pat_exchange_free(&gc->ex[e]);
    gc->nex = 0;
}
