/* partita model: LogGP parameters, the Partitioned LogGP (PLogGP) model and the
 * tuning table. Pure computation, no MPI: linked into libpartita (the `model`,
 * `timer` and `table` policies) and loaded by the Python CLI through ctypes
 * (libpartita-model.so), so both use one implementation.
 *
 * Units: times in microseconds, sizes in bytes, G in microseconds per byte.
 * The equations are partita's own derivation from LogGP (docs/model.md). */
#ifndef PARTITA_MODEL_H
#define PARTITA_MODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTM_MAX_SEGMENTS 8

/* LogGP parameters valid for messages of size <= max_bytes (the last segment
 * covers everything above the previous one). A rendezvous segment pays
 * handshake_us extra per message. */
typedef struct ptm_segment {
    size_t max_bytes;
    double L, o_s, o_r, g, G;
    double handshake_us;
} ptm_segment;

typedef struct ptm_params {
    int nseg;
    ptm_segment seg[PTM_MAX_SEGMENTS];
    double o_pready;   /* software cost of one MPI_Pready (atomic + bookkeeping) */
    char source[256];  /* file the parameters came from, or "built-in defaults" */
} ptm_params;

/* Built-in defaults (a shared-memory node of the kind partita was developed on). */
void ptm_params_default(ptm_params *p);
/* Load a partita.loggp/1 JSON file. Returns 0, or -1 with a message naming the
 * file in err; p is then left holding the defaults. */
int ptm_params_load(const char *path, ptm_params *p, char *err, size_t errlen);
/* The segment whose range holds a message of `bytes`. */
const ptm_segment *ptm_segment_for(const ptm_params *p, size_t bytes);

/* Completion time (last byte usable at the receiver, measured from time 0) of
 * nmsg transport messages of msg_bytes[j] bytes that become ready to send at
 * ready_us[j] (any order). */
double ptm_completion_us(const ptm_params *p, size_t nmsg, const size_t *msg_bytes,
                         const double *ready_us);

/* Transport partition count in [1, user_parts] that minimises the modelled
 * completion time of total_bytes split into user_parts partitions when one
 * partition is late by delay_us (single laggard). Candidates are the divisors
 * of user_parts. */
int ptm_optimal_transport(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us);

/* Timer policy: how long a partially ready group may wait before its ready
 * run is sent anyway (the overhead one more message costs, g* - G). */
double ptm_default_delta_us(const ptm_params *p, size_t group_bytes);

/* Tuning table (partita.tuning/1): measured best transport count per
 * (total bytes, user partitions). */
typedef struct ptm_table ptm_table;
ptm_table *ptm_table_load(const char *path, char *err, size_t errlen);
/* Best transport count for the case, or 0 when the table has nothing close. */
int ptm_table_lookup(const ptm_table *t, size_t total_bytes, int user_parts);
void ptm_table_free(ptm_table *t);

#ifdef __cplusplus
}
#endif
#endif
