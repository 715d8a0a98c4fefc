/* Process-wide state: initialisation, the data communicator, finalisation. */
#ifndef PARTITA_RUNTIME_H
#define PARTITA_RUNTIME_H

#include <mpi.h>

int pt_initialised(void);
/* Private twin of MPI_COMM_WORLD that carries all transport messages. */
MPI_Comm pt_data_comm(void);
int pt_tag_ub(void);
/* A one-line reason when Partita_Init_hook failed ("" otherwise). */
const char *pt_init_error(void);
/* Work that any partita call may do in passing (orphans, timers). */
void pt_background_progress(void);
/* Whether pt_background_progress has anything to do: orphans, set-up waiters,
 * or timer requests with a partly marked group (then blocking in the MPI
 * library could starve it: callers poll instead). */
int pt_background_pending(void);

#endif
