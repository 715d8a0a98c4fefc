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
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTM_MAX_SEGMENTS 8
#define PTM_LOGGP_SCHEMA "partita.loggp/1"
#define PTM_TUNING_SCHEMA "partita.tuning/1"

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
    int max_eager_messages; /* most eager messages a layout may send at once; 0: PTM_MAX_EAGER_MESSAGES */
    char source[256];  /* file the parameters came from, or "built-in defaults" */
} ptm_params;

/* ---- parameters ---------------------------------------------------------- */

/* Built-in defaults (MPICH on a shared-memory node of the kind partita was developed on). */
void ptm_params_default(ptm_params *p);
/* Built-in defaults for libpartita's fabric transport (libfabric's shm
 * provider on such a node): used for fabric requests without a measured file. */
void ptm_params_default_fabric(ptm_params *p);
/* Built-in defaults for the MPI library that MPI_Get_library_version names:
 * Open MPI's own when the string says "Open MPI" (its eager limit differs),
 * else ptm_params_default. */
void ptm_params_default_for(ptm_params *p, const char *mpi_version);
/* Load a partita.loggp/1 JSON file. Returns 0, or -1 with a message naming the
 * file in err; p is then left holding the defaults. */
int ptm_params_load(const char *path, ptm_params *p, char *err, size_t errlen);
/* Check a parameter set (segments ordered, values finite and >= 0, G > 0...).
 * Returns 0, or -1 with the reason in err. */
int ptm_params_check(const ptm_params *p, char *err, size_t errlen);
/* The file the library uses by default: $PARTITA_LOGGP if set, else
 * $XDG_CONFIG_HOME/partita/loggp.json, else $HOME/.config/partita/loggp.json.
 * Writes the path to buf; returns 1 when it came from PARTITA_LOGGP, 0 otherwise,
 * -1 when no path can be formed (no HOME). */
int ptm_params_default_path(char *buf, size_t buflen);
/* Load from ptm_params_default_path(): returns 0 when the file was used, 1 when
 * there is no file (built-in defaults, silently, unless PARTITA_LOGGP named it),
 * -1 when the file is unusable (built-in defaults; a one-line warning naming the
 * file goes to stderr once per process). Never fails to fill p. */
int ptm_params_load_default(ptm_params *p);
/* The parameters libpartita plans with: ptm_params_load_default(), and, when
 * it finds no usable file, ptm_params_default_for(mpi_version) instead of the
 * MPICH defaults. Returns what ptm_params_load_default returned. */
int ptm_params_load_for(ptm_params *p, const char *mpi_version);
/* The same for a transport of libpartita: "mpi" is the above; "fabric"
 * (`partita loggp --transport fabric`) is $PARTITA_LOGGP_FABRIC, else
 * loggp-fabric.json next to the default file. ptm_params_load_transport falls
 * back to the fabric's built-in set (ptm_params_default_fabric) when the
 * transport has no file of its own, and returns 2 then. */
int ptm_params_transport_path(const char *transport, char *buf, size_t buflen);
int ptm_params_load_transport(ptm_params *p, const char *transport, const char *mpi_version);
/* Write p as a partita.loggp/1 file. extra_members, if not NULL, is inserted
 * verbatim as further members of the top-level object (e.g. "\"sizes\": [...]").
 * Returns 0, or -1 with a message naming the file in err. */
int ptm_params_save(const char *path, const ptm_params *p, const char *extra_members,
                    char *err, size_t errlen);
/* The same document written to an open stream (not closed). Returns 0 or -1
 * when p is invalid (reason in err). */
int ptm_params_write(FILE *f, const ptm_params *p, const char *extra_members, char *err, size_t errlen);
/* The segment whose range holds a message of `bytes`. */
const ptm_segment *ptm_segment_for(const ptm_params *p, size_t bytes);

/* ---- the PLogGP model ---------------------------------------------------- */

/* Completion time (last byte usable at the receiver, measured from time 0) of
 * nmsg transport messages of msg_bytes[j] bytes that become ready to send at
 * ready_us[j] (any order). */
double ptm_completion_us(const ptm_params *p, size_t nmsg, const size_t *msg_bytes,
                         const double *ready_us);
/* As ptm_completion_us, and the time each message is usable at the receiver in
 * arrival_us[j] (what MPI_Parrived would see). Returns the completion time, or a
 * negative value when an argument is invalid. */
double ptm_arrivals_us(const ptm_params *p, size_t nmsg, const size_t *msg_bytes,
                       const double *ready_us, double *arrival_us);

/* Ready-time patterns of user partitions (relative to the first MPI_Pready). */
typedef enum ptm_pattern {
    PTM_ALL_AT_ONCE = 0, /* every partition ready at 0 */
    PTM_LAGGARD = 1,     /* all ready at 0 but the last, ready at delay_us */
    PTM_UNIFORM = 2      /* ready times spread evenly over [0, delay_us] */
} ptm_pattern;
/* Fill ready_us[0..user_parts-1] for a pattern. Returns 0, -1 on bad arguments. */
int ptm_pattern_ready(ptm_pattern pattern, int user_parts, double delay_us, double *ready_us);

/* Completion time when total_bytes in user_parts equal user partitions (the last
 * takes the remainder) with ready times user_ready (NULL: all at 0) are sent as
 * `transport` messages. transport <= user_parts: messages of contiguous user
 * partitions (group i holds partitions floor(i*U/T) .. floor((i+1)*U/T)-1,
 * ptm_group_first; a group is ready when its last member is). transport >
 * user_parts: the buffer is cut (ptm_cut_us; with transport = k * user_parts
 * every partition in k pieces). user_arrival_us, if not NULL, receives the
 * time each user partition is usable at the receiver. Returns a negative value
 * when an argument is invalid. */
double ptm_grouped_us(const ptm_params *p, size_t total_bytes, int user_parts, int transport,
                      const double *user_ready, double *user_arrival_us);
/* The same for the buffer cut into `transport` byte-balanced messages
 * (message i is bytes ptm_piece_offset(total_bytes, transport, i) up to the
 * next one), which may straddle partition boundaries: a message is ready when
 * every partition it holds bytes of is, and a partition is usable when its
 * last message is. Needs 1 <= transport <= total_bytes and a partition of at
 * least one byte; a negative value otherwise. */
double ptm_cut_us(const ptm_params *p, size_t total_bytes, int user_parts, int transport,
                  const double *user_ready, double *user_arrival_us);
/* Transport message i of T: its bytes [*a, *b) of the buffer and the user
 * partitions [*lo, *hi] it holds bytes of (of U, each total/U bytes, the last
 * taking the remainder). Groups (cut = 0, T <= U): whole partitions
 * (ptm_group_first). Cut: T byte-balanced pieces of the buffer
 * (ptm_piece_offset), which may straddle partition boundaries; needs
 * total >= U. The model's layouts and libpartita's sender both use it. */
void ptm_message_span(size_t total, size_t U, size_t T, int cut, size_t i, size_t *a, size_t *b, size_t *lo,
                      size_t *hi);
/* Byte offset of piece i (0..pieces) of `bytes` cut into `pieces` balanced
 * pieces: floor(bytes * i / pieces). libpartita's sender and receiver cut the
 * buffer with this too. */
size_t ptm_piece_offset(size_t bytes, size_t pieces, size_t i);
/* First user partition of group g when user_parts partitions form `groups`
 * groups of consecutive partitions whose sizes differ by at most one
 * (g = groups gives user_parts). The model's layouts, libpartita's sender
 * and its receiver all group with this. */
static inline int ptm_group_first(int user_parts, int groups, int g)
{
    return (int)((long long)g * user_parts / groups);
}

/* Layouts the model considers. LogGP has no notion of a finite eager queue:
 * MPICH 5 on a shared-memory node moves up to 16 eager messages of 4 KiB in
 * flight at about 0.23 us each, but falls off a cliff with more at once (64
 * pieces of 4 KiB: 60 us where one 256 KiB message takes 25 us; 256 groups of
 * 4 KiB out of 512 partitions of 1 MiB: 139 us against 93 us). So a layout
 * with more than max_eager_messages (file field, PTM_MAX_EAGER_MESSAGES by
 * default; Open MPI's built-in set allows 32) messages in the first (eager)
 * segment of a parameter set that has a protocol switch is not considered, and
 * partitions are cut into pieces of at least PTM_MIN_PIECE_BYTES only while
 * that leaves at most PTM_MAX_CUT_MESSAGES messages (docs/model.md). */
#define PTM_MAX_EAGER_MESSAGES 16
#define PTM_MAX_EAGER_LIMIT 4096 /* largest max_eager_messages a file may give */

/* The parameters' eager-burst limit (0 in a set built field by field: the default). */
static inline int ptm_max_eager_messages(const ptm_params *p)
{
    return p->max_eager_messages > 0 ? p->max_eager_messages : PTM_MAX_EAGER_MESSAGES;
}
/* The largest message the first (eager) segment holds when the set has a
 * protocol switch after it; 0 when it has none (one segment). */
static inline size_t ptm_eager_limit(const ptm_params *p) { return p->nseg > 1 ? p->seg[0].max_bytes : 0; }
/* Whether t messages of total_bytes are more than the parameters'
 * max_eager_messages in the eager segment of a set with a protocol switch:
 * layouts the model leaves out, and so must every planner that uses it. */
int ptm_too_many_eager(const ptm_params *p, size_t total_bytes, long long t);
#define PTM_MIN_PIECE_BYTES 512
#define PTM_MAX_CUT_MESSAGES 16

/* Candidates whose modelled time after the last Pready is within this fraction
 * of the best count as equally good; the fewest messages among them is chosen. */
#define PTM_TIE_TOLERANCE 0.02

/* Transport partition count in [1, user_parts] that minimises the modelled
 * completion time of total_bytes split into user_parts partitions when one
 * partition is late by delay_us (single laggard). Candidates are the divisors
 * of user_parts (at most 128 candidates are tried; see PTM_MAX_EAGER_MESSAGES);
 * ties within PTM_TIE_TOLERANCE go to the smaller count. */
int ptm_optimal_transport(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us);
/* Like ptm_optimal_transport, but, when max_pieces > 1, the buffer may also
 * be cut (ptm_cut_us): into user_parts * k messages (k = 2..max_pieces, pieces
 * of at least PTM_MIN_PIECE_BYTES, at most PTM_MAX_CUT_MESSAGES messages), or
 * into the fewest byte-balanced messages that stay eager, which straddle
 * partition boundaries: below a protocol switch (e.g. eager to rendezvous)
 * several small messages can beat one large one. Returns the message count;
 * *cut (if not NULL) is 1 when the layout cuts the buffer, 0 for groups. */
int ptm_optimal_layout(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us, int max_pieces,
                       int *cut);
/* The layouts ptm_optimal_layout chooses among, best first: by modelled
 * time after the last Pready (delay_us: single laggard), and among those
 * within PTM_TIE_TOLERANCE of the best left, the fewest messages first, so
 * out[0] is ptm_optimal_layout's answer. At most max; returns how many (0 on
 * bad arguments). The adaptive policy tries the first few online. */
typedef struct ptm_ranked_layout {
    int count;
    int cut;          /* byte-balanced pieces of the buffer, not groups */
    double model_us;  /* modelled completion time */
} ptm_ranked_layout;
int ptm_layout_ranking(const ptm_params *p, size_t total_bytes, int user_parts, double delay_us, int max_pieces,
                       ptm_ranked_layout *out, int max);
/* The same for any ready times (user_ready, NULL: all at 0). pow2_only limits
 * the candidates to power-of-two divisors. best_us, if not NULL, receives the
 * modelled time of the chosen count. Returns the count, or 0 on bad arguments. */
int ptm_optimal_transport_ready(const ptm_params *p, size_t total_bytes, int user_parts,
                                const double *user_ready, int pow2_only, double *best_us);

/* Timer policy: how long a partially ready group may wait before its ready
 * run is sent anyway (the overhead one more message costs, g* - G). */
double ptm_default_delta_us(const ptm_params *p, size_t group_bytes);
/* libpartita's default delta for a group of group_parts partitions and
 * group_bytes bytes: ptm_default_delta_us plus twice the model's MPI_Pready
 * cost per partition (a group marked in one go is not split), and at least
 * PTM_TIMER_DELTA_MIN_US. The model's alone is well under 1 us for small
 * groups, and a marking thread that pauses that long (a write being posted,
 * a page fault, another thread on its core) is no laggard: with libpartita's
 * progress thread and no late partition, 16-32 KiB in 512 partitions split a
 * group in up to 259 of 400 rounds per launch over the fabric's shm and up
 * to 323 over MPI (delta 0.3 us; 12 and 4 launches of each), and in 1 round
 * of 12,000 with the floor (docs/library.md, "δ and its floor"). */
#define PTM_TIMER_DELTA_MIN_US 5.0
double ptm_timer_delta_us(const ptm_params *p, size_t group_bytes, int group_parts);

/* ---- fitting (used by partita-loggp; exported for tests and the CLI) ----- */

/* Weighted least-squares line y = a + b*x (w NULL: unweighted). rms_rel, if not
 * NULL, receives the root-mean-square relative residual. Returns 0, -1 when the
 * fit is undetermined (fewer than 2 distinct x). */
int ptm_fit_line(size_t n, const double *x, const double *y, const double *w,
                 double *a, double *b, double *rms_rel);
/* Split the series (x ascending) into at most max_seg pieces that are each
 * well described by a straight line (fitted with relative weights, from at
 * least 3 points of the piece on): a new piece starts at a point that misses the current piece's line by more than rel_tol
 * (relative) when the next lookahead-1 points miss it the same way by more than
 * rel_tol/2; a point that misses alone is an outlier and left out of the fits.
 * starts[0] = 0; returns the number of pieces (0 on bad arguments). */
int ptm_detect_segments(size_t n, const double *x, const double *y, int max_seg,
                        double rel_tol, int lookahead, size_t *starts);

/* One message size measured by partita-loggp with the parameterised round trip
 * PRTT(n, d, s): n messages of s bytes, d microseconds between sends, one reply. */
typedef struct ptm_loggp_sample {
    size_t bytes;
    double prtt1_us;  /* PRTT(1, 0, s): a ping-pong */
    double prttn_us;  /* PRTT(n, 0, s) */
    double prttd_us;  /* PRTT(n, d, s) */
    double delay_us;  /* the d used (the sender must be the bottleneck: d > g + G s) */
    double o_r_us;    /* receive overhead, timed on the receiver with data waiting */
    double o_s_us;    /* send overhead timed around MPI_Send; when < 0 on input, ptm_loggp_derive
                       * sets it to (PRTT(n,d,s) - PRTT(1,0,s)) / (n-1) - d (Netgauge's way) */
    /* Filled by ptm_loggp_derive: */
    double gap_us;    /* (PRTT(n,0,s) - PRTT(1,0,s)) / (n-1) = g + G(s-1) */
    double L_us;      /* PRTT(1,0,s)/2 - o_s - o_r - G(s-1) with the segment's o_s, o_r, G */
    int segment;      /* protocol segment the size belongs to */
} ptm_loggp_sample;

/* Derive LogGP parameters from samples sorted by size: protocol segments are
 * detected on PRTT(1,0,s); per segment g and G by least squares on gap(s), o_s
 * and o_r as the size-independent part of their per-size values, L with the
 * overheads removed; a later segment's extra latency is its handshake_us.
 * Fills the derived sample fields. Returns 0, or -1 with the reason in err. */
int ptm_loggp_derive(ptm_loggp_sample *samples, size_t n, int nmsg, int max_seg, ptm_params *out,
                     char *err, size_t errlen);

/* The same, where the caller knows some protocol switches (a transport's own,
 * e.g. the fabric's inject size and its largest write in pieces): known[k],
 * ascending, is the last size of a segment. They are kept as they are, and
 * switches are detected only beyond the last of them, with the segments
 * max_seg leaves. */
int ptm_loggp_derive_known(ptm_loggp_sample *samples, size_t n, int nmsg, int max_seg, const size_t *known,
                           int nknown, ptm_params *out, char *err, size_t errlen);

/* ---- tuning table (partita.tuning/1) ------------------------------------- */

/* Measured best transport count per (total bytes, user partitions). */
typedef struct ptm_table ptm_table;
/* NULL on error with a message naming the file in err. */
ptm_table *ptm_table_load(const char *path, char *err, size_t errlen);
/* Best transport count for the case, or 0 when the table has nothing close
 * (same user partitions and a measured size within a factor of 2). */
int ptm_table_lookup(const ptm_table *t, size_t total_bytes, int user_parts);
/* Number of entries, for tools. */
size_t ptm_table_size(const ptm_table *t);
void ptm_table_free(ptm_table *t);

#ifdef __cplusplus
}
#endif
#endif
