/* Inside the flush layer: what marking (marking.c) asks of the timer
 * (timer_flush.c). */
#ifndef PARTITA_TIMER_FLUSH_H
#define PARTITA_TIMER_FLUSH_H

#include "request/request.h"

int pt_timer_alloc(pt_request *req);
void pt_timer_free(pt_request *req);
/* A round begins (and the transport's round, under the same lock). */
void pt_timer_round_reset(pt_request *req);
/* Partition p of a group the timer already split became ready: send it now. */
int pt_timer_send_late(pt_request *req, int g, int p);
/* Partition p of a group that goes alone this round (pt_group.alone) became
 * ready: its mark, which made it SENT (no flush takes it), sends it. */
int pt_timer_send_alone(pt_request *req, int g, int p);
/* How long after the round's last hand-over of a group a group that begins
 * is late (delta_ns is set). */
int64_t pt_timer_late_begin_ns(const pt_request *req);
/* Rounds in a row whose marking took less than that, after which the rule
 * that splits a group that begins late rests until a round takes longer
 * (timer_flush.c: update_late_watch). */
#define PT_LATE_WATCH_ROUNDS 16
/* The round's first group has begun: when its marking span starts (update_late_watch). */
void pt_timer_span_begun(pt_request *req);
/* Group g's first partition was just marked: if the group begins late, split
 * it now and return 1; the caller then sends that partition as a late one. */
int pt_timer_split_if_late(pt_request *req, int g);
/* A group already split (announced ahead for this round) begins: noted if
 * it begins late, as pt_timer_split_if_late notes it, so that the next group
 * of a laggard's block is late too (pt_timer_handed_over). */
void pt_timer_split_begun(pt_request *req, int g);
/* Without a progress thread, in a round that catches stalls (catch_late):
 * group g's first partition was just marked (its chunk's first mark). */
void pt_timer_stamp_begun(pt_request *req, int g);
/* Group g's last partition was just marked, in such a round: if its marking
 * took the late-begin pause or more, split it now and return 1; the caller
 * then finishes it (pt_timer_finish_group), which sends it as its first
 * flush, announced ahead. */
int pt_timer_split_if_stalled(pt_request *req, int g);
/* Group g was just handed over (after its send): stamped for the late-begin
 * rule in the rounds it is on (unless it began late itself), and the round's
 * marking span measured at its last hand-over (timer_flush.c:
 * update_late_watch). */
void pt_timer_handed_over(pt_request *req, int g);
/* A round has begun (every group open): the groups announced ahead for it
 * (PT_RUNS_AHEAD) start split, each partition to go alone at its mark. */
void pt_timer_round_ahead(pt_request *req);
/* The last contributor of a split group: send the rest of it. */
int pt_timer_finish_group(pt_request *req, int g);

#endif
