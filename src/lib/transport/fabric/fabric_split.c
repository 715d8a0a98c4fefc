/* The fabric transport's split copies (fabric_wire.h): over shm a large
 * message or timer run is copied by both processes at once. The tail goes
 * as a write with the immediate, which the receiver's progress copies; the
 * head as a plain write the sender copies itself; and after the head's
 * local completion an empty control message with the same immediate tells
 * the receiver that the head is in. The head of a run of up to 128 KiB
 * (in_pready_most) is copied in the MPI_Pready that posts the tail; that of
 * a longer run, and every message's (1 MiB or more), in the sender's next
 * progress (a head of a 4 MiB message is a 2 MiB copy). */
#include "transport/fabric/fabric_transport.h"

/* Context lock held: the notice of item's head; 0 or -FI_EAGAIN. */
static int notice(pt_fab_send *s, int item)
{
    return pt_fab_control(s->ctx, s->dest, pt_fab_item_imm(s, &s->queue[item]), NULL, 0, NULL, NULL);
}

/* The head's local completion (context lock held, from whichever thread reads
 * the queue). Over shm the head is in the receiver's buffer when it
 * completes locally, so the notice cannot overtake its bytes. The write
 * counts as completed once its notice is posted. */
static void head_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)ctx;
    pt_fab_wop *w = (pt_fab_wop *)op;
    pt_fab_send *s = w->owner;
    int rc = error ? error : notice(s, w->item);
    if (rc == -FI_EAGAIN) {
        w->notice_owed = 1; /* posted by the sender's next progress (pt_fab_split_heads) */
        atomic_fetch_add_explicit(&s->notices_owed, 1, memory_order_relaxed);
        return;
    }
    if (rc)
        pt_fab_send_failed(s, rc);
    atomic_fetch_add_explicit(&s->completed, 1, memory_order_release);
}

int pt_fab_split_tail(pt_fab_send *s, const pt_fab_pending *it, uint64_t imm, pt_fab_op *op)
{
    size_t head = pt_fab_split_head(it->len);
    int rc = pt_fab_write(s->ctx, s->src + it->offset + head, it->len - head, s->mr.desc, s->dest,
                          s->reply.base + it->offset + head, s->reply.key, imm, op);
    if (rc == 0)
        atomic_fetch_add_explicit(&s->split, 1, memory_order_relaxed);
    return rc;
}

/* Past the items at head_next that have no head (whole writes). */
static void skip_whole(pt_fab_send *s)
{
    while (s->head_next < s->qhead && !pt_fab_item_split(s, &s->queue[s->head_next]))
        s->head_next++;
}

/* Context lock held: the notices the provider had no room for. */
static int retry_notices(pt_fab_send *s)
{
    int n = atomic_load_explicit(&s->posted, memory_order_relaxed);
    for (int k = 0; k < n && atomic_load_explicit(&s->notices_owed, memory_order_relaxed) > 0; k++) {
        pt_fab_wop *w = &s->wops[k];
        if (!w->notice_owed)
            continue;
        int rc = notice(s, w->item);
        if (rc == -FI_EAGAIN)
            return 0;
        if (rc)
            pt_fab_send_failed(s, rc);
        w->notice_owed = 0;
        atomic_fetch_sub_explicit(&s->notices_owed, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->completed, 1, memory_order_release);
    }
    return 0;
}

/* The largest item whose head MPI_Pready copies: a run up to the largest run
 * that goes in injected pieces when copies are not split (MPI_Pready copied
 * all of such a run's bytes into the provider's buffers then, half of them
 * here); no message (1 MiB or more: a head of 512 KiB or more). A run's head
 * left to progress waits for the marking thread's MPI_Wait: under the timer,
 * 1 MiB in 8 partitions with a 1 ms laggard (its partitions alone, runs of
 * 128 KiB), 10 launches against the library that sent runs in pieces,
 * perceived bandwidth 0.92x with such heads left to progress, 2.17x with
 * them copied here. */
static size_t in_pready_most(const pt_fab_send *s, const pt_fab_pending *it)
{
    return it->kind == PT_IMM_RUN && s->piece ? pt_fab_largest_in_pieces(s->piece, 1) : 0;
}

int pt_fab_split_heads(pt_fab_send *s, int in_pready)
{
    skip_whole(s);
    if (s->head_next == s->qhead && atomic_load_explicit(&s->notices_owed, memory_order_relaxed) == 0)
        return 0;
    int rc = 0;
    pt_fab_lock(s->ctx);
    for (; rc == 0 && s->head_next < s->qhead; skip_whole(s)) {
        int item = s->head_next, n = atomic_load_explicit(&s->posted, memory_order_relaxed);
        const pt_fab_pending *it = &s->queue[item];
        if (in_pready && it->len > in_pready_most(s, it))
            break; /* in order: this one and those after it wait for progress */
        pt_fab_wop *w = &s->wops[n];
        w->op.done = head_done;
        w->item = item;
        w->notice_owed = 0;
        rc = pt_fab_write_plain(s->ctx, s->src + it->offset, pt_fab_split_head(it->len), s->mr.desc, s->dest,
                                s->reply.base + it->offset, s->reply.key, &w->op);
        if (rc == 0) {
            s->head_next++;
            atomic_store_explicit(&s->posted, n + 1, memory_order_release);
            pt_fab_poll(s->ctx, 64, 1); /* over shm the head has completed: its notice goes now */
        }
    }
    if (rc == -FI_EAGAIN)
        rc = 0; /* the provider's queue is full: the next progress goes on */
    if (rc == 0)
        rc = retry_notices(s);
    pt_fab_unlock(s->ctx);
    return rc;
}
