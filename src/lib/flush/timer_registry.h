/* Send requests under the timer policy, so that any partita call in the
 * process (Pready, Parrived, Test, Wait on any request) can flush their
 * overdue groups, and an optional progress thread can too. A request is
 * armed while one of its groups is begun (some partitions marked) and still
 * open, neither issued whole nor split (a split group sends each later
 * partition at once): only such a group can become overdue. The mark that
 * begins a group arms the request; a poll that finds nothing begun and open
 * disarms it, so the progress thread sleeps until the next group is begun
 * instead of polling a request that can have nothing overdue (a round whose
 * prompt groups have gone whole while the rest wait for a late thread's
 * first mark). A round of a group that only the progress thread splits, in
 * which that thread is not woken, arms nothing (timer_flush.c:
 * pt_timer_round_reset). */
#ifndef PARTITA_TIMER_REGISTRY_H
#define PARTITA_TIMER_REGISTRY_H

#include <stdint.h>

struct pt_request;

/* wake is called whenever a request becomes armed (the progress thread's kick). */
void pt_timers_on_arm(void (*wake)(void));
void pt_timers_register(struct pt_request *req);
void pt_timers_unregister(struct pt_request *req); /* it goes away: unlisted, disarmed, not drained */
/* A registered request changes its layout (the adaptive policy's swap at
 * MPI_Start): polls, which read the live layout's groups, wait meanwhile. */
void pt_timers_hold(void);
void pt_timers_release(void);
/* Flush what is overdue; returns when the next check is due (CLOCK_MONOTONIC
 * ns; INT64_MAX: nothing pending, or another thread was polling). */
int64_t pt_timers_poll(void);
int pt_timers_pending(void); /* some request is armed, or has sends to drain */
void pt_timer_arm(struct pt_request *req);    /* a group begun (wakes the progress thread) */
/* A mark began a group (a chunk of it): arm the request unless it is armed. */
void pt_timer_begun(struct pt_request *req);
void pt_timer_disarm(struct pt_request *req); /* nothing begun and open, or the request goes away */
void pt_timer_group_closed(struct pt_request *req); /* a group issued whole or split: disarms after the last */
/* Runs, lone partitions or a terminator went to the transport before the
 * round's end: until the transport's send_drain says they are complete,
 * polls (the progress thread's above all) drive them, since an MPI library
 * may move them only when the sender calls it, and the application may be
 * computing (transport/mpi/send.c: pt_mpi_send_drain). It does not wake the
 * progress thread, which is awake in the rounds that split or finds them
 * within its idle wait: woken by the 8th early send of a round, the thread
 * took a core from the marking threads (1 MiB in 64 partitions, one of four
 * threads late: perceived bandwidth 142,500 MB/s against 178,800 unwoken,
 * median of 6 interleaved launches), and woken by the first it cost a
 * laggard's lone partition the wake's system call after the last mark (2
 * KiB in 2 partitions, half late: 0.92 [0.86-0.98] of none's speed). */
void pt_timer_sent_early(struct pt_request *req);

#endif
