/* The aggregation planner: how many transport messages a send request uses
 * per round, from its settings, its partition size and partition count. */
#ifndef PARTITA_PLANNER_H
#define PARTITA_PLANNER_H

#include <stddef.h>

#include "partita/model.h" /* ptm_group_first: the groups of every layout */
#include "request/settings.h"

/* Transport messages per round: in [1, partitions], groups of consecutive
 * partitions (1 when partitions < 1); or, when can_cut (the partitions are
 * contiguous bytes) and *cut is set, the buffer cut into that many
 * byte-balanced messages, which may straddle partition boundaries, because
 * below a protocol switch several small messages can beat one large one (the
 * model decides; `fixed` asks for it above the partition count). */
int pt_plan_transport(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, int *cut);
/* A layout: count messages, groups or (cut) byte-balanced pieces; groups
 * the timer's flush may split when their marking stalls (split: the adaptive
 * policy's candidate for a laggard, pt_plan_candidates). */
typedef struct pt_layout {
    int count;
    int cut;
    int split;
} pt_layout;
#define PT_MAX_CANDIDATES_RANKED 8
/* The adaptive policy's candidates, at most max: first the layout `model`
 * plans, then one plain message, one message per partition as `none` sends
 * it (over MPI, past the eager limit, in eager pieces; up to the model's
 * eager burst, 16 partitions with MPICH's parameters, and up to 64 where
 * the model prices it within 2x of its best layout), then the
 * model's next best layouts (each
 * fitted to MPI's counts as pt_plan_transport does), no layout twice; and
 * when a progress thread runs (s->background), the first group layout of
 * these with more than one partition per group once more, split by the
 * timer's flush when its marking stalls (in place of the last when max are
 * planned already). Only the first when s->adapt is 0. Returns how many. */
int pt_plan_candidates(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, pt_layout *out, int max);
/* The timer's layouts. A cut (the model's layout below MPI's eager limit)
 * cannot be split: its pieces straddle partitions, so a late half of them
 * holds back two pieces, where `none` sends one partition after the last
 * mark (32 KiB in 8 partitions, the first half 100 us late: 1.6x none's time
 * after the last mark). Over MPI with 2 to PT_PER_PARTITION_MAX (64)
 * partitions it is therefore measured online against one message per
 * partition as `none` sends it (past the eager limit in eager pieces, which
 * lie within partitions), as the adaptive policy measures its candidates:
 * returns 2, the cut first. Else
 * (not a cut, the fabric, PARTITA_TRANSPORT_PARTS, PARTITA_ADAPT=0) the one
 * layout the timer plans: returns 1. */
int pt_plan_timer_candidates(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, pt_layout *out);
/* Byte offset of transport message j (0..nmsg) of a round of `parts`
 * partitions of part_bytes sent as nmsg messages: groups
 * (ptm_group_first), or the cut (ptm_piece_offset of the whole buffer).
 * Sender and receiver both cut with this. */
size_t pt_plan_message_offset(size_t part_bytes, int parts, int nmsg, int cut, int j);
/* The group of sender partition s when `parts` partitions go as ngroups
 * groups (ptm_group_first bounds them: floor(j * parts / ngroups)). */
static inline int pt_plan_group_of(int parts, int ngroups, int s)
{
    return (int)(((long long)(s + 1) * ngroups - 1) / parts);
}
/* Timer policy over the MPI transport: the pieces a partition sent alone
 * (late) is cut into so that each stays under the MPI library's eager limit
 * (the model's protocol switch: ptm_eager_limit), when `partitions` go as
 * `ntrans` groups. 1 when it is eager already, when the parameters have no
 * switch, when it would take more than PT_MAX_EAGER_PIECES, when the pieces
 * of a group's partitions, all late, would be more than
 * PT_EAGER_PIECES_MAX_MESSAGES, or when the partition is not contiguous
 * bytes (a piece of a derived type's partition is no count of its
 * elements). The transport sends them (transport/mpi/send.c). */
#define PT_MAX_EAGER_PIECES 8
/* More eager pieces at once overrun MPI's eager queue. Half of each group
 * 100 us late, one thread marking, 10 interleaved launches of each build:
 * after the laggard the timer took 0.26-0.56x its time with whole (rendezvous)
 * partitions at 512 KiB-1 MiB in 32 and 64 partitions (groups of 64-192
 * pieces), but 1.55x at 1 MiB in 128 (256 pieces), and 2-5x at 2-4 MiB in
 * 64 and 128 (320-640) (docs/library.md, "Late partitions in eager pieces"). */
#define PT_EAGER_PIECES_MAX_MESSAGES 192
int pt_plan_late_pieces(const pt_settings *s, size_t part_bytes, int partitions, int ntrans, int contiguous);
/* Whether a partition sent alone over MPI point-to-point goes as one message
 * past MPI's eager limit, so waits for a rendezvous handshake that costs
 * about as much as its copy: past the limit, pt_plan_late_pieces refuses
 * pieces, and the partition is under 256 KiB. The timer then sends the rest
 * of a split group in runs (flush/timer_flush.c). */
int pt_plan_lone_waits(const pt_settings *s, size_t part_bytes, int partitions, int ntrans, int contiguous);
/* Timer policy: hold time, in ns, of a partly ready group of group_parts
 * partitions and group_bytes bytes: the settings' delta, or the model's
 * (ptm_timer_delta_us: the overhead one more message costs plus the time
 * marking the group back to back takes, at least PTM_TIMER_DELTA_MIN_US). */
long long pt_plan_delta_ns(const pt_settings *s, size_t group_bytes, int group_parts);
/* Timer policy: whether splitting a group of group_parts partitions and
 * group_bytes bytes can pay (1), or the group always goes whole, as under
 * `model` (0). A delta set in the settings always allows splitting. */
int pt_plan_timer_splits(const pt_settings *s, size_t group_bytes, int group_parts);

#endif
