/* Before a fatal MPI_Abort at start-up: the message just written must reach
 * the user. MPI_Abort makes the launcher tear the job down, and MPICH's
 * hydra then dropped a rank's last line in about 1 of 12 runs on a loaded
 * 2-core machine (nothing printed, exit 1); a pause lets it forward it. */
#ifndef PARTITA_ABORT_OUTPUT_H
#define PARTITA_ABORT_OUTPUT_H

#include <stdio.h>
#include <time.h>

static inline void pt_let_launcher_forward_output(void)
{
    fflush(NULL);
    struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);
}

#endif
