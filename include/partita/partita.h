/* libpartita: MPI-4 partitioned point-to-point communication layered over the
 * ordinary point-to-point calls of any MPI-3 library, with partition aggregation.
 *
 * The Partita_* calls mirror the standard MPI_* calls one to one and use real
 * MPI_Request handles, so partitioned and ordinary requests can be mixed in
 * one array (Partita_Waitall, Partita_Testsome, ...): requests that are not
 * partita's are passed on to the MPI library.
 *
 * Programs that use the standard names get all of this without a rebuild by
 * loading libpartita-mpi.so (LD_PRELOAD, or link it before the MPI library):
 * it exports MPI_Psend_init, MPI_Pready, MPI_Wait, ... and calls these.
 *
 * Programs that call Partita_* directly must call Partita_Init_hook() right
 * after MPI_Init/MPI_Init_thread, Partita_Comm_attach() on every communicator
 * other than MPI_COMM_WORLD and MPI_COMM_SELF that carries partitioned traffic,
 * and Partita_Finalize_hook() before MPI_Finalize. The interposer does all three.
 *
 * Aggregation policy (docs/library.md): per request through MPI_Info keys
 * "partita_policy", "partita_min_bytes", "partita_delta_us",
 * "partita_transport_parts", "partita_delay_us", "partita_adapt"; for every
 * request through the environment variables PARTITA_POLICY, PARTITA_MIN_BYTES,
 * PARTITA_DELTA_US, PARTITA_TRANSPORT_PARTS, PARTITA_DELAY_US, PARTITA_ADAPT,
 * PARTITA_LOGGP, PARTITA_TUNING. */
#ifndef PARTITA_PARTITA_H
#define PARTITA_PARTITA_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libpartita is built with hidden symbols; these are its interface. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Set-up. Init_hook is collective over MPI_COMM_WORLD; Comm_attach is
 * collective over comm (the interposer calls it in every communicator
 * constructor). Calling either twice is harmless. */
int Partita_Init_hook(void);
int Partita_Comm_attach(MPI_Comm comm);
int Partita_Finalize_hook(void);
/* Why Partita_Init_hook failed, one line ("" when it did not). */
const char *Partita_Init_error(void);
/* The thread level partita needs from MPI_Init_thread: MPI_THREAD_MULTIPLE
 * when the environment asks for a progress thread, else MPI_THREAD_SINGLE. */
int Partita_Thread_level_needed(void);
/* How partita's progress thread (PARTITA_PROGRESS_THREAD=1) has waited since
 * MPI_Init: *short_waits at its regular interval (PARTITA_PROGRESS_US, while
 * something needs watching), *long_waits up to 1 ms (nothing to watch, or
 * only receives their application polls). Both 0 without the thread. Tells
 * how much of a core the thread took; MPI_SUCCESS. */
int Partita_Progress_thread_waits(long long *short_waits, long long *long_waits);

/* Partitioned initialisation and marking, as MPI_Psend_init ... MPI_Parrived. */
int Partita_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int Partita_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                       int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int Partita_Pready(int partition, MPI_Request request);
int Partita_Pready_range(int partition_low, int partition_high, MPI_Request request);
int Partita_Pready_list(int length, const int array_of_partitions[], MPI_Request request);
int Partita_Parrived(MPI_Request request, int partition, int *flag);

/* Request calls; each accepts partita's and ordinary requests alike. */
int Partita_Start(MPI_Request *request);
int Partita_Startall(int count, MPI_Request array_of_requests[]);
int Partita_Wait(MPI_Request *request, MPI_Status *status);
int Partita_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int Partita_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int Partita_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[]);
int Partita_Test(MPI_Request *request, int *flag, MPI_Status *status);
int Partita_Testall(int count, MPI_Request array_of_requests[], int *flag,
                    MPI_Status array_of_statuses[]);
int Partita_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                    MPI_Status *status);
int Partita_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                     int array_of_indices[], MPI_Status array_of_statuses[]);
int Partita_Request_free(MPI_Request *request);
int Partita_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int Partita_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                   MPI_Status array_of_statuses[]);
int Partita_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index,
                                   int *flag, MPI_Status *status);
int Partita_Request_get_status_some(int incount, const MPI_Request array_of_requests[],
                                    int *outcount, int array_of_indices[],
                                    MPI_Status array_of_statuses[]);
int Partita_Cancel(MPI_Request *request);

/* Introspection (tests, benchmarks). */
/* 1 when request is a partita partitioned request, else 0. */
int Partita_Is_partitioned(MPI_Request request);
/* Number of transport messages per round and the policy name of a partitioned
 * request (on a receive request: -1 and the sender's policy is unknown until
 * the sender's set-up message arrived). policy may be NULL. */
int Partita_Request_plan(MPI_Request request, int *transport_parts, const char **policy);
/* The candidate layouts of a request and the one of its current (or last)
 * round: the adaptive policy plans up to 4 and tries them online (on a
 * receive request once the set-up message arrived); other policies have one.
 * *ncand layouts (0 before set-up and with MPI_PROC_NULL); the message count
 * and kind (1: byte-balanced pieces of the buffer, 0: groups of whole
 * partitions, 2: groups that the timer's flush splits when their marking
 * stalls, the adaptive policy's candidate with a progress thread) of the
 * first max go to counts and cuts (either may be NULL); *current is the
 * index of the round's layout (-1 when there is none). */
int Partita_Request_layouts(MPI_Request request, int max, int counts[], int cuts[], int *ncand, int *current);
/* What a request's plan is and why, in words: the policy, the layout in use,
 * and for the adaptive policy the candidates and the last decision with the
 * medians it was made from. text gets at most len bytes, NUL-terminated
 * (text NULL or len < 1: MPI_ERR_ARG). */
int Partita_Request_why(MPI_Request request, char *text, int len);
/* Send request under the timer policy: runs and lone partitions sent for
 * split groups (groups the timer did not wait for) in the current or last
 * round; 0 for other policies. */
int Partita_Request_runs(MPI_Request request, int *runs);
/* The transport that moves a partitioned request's bytes: "mpi" or "fabric"
 * (PARTITA_TRANSPORT, info partita_transport; under "auto" the one chosen);
 * on a receive request "unknown" until the sender's set-up message arrived,
 * and "none" for MPI_PROC_NULL. */
int Partita_Request_transport(MPI_Request request, const char **name);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
