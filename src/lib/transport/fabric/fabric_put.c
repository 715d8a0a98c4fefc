/* How one write of the fabric transport goes out: injected when it fits the
 * provider's inject size, as injected pieces when fabric_wire.h's rule says
 * so, otherwise as one write with a completion. The transport's sender and
 * partita-loggp's fabric probe both post through it, so the probe measures
 * the costs the planner plans with. */
#include "transport/fabric/fabric_wire.h"

#include <string.h>

size_t pt_fab_piece_size(const pt_fab_ctx *ctx, int wanted)
{
    size_t inject = pt_fab_inject_size(ctx);
    return wanted && inject >= PT_FAB_PIECE_MIN ? inject : 0;
}

size_t pt_fab_split_size(const char *provider, int wanted, int run)
{
    if (!wanted || strcmp(provider, "shm"))
        return 0;
    return run ? PT_FAB_RUN_SPLIT_MIN : PT_FAB_SPLIT_MIN;
}

int pt_fab_put(pt_fab_ctx *ctx, const pt_fab_put_write *w, size_t *sent, pt_fab_op *op, int *completes)
{
    *completes = 0;
    if (w->len <= pt_fab_inject_size(ctx)) /* no completion to reap: the bytes are copied out now */
        return pt_fab_inject_write(ctx, w->src, w->len, w->dest, w->raddr, w->key, w->imm);
    if (pt_fab_pieces(w->len, w->piece, w->run) > 1) {
        int rc = 0;
        while (rc == 0 && *sent < w->len) {
            size_t n = w->len - *sent < w->piece ? w->len - *sent : w->piece;
            rc = pt_fab_inject_write(ctx, w->src + *sent, n, w->dest, w->raddr + *sent, w->key, w->imm);
            if (rc == 0)
                *sent += n;
        }
        return rc;
    }
    *completes = 1;
    return pt_fab_write(ctx, w->src, w->len, w->desc, w->dest, w->raddr, w->key, w->imm, op);
}
