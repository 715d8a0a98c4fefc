#include "field.h"

#include <stdlib.h>
#include <string.h>

double pat_field_footprint(const int n[3], int g, int vars)
{
    double ext = 1.0, owned = 1.0;
    for (int a = 0; a < 3; a++) {
        ext *= (double)n[a] + 2.0 * g;
        owned *= (double)n[a];
    }
    /* data (a double per variable) and the sent/received marks per cell; an exchange sends
     * at most the owned cells next to the ghosts and receives at most the ghost cells, each
     * element a double of message buffer and a long of index */
    double field = ext * (vars * sizeof(double) + 2.0);
    double exchange = 2.0 * (ext - owned) * vars * (sizeof(double) + sizeof(long));
    return field + exchange;
}

int pat_field_alloc(pat_field *f, const int n[3], int g, int vars)
{
    memset(f, 0, sizeof *f);
    f->g = g;
    f->vars = vars;
    f->cells = 1;
    for (int a = 0; a < 3; a++) {
        f->n[a] = n[a];
        f->ext[a] = n[a] + 2 * g;
        f->cells *= (size_t)f->ext[a];
    }
    f->data = calloc(f->cells * (size_t)vars, sizeof *f->data);
    f->sent = calloc(f->cells, 1);
    f->recvd = calloc(f->cells, 1);
    if (!f->data || !f->sent || !f->recvd) {
        pat_field_free(f);
        return -1;
    }
    return 0;
}

void pat_field_free(pat_field *f)
{
    free(f->data);
    free(f->sent);
    free(f->recvd);
    f->data = NULL;
    f->sent = f->recvd = NULL;
}

int pat_field_mark(pat_field *f, const pat_box *b, int recv)
{
    int ok = 0;
    for (int k = b->lo[2]; k < b->hi[2]; k++)
        for (int j = b->lo[1]; j < b->hi[1]; j++)
            for (int i = b->lo[0]; i < b->hi[0]; i++) {
                size_t c = pat_field_at(f, i, j, k);
                if (recv) {
                    ok |= f->recvd[c];
                    f->recvd[c] = 1;
                } else {
                    f->sent[c] = 1;
                }
            }
    return ok ? -1 : 0;
}

void pat_field_clear_marks(pat_field *f)
{
    memset(f->sent, 0, f->cells);
    memset(f->recvd, 0, f->cells);
}

/* Sentinel magnitude of a cell: its global id after periodic wrap-around (cells
 * beyond a non-periodic boundary get ids of an extended domain, still unique). */
static double magnitude(const pat_field *f, const pat_grid *grid, int i, int j, int k, int v, long stamp)
{
    int loc[3] = {i, j, k};
    long long id = 0;
    for (int a = 2; a >= 0; a--) {
        long long gl = (long long)grid->offset[a] + loc[a];
        long long ext = grid->global[a] + 2LL * f->g;
        if (gl < 0 || gl >= grid->global[a]) {
            if (grid->periodic[a])
                gl = (gl + grid->global[a]) % grid->global[a];
        }
        id = id * ext + (gl + f->g);
    }
    long long s = (long long)(stamp % 4096) * (1LL << 40) + id * f->vars + v + 1;
    return (double)s;
}

static int is_owned(const pat_field *f, int i, int j, int k)
{
    return i >= 0 && i < f->n[0] && j >= 0 && j < f->n[1] && k >= 0 && k < f->n[2];
}

/* The value a cell holds before (after = 0) or after (after = 1) a correct exchange. */
static double sentinel(const pat_field *f, const pat_grid *grid, int i, int j, int k, int v, long stamp, int after)
{
    size_t c = pat_field_at(f, i, j, k);
    double m = magnitude(f, grid, i, j, k, v, stamp);
    if (is_owned(f, i, j, k))
        return f->sent[c] ? m : -m;
    if (after)
        return m;
    return f->recvd[c] ? -m : m;
}

#define FOR_ALL_CELLS(f)                                   \
    for (int k = -(f)->g; k < (f)->n[2] + (f)->g; k++)     \
        for (int j = -(f)->g; j < (f)->n[1] + (f)->g; j++) \
            for (int i = -(f)->g; i < (f)->n[0] + (f)->g; i++)

void pat_field_fill(pat_field *f, const pat_grid *grid, long stamp)
{
    for (int v = 0; v < f->vars; v++) {
        double *d = f->data + (size_t)v * f->cells;
        FOR_ALL_CELLS(f) d[pat_field_at(f, i, j, k)] = sentinel(f, grid, i, j, k, v, stamp, 0);
    }
}

long pat_field_check(const pat_field *f, const pat_grid *grid, long stamp)
{
    long wrong = 0;
    for (int v = 0; v < f->vars; v++) {
        const double *d = f->data + (size_t)v * f->cells;
        FOR_ALL_CELLS(f) wrong += d[pat_field_at(f, i, j, k)] != sentinel(f, grid, i, j, k, v, stamp, 1);
    }
    return wrong;
}
