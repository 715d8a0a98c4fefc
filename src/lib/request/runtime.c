/* Partita_Init_hook / Partita_Comm_attach / Partita_Finalize_hook. */
#include "request/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "flush/timer_registry.h"
#include "partita/config.h"
#include "partita/partita.h"
#include "request/adaptive.h"
#include "request/comm_shadow.h"
#include "request/errors.h"
#include "request/handle_table.h"
#include "request/orphans.h"
#include "request/progress_thread.h"
#include "request/request_list.h"
#include "request/settings.h"
#include "request/setup_waiters.h"
#include "transport/transport.h"

static int initialised;
static int tag_ub = 32767;
static char init_error[512];

int pt_initialised(void) { return initialised; }

static int serial_process;

int pt_serial_process(void) { return serial_process; }
int pt_tag_ub(void) { return tag_ub; }
const char *pt_init_error(void) { return init_error; }
const char *Partita_Init_error(void) { return init_error; }
int Partita_Thread_level_needed(void) { return pt_progress_thread_wanted() ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE; }

/* One list of what background progress serves, for the application's waits
 * (every transport) and for partita's progress thread (not the transports
 * whose own thread polls them). */
static int background_work(int (*transports)(void))
{
    return pt_orphans_pending() || pt_waiters_pending() || pt_timers_pending() || transports();
}

int pt_background_pending(void) { return background_work(pt_transports_pending); }

static void background_poll(pt_background_next *next, const struct pt_request *own)
{
    pt_orphans_poll();
    int help = pt_waiters_poll(own);
    int64_t due = pt_timers_poll();
    pt_transports_poll();
    if (next) {
        next->timer_due = due;
        next->regular = help || pt_orphans_pending() || pt_timers_pending() || pt_transports_unattended();
    }
}

void pt_background_poll(pt_background_next *next) { background_poll(next, NULL); }

void pt_background_progress(void) { background_poll(NULL, NULL); }

void pt_background_progress_beside(const struct pt_request *own) { background_poll(NULL, own); }

int pt_background_watched(void) { return background_work(pt_transports_unattended); }

/* Every rank must load the same libpartita: the transports' set-up differs
 * between builds (the fabric's makes collective calls in MPI_Init that a
 * build without it never makes), so mixed builds would hang or misread each
 * other's set-up messages. Every rank must also want the progress thread or
 * none: it decides the thread level libpartita asks MPI for, and the MPICH
 * 5.0 wheel hangs in its third MPI_Barrier (or fails an assertion) when one
 * rank runs at MPI_THREAD_MULTIPLE and another below. One collective, made
 * by every build before any other, finds a mix: OR of each value and of its
 * complement gives the union and (complemented) the intersection, equal
 * when every rank's is. */
enum { SAME_TRANSPORTS, SAME_VERSION, SAME_THREAD = SAME_VERSION + 2, SAME_WORDS }; /* the version: 2 words */

static int check_same_build(char *err, size_t errlen)
{
    uint64_t mine[2 * SAME_WORDS] = {pt_transports_built()}, all[2 * SAME_WORDS];
    char version[2 * sizeof mine[0]];
    strncpy(version, PARTITA_VERSION, sizeof version); /* its first 16 bytes, zero-padded */
    memcpy(&mine[SAME_VERSION], version, sizeof version);
    mine[SAME_THREAD] = (uint64_t)pt_progress_thread_wanted();
    for (int w = 0; w < SAME_WORDS; w++)
        mine[SAME_WORDS + w] = ~mine[w];
    int rc = PMPI_Allreduce(mine, all, 2 * SAME_WORDS, MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init: the ranks' comparison of their libpartita builds failed");
        return rc;
    }
    int differs[SAME_WORDS];
    for (int w = 0; w < SAME_WORDS; w++)
        differs[w] = all[w] != ~all[SAME_WORDS + w];
    uint64_t some = all[SAME_TRANSPORTS], every = ~all[SAME_WORDS + SAME_TRANSPORTS];
    if (!differs[SAME_TRANSPORTS] && !differs[SAME_VERSION] && !differs[SAME_VERSION + 1]) {
        if (!differs[SAME_THREAD])
            return MPI_SUCCESS;
        snprintf(err, errlen, "MPI_Init: PARTITA_PROGRESS_THREAD differs between ranks (this rank's: %d); every rank "
                 "must set the same value: it decides the MPI thread level libpartita asks for, and MPI libraries "
                 "such as MPICH 5.0 hang when ranks run at different levels", pt_progress_thread_wanted());
        return MPI_ERR_OTHER;
    }
    char have[64] = "";
    for (int b = 0; pt_transport_known_name(b); b++)
        if (mine[SAME_TRANSPORTS] >> b & 1)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", *have ? ", " : "",
                     pt_transport_known_name(b));
    const char *odd = NULL;
    for (int b = 0; pt_transport_known_name(b) && !odd; b++)
        if ((some ^ every) >> b & 1)
            odd = pt_transport_known_name(b);
    if (odd)
        snprintf(err, errlen, "MPI_Init: the ranks load different libpartita builds: the '%s' transport is in some "
                 "ranks' libpartita and not in others' (this rank's has %s); every rank must load the same "
                 "libpartita", odd, have);
    else
        snprintf(err, errlen, "MPI_Init: the ranks load different libpartita versions (this rank's is %s); every "
                 "rank must load the same libpartita", PARTITA_VERSION);
    return MPI_ERR_OTHER;
}

int Partita_Init_hook(void)
{
    if (initialised)
        return MPI_SUCCESS;
    int flag = 0;
    PMPI_Initialized(&flag);
    if (!flag) {
        snprintf(init_error, sizeof init_error, "Partita_Init_hook called before MPI_Init");
        return MPI_ERR_OTHER;
    }
    if (pt_settings_load_env(init_error, sizeof init_error) != 0)
        return MPI_ERR_OTHER;
    pt_errors_init();
    pt_ticks_init();
    int level = MPI_THREAD_MULTIPLE;
    serial_process = PMPI_Query_thread(&level) == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE;
    pt_lists_serial(serial_process);
    int *ub = NULL;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub = (flag && ub) ? *ub : 32767;
    int rc = check_same_build(init_error, sizeof init_error);
    if (rc == MPI_SUCCESS)
        rc = pt_transports_init(init_error, sizeof init_error); /* connect: e.g. the data communicator */
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = pt_adapt_init()) != MPI_SUCCESS) {
        snprintf(init_error, sizeof init_error, "could not create the adaptive policy's communicators");
        return rc;
    }
    /* An armed timer request wakes the progress thread (a callback: the
     * flush layer does not call up into the lifecycle). */
    pt_timers_on_arm(pt_progress_thread_kick);
    if ((rc = pt_shadow_init()) != MPI_SUCCESS || (rc = pt_shadow_attach(MPI_COMM_WORLD)) != MPI_SUCCESS ||
        (rc = pt_shadow_attach(MPI_COMM_SELF)) != MPI_SUCCESS) {
        snprintf(init_error, sizeof init_error, "could not create private communicators");
        return rc;
    }
    initialised = 1;
    if (pt_progress_thread_wanted() && pt_progress_thread_start(init_error, sizeof init_error) != 0)
        return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

int Partita_Comm_attach(MPI_Comm comm)
{
    if (!initialised)
        return MPI_SUCCESS; /* nothing partitioned can happen before init */
    return pt_shadow_attach(comm);
}

int Partita_Finalize_hook(void)
{
    if (!initialised)
        return MPI_SUCCESS;
    pt_progress_thread_stop();
    pt_orphans_finalize();
    pt_shadow_finalize();
    pt_transports_finalize();
    pt_adapt_finalize();
    pt_table_release();
    initialised = 0;
    return MPI_SUCCESS;
}
