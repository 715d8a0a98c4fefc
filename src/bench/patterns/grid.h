/* Process grids and boxes of the pattern benchmarks (docs/patterns.md).
 *
 * Ranks are laid out x fastest, as SST Ember's LinearMap: x = r % px,
 * y = (r / px) % py, z = r / (px * py). Sizes are either per rank (weak
 * scaling: every rank owns cells[] cells) or global (strong scaling: cells[]
 * is divided over the grid and must divide exactly). */
#ifndef PAT_GRID_H
#define PAT_GRID_H
#include <stddef.h>

typedef struct pat_triple { int v[3]; } pat_triple;

typedef struct pat_grid {
    int ndims;       /* decomposed dimensions: 2 (sweep) or 3 */
    int size, rank;
    int dims[3];     /* ranks per dimension; 1 beyond ndims */
    int periodic[3];
    int coords[3];   /* this rank's position */
    int local[3];    /* owned cells per dimension */
    int global[3];   /* cells of the whole domain */
    int offset[3];   /* global index of this rank's first owned cell */
} pat_grid;

/* Option parsers for pt_add_custom: "A,B,C" or one number "N" meaning N,N,N.
 * pat_parse_cells needs every value >= 1; pat_parse_dims allows 0 (= choose). */
int pat_parse_cells(const char *arg, void *dest, char *err, size_t errlen);
int pat_parse_dims(const char *arg, void *dest, char *err, size_t errlen);
/* The same for a 2-D process grid: "PX,PY" or "N"; three values are an error. */
int pat_parse_dims2(const char *arg, void *dest, char *err, size_t errlen);
int pat_parse_flags3(const char *arg, void *dest, char *err, size_t errlen);

/* Build the grid. dims_opt: ranks per dimension, 0 = let MPI_Dims_create choose.
 * Returns 0, or -1 with a one-line reason in err (the same on every rank). */
int pat_grid_setup(pat_grid *g, int ndims, int size, int rank, const pat_triple *dims_opt, const pat_triple *cells,
                   int strong, const pat_triple *periodic, char *err, size_t errlen);
void pat_grid_coords_of(const pat_grid *g, int rank, int coords[3]);
/* Rank at this rank's coords + d (each d in -1..1); -1 outside a non-periodic grid. */
int pat_grid_neighbour(const pat_grid *g, const int d[3]);
/* "PXxPYxPZ" for output. */
void pat_grid_dims_text(const pat_grid *g, char *buf, size_t len);

/* Half-open boxes of cells, [lo, hi) per dimension. */
typedef struct pat_box { int lo[3], hi[3]; } pat_box;
long pat_box_cells(const pat_box *b);
/* out = a intersected with b; returns 1 when the intersection is not empty. */
int pat_box_intersect(const pat_box *a, const pat_box *b, pat_box *out);
int pat_box_contains(const pat_box *b, int i, int j, int k);

/* The 26 neighbour directions d in {-1,0,1}^3 \ {0}, in a fixed order; index of
 * a direction and of its opposite. Faces (one non-zero component) come first. */
#define PAT_NDIRS 26
#define PAT_NFACES 6
void pat_direction(int index, int d[3]);
int pat_direction_index(const int d[3]);
int pat_direction_opposite(int index);

#endif
