/* Process-wide state: initialisation, the data communicator, finalisation. */
#ifndef PARTITA_RUNTIME_H
#define PARTITA_RUNTIME_H

#include <mpi.h>
#include <stdint.h>

#include "request/clock.h"

int pt_initialised(void);
/* MPI calls in this process never overlap: the thread level at init is below
 * MPI_THREAD_MULTIPLE (a progress thread makes it MULTIPLE). Unknown level:
 * they may. */
int pt_serial_process(void);
/* MPI_TAG_UB: user tags are in [0, pt_tag_ub()]. */
int pt_tag_ub(void);
/* A one-line reason when Partita_Init_hook failed ("" otherwise). */
const char *pt_init_error(void);
struct pt_request;
/* Work that any partita call may do in passing (orphans, timers). */
void pt_background_progress(void);
/* The same, before the caller progresses `own` itself: the waiting receives
 * leave it out. */
void pt_background_progress_beside(const struct pt_request *own);
/* What the background work wants next (the progress thread's schedule). */
typedef struct pt_background_next {
    int64_t timer_due; /* a timer check is due then (CLOCK_MONOTONIC ns); INT64_MAX: none */
    int regular;       /* polling at the regular interval is wanted: orphans, an armed timer
                        * request, a waiting receive its application does not poll itself */
} pt_background_next;
void pt_background_poll(pt_background_next *next);
/* Whether pt_background_progress has anything to do: orphans, set-up waiters,
 * or timer requests with a partly marked group (then blocking in the MPI
 * library could starve it: callers poll instead). */
int pt_background_pending(void);
/* The same for partita's progress thread: without what a transport's own
 * thread progresses. */
int pt_background_watched(void);

#endif
