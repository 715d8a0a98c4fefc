/* The adaptive policy on a request pair (docs/library.md, "Adaptive plans").
 * Every candidate layout is planned at init on both sides, each with its own
 * marking state and transport state (req->tp: tags, persistent requests); a
 * round swaps the live layout (pt_send_side / pt_recv_side fields and
 * req->tp) for its candidate at MPI_Start. The schedule: the initial
 * exploration both sides derive from the candidate count, then windows of
 * PTA_WINDOW rounds that the sender announces one round ahead in a small
 * control message; a receive whose window is not announced yet at MPI_Start
 * waits (`deferred`, in the set-up waiters) and progress posts it on
 * arrival. Measurement: the flush layer stamps the round's first and last
 * hand-over of a message and times both (pt_send_side.adapt_*), the
 * receiver stamps the moment the round's last message is in and sends that
 * back when the round completes (its Test or Wait, after the last arrival:
 * the sender takes it in during its own completion calls, not while it
 * marks the next round). A round's cost: last arrival - last hand-over +
 * (messages - 1) x the shorter of the first and the last hand-over. Control and feedback messages
 * travel on two private communicators of their own (pt_adapt_init), with an
 * id the sender gives the pair as the tag. */
#ifndef PARTITA_ADAPTIVE_H
#define PARTITA_ADAPTIVE_H

#include "request/request.h"

/* pt_adapt_send_init's answer when there is one candidate: plan as `model`. */
#define PT_ADAPT_STATIC (-1)

/* Process-wide, at Partita_Init_hook / Partita_Finalize_hook: the channel. */
int pt_adapt_init(void);
void pt_adapt_finalize(void);

/* Sender. pt_adapt_send_init plans every candidate (bounds, marking state,
 * transport) and fills the set-up message's candidate words. */
int pt_adapt_send_init(pt_request *req);
void pt_adapt_send_start(pt_request *req);   /* the round's layout; feedback in; the next window out */
void pt_adapt_send_destroy(pt_request *req); /* every candidate's resources */

/* Receiver. */
int pt_adapt_recv_setup(pt_request *req);   /* every candidate's receive plan and transport state */
void pt_adapt_recv_done(pt_request *req);   /* the round completed (Test/Wait): its measurement goes back */
/* Swap in the round's layout: 1, or 0 when the sender's schedule for it is
 * not in yet (r->deferred is then set and the request waits in the set-up
 * waiters); *rc: an error of the internal calls. */
int pt_adapt_recv_round_layout(pt_request *req, int *rc);
void pt_adapt_recv_round_in(pt_request *req);  /* the round's last message is in */
/* MPI_Parrived has said true as often as there are partitions this round
 * (counted in pt_recv_side.adapt_true): the round is in for the application. */
void pt_adapt_recv_seen_all(pt_request *req);
void pt_adapt_recv_destroy(pt_request *req);   /* every candidate's but the shared plan parts */

#endif
