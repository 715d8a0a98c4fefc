/* Optional progress thread (PARTITA_PROGRESS_THREAD=1): flushes overdue timer
 * groups and processes set-up messages while the application computes, at
 * the cost of a thread that polls every PARTITA_PROGRESS_US microseconds
 * (default 20) while there is work to watch. Needs MPI_THREAD_MULTIPLE; the
 * interposer asks for it. */
#ifndef PARTITA_PROGRESS_THREAD_H
#define PARTITA_PROGRESS_THREAD_H

/* Whether the environment asks for the thread. */
int pt_progress_thread_wanted(void);
/* Read PARTITA_PROGRESS_US (MPI_Init checks it with the other settings, also when the
 * thread is off). Returns 0, or -1 with a reason in err. */
int pt_progress_interval_load(char *err, unsigned long errlen);
/* Start it (after MPI_Init*). Returns 0, or -1 with a reason in err. */
int pt_progress_thread_start(char *err, unsigned long errlen);
void pt_progress_thread_stop(void);
/* End the thread's idle wait now (there is work to watch); cheap when it is not waiting. */
void pt_progress_thread_kick(void);

#endif
