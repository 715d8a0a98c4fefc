/* A rank's cells with ghost layers, several variables, and the sentinel check
 * (in the spirit of Comb's): before an exchange, owned cells that are sent hold
 * +s, owned cells that are not sent -s, ghost cells that receive -s and all other
 * ghost cells +s, where s = stamp * 2^40 + (global cell id * vars + var + 1) and
 * the global id wraps around periodic boundaries. After the exchange every ghost
 * cell must hold +s of the cell it mirrors and every other cell must be unchanged.
 * This catches wrong neighbours, wrong offsets, missing or extra boxes (edges,
 * corners) and stale data from an earlier iteration. */
#ifndef PAT_FIELD_H
#define PAT_FIELD_H
#include <stddef.h>

#include "grid.h"

typedef struct pat_field {
    int n[3];               /* owned cells per dimension */
    int g;                  /* ghost width on every side */
    int ext[3];             /* n + 2g */
    int vars;
    size_t cells;           /* ext[0] * ext[1] * ext[2] */
    double *data;           /* vars arrays of `cells` doubles */
    unsigned char *sent;    /* per cell: inside some send box */
    unsigned char *recvd;   /* per cell: inside some receive box */
} pat_field;

/* Bytes a rank needs for a field of n cells per dimension (ghost width g, vars variables)
 * and the buffers of one exchange of its ghost layers (data and cell index, both ways):
 * what pt_require_memory checks before pat_field_alloc. A double: it never overflows. */
double pat_field_footprint(const int n[3], int g, int vars);
/* Returns 0, or -1 when the memory cannot be allocated. */
int pat_field_alloc(pat_field *f, const int n[3], int g, int vars);
void pat_field_free(pat_field *f);

/* Offset of cell (i, j, k) in local coordinates (owned cells 0..n-1, ghosts
 * -g..-1 and n..n+g-1) of variable 0; add var * cells for the others. */
static inline size_t pat_field_at(const pat_field *f, int i, int j, int k)
{
    return ((size_t)(k + f->g) * (size_t)f->ext[1] + (size_t)(j + f->g)) * (size_t)f->ext[0] + (size_t)(i + f->g);
}

/* Record a box as sent (recv = 0) or received (recv = 1); a cell received twice
 * is an error of the decomposition and makes this return -1. */
int pat_field_mark(pat_field *f, const pat_box *b, int recv);
void pat_field_clear_marks(pat_field *f);
void pat_field_fill(pat_field *f, const pat_grid *grid, long stamp);
/* Wrong cells (all variables) on this rank. */
long pat_field_check(const pat_field *f, const pat_grid *grid, long stamp);

#endif
