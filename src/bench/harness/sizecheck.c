#include "sizecheck.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

void pt_require_int_count(pt_ctx *ctx, double count, const char *what)
{
    char msg[256] = "";
    int failed = count > (double)INT_MAX;
    if (failed)
        snprintf(msg, sizeof msg, "%s would be %.0f elements in one MPI call, more than an int count carries (%d)",
                 what, count, INT_MAX);
    pt_check_all(ctx, failed, msg);
}

static double node_memory_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[128];
        unsigned long long kib = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
                break;
        fclose(f);
        if (kib)
            return (double)kib * 1024.0;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

void pt_require_memory(pt_ctx *ctx, double bytes, const char *what)
{
    /* the ranks of one node share its memory: compare their sum */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    double on_node = 0.0, most = 0.0; /* ranks may need different amounts (rank 0 keeps more samples) */
    int ranks = 1;
    MPI_Allreduce(&bytes, &on_node, 1, MPI_DOUBLE, MPI_SUM, node);
    MPI_Allreduce(&bytes, &most, 1, MPI_DOUBLE, MPI_MAX, node);
    MPI_Comm_size(node, &ranks);
    MPI_Comm_free(&node);
    double have = node_memory_bytes();
    char msg[512] = "";
    int failed = have > 0.0 && on_node > have;
    if (failed)
        snprintf(msg, sizeof msg, "%s need up to %.3g GiB per rank, %.3g GiB for the %d rank(s) of this node, which "
                 "has %.3g GiB available: use smaller sizes or fewer ranks per node", what, most / GIB, on_node / GIB,
                 ranks, have / GIB);
    pt_check_all(ctx, failed, msg);
}
