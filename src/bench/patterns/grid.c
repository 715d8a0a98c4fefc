#include "grid.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/options.h"

/* "A,B,C" or "N" into three ints in [min, max]; "A,B" too when allow_pair (process grids:
 * the third entry is then 0, chosen). Cells never take two values: "4,4" is not 4x4x1. */
static int parse_triple(const char *arg, int min, int max, int allow_pair, pat_triple *out, char *err, size_t errlen)
{
    pt_int_list l;
    if (pt_parse_int_list(arg, min, max, &l, err, errlen) != 0)
        return -1;
    if (l.n == 1) {
        out->v[0] = out->v[1] = out->v[2] = l.v[0];
        return 0;
    }
    if (l.n != 3 && !(l.n == 2 && allow_pair)) {
        snprintf(err, errlen, "'%s': give one value or three comma-separated values%s", arg,
                 allow_pair ? " (or two)" : "");
        return -1;
    }
    out->v[0] = l.v[0];
    out->v[1] = l.v[1];
    out->v[2] = l.n == 3 ? l.v[2] : (min > 0 ? 1 : 0);
    return 0;
}

int pat_parse_cells(const char *arg, void *dest, char *err, size_t errlen)
{
    return parse_triple(arg, 1, 1 << 24, 0, dest, err, errlen);
}

int pat_parse_dims(const char *arg, void *dest, char *err, size_t errlen)
{
    return parse_triple(arg, 0, 1 << 24, 1, dest, err, errlen);
}

int pat_parse_dims2(const char *arg, void *dest, char *err, size_t errlen)
{
    pt_int_list l;
    if (pt_parse_int_list(arg, 0, 1 << 24, &l, err, errlen) != 0)
        return -1;
    if (l.n > 2) {
        snprintf(err, errlen, "'%s': give one value or two comma-separated values (the process grid is 2-D)", arg);
        return -1;
    }
    return parse_triple(arg, 0, 1 << 24, 1, dest, err, errlen);
}

int pat_parse_flags3(const char *arg, void *dest, char *err, size_t errlen)
{
    return parse_triple(arg, 0, 1, 0, dest, err, errlen);
}

void pat_grid_coords_of(const pat_grid *g, int rank, int coords[3])
{
    coords[0] = rank % g->dims[0];
    coords[1] = (rank / g->dims[0]) % g->dims[1];
    coords[2] = rank / (g->dims[0] * g->dims[1]);
}

static const char axis_name[3] = {'x', 'y', 'z'};

int pat_grid_setup(pat_grid *g, int ndims, int size, int rank, const pat_triple *dims_opt, const pat_triple *cells,
                   int strong, const pat_triple *periodic, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->ndims = ndims;
    g->size = size;
    g->rank = rank;
    int dims[3] = {0, 0, 0};
    long given = 1;
    int any_auto = 0, too_many = 0;
    for (int a = 0; a < ndims; a++) {
        dims[a] = dims_opt->v[a];
        if (dims[a] == 0)
            any_auto = 1;
        else if (given > size / dims[a])
            too_many = 1; /* more ranks than there are; multiplied on, 3 x 2^24 overflowed a long */
        else
            given *= dims[a];
    }
    if (too_many || (!any_auto && given != size) || (any_auto && size % given != 0)) {
        if (ndims == 3)
            snprintf(err, errlen, "the process grid %dx%dx%d does not fit the %d rank%s of this run (0 = choose)",
                     dims[0], dims[1], dims[2], size, size == 1 ? "" : "s");
        else
            snprintf(err, errlen, "the process grid %dx%d does not fit the %d rank%s of this run (0 = choose)", dims[0],
                     dims[1], size, size == 1 ? "" : "s");
        return -1;
    }
    MPI_Dims_create(size, ndims, dims);
    for (int a = 0; a < 3; a++) {
        g->dims[a] = a < ndims ? dims[a] : 1;
        g->periodic[a] = periodic ? periodic->v[a] : 0;
    }
    pat_grid_coords_of(g, rank, g->coords);
    for (int a = 0; a < 3; a++) {
        int n = cells->v[a];
        int p = g->dims[a];
        if (n < 1) {
            snprintf(err, errlen, "zero cells in %c", axis_name[a]);
            return -1;
        }
        if (strong) {
            if (n % p != 0) {
                snprintf(err, errlen, "the global grid does not divide: %d cell%s in %c over %d ranks", n, n == 1 ? "" : "s",
                         axis_name[a], p);
                return -1;
            }
            g->global[a] = n;
            g->local[a] = n / p;
        } else {
            g->local[a] = n;
            g->global[a] = n * p;
        }
        g->offset[a] = g->coords[a] * g->local[a];
    }
    return 0;
}

int pat_grid_neighbour(const pat_grid *g, const int d[3])
{
    int c[3];
    for (int a = 0; a < 3; a++) {
        c[a] = g->coords[a] + d[a];
        if (c[a] < 0 || c[a] >= g->dims[a]) {
            if (!g->periodic[a])
                return -1;
            c[a] = (c[a] + g->dims[a]) % g->dims[a];
        }
    }
    return c[0] + g->dims[0] * (c[1] + g->dims[1] * c[2]);
}

void pat_grid_dims_text(const pat_grid *g, char *buf, size_t len)
{
    if (g->ndims == 2)
        snprintf(buf, len, "%dx%d", g->dims[0], g->dims[1]);
    else
        snprintf(buf, len, "%dx%dx%d", g->dims[0], g->dims[1], g->dims[2]);
}

long pat_box_cells(const pat_box *b)
{
    long n = 1;
    for (int a = 0; a < 3; a++)
        n *= b->hi[a] > b->lo[a] ? b->hi[a] - b->lo[a] : 0;
    return n;
}

int pat_box_intersect(const pat_box *a, const pat_box *b, pat_box *out)
{
    for (int x = 0; x < 3; x++) {
        out->lo[x] = a->lo[x] > b->lo[x] ? a->lo[x] : b->lo[x];
        out->hi[x] = a->hi[x] < b->hi[x] ? a->hi[x] : b->hi[x];
    }
    return pat_box_cells(out) > 0;
}

int pat_box_contains(const pat_box *b, int i, int j, int k)
{
    return i >= b->lo[0] && i < b->hi[0] && j >= b->lo[1] && j < b->hi[1] && k >= b->lo[2] && k < b->hi[2];
}

static const signed char directions[PAT_NDIRS][3] = {
    {-1, 0, 0},   {1, 0, 0},   {0, -1, 0},  {0, 1, 0},  {0, 0, -1},  {0, 0, 1},                  /* faces */
    {-1, -1, 0},  {1, -1, 0},  {-1, 1, 0},  {1, 1, 0},  {-1, 0, -1}, {1, 0, -1}, {-1, 0, 1},
    {1, 0, 1},    {0, -1, -1}, {0, 1, -1},  {0, -1, 1}, {0, 1, 1},                               /* edges */
    {-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1}, {-1, -1, 1}, {1, -1, 1}, {-1, 1, 1}, {1, 1, 1}, /* corners */
};

void pat_direction(int index, int d[3])
{
    for (int a = 0; a < 3; a++)
        d[a] = directions[index][a];
}

int pat_direction_index(const int d[3])
{
    for (int i = 0; i < PAT_NDIRS; i++)
        if (directions[i][0] == d[0] && directions[i][1] == d[1] && directions[i][2] == d[2])
            return i;
    return -1;
}

int pat_direction_opposite(int index)
{
    int d[3];
    pat_direction(index, d);
    int o[3] = {-d[0], -d[1], -d[2]};
    return pat_direction_index(o);
}
