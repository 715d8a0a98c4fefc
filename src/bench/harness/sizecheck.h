/* The sizes a benchmark may use: checked before anything is allocated or sent, so a size
 * that cannot work ends in one clear line on rank 0 and exit status 2 (pt_fail), never in
 * a segmentation fault, a negative count inside MPI or the OOM killer.
 *
 * Quantities are doubles so that products of option values (cells x values x ...) can be
 * formed without overflow before they are compared. Every rank calls these alike (they are
 * collective over MPI_COMM_WORLD); a rank whose own quantity fails makes all of them fail. */
#ifndef PT_SIZECHECK_H
#define PT_SIZECHECK_H

#include "bench.h"

/* Fail when `count` elements of one MPI call exceed INT_MAX, the most an int count of the
 * MPI-3 calls carries. `what` names the message, e.g. "the x face of a k-block". */
void pt_require_int_count(pt_ctx *ctx, double count, const char *what);

/* Fail when `bytes` allocated by this rank, summed over the ranks of its node, exceed the
 * memory the node has available (MemAvailable in /proc/meminfo, else the physical memory).
 * `what` names the allocation, e.g. "the cells and ghost layers". */
void pt_require_memory(pt_ctx *ctx, double bytes, const char *what);

#endif
