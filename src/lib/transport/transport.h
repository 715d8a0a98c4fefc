/* The transport seam: how a request's bytes move and how the receiver learns
 * what arrived. The layers above decide which messages a round has (planner/)
 * and when each goes (flush/); a transport only moves them. It is chosen per
 * request: by the sender at init (pt_transport_choose), by the receiver from
 * the set-up message (PT_HS_TRANSPORT), so both ends use the same one. Its
 * state hangs off req->tp. Calls go down into the transport; it reports up
 * only through the two receive upcalls below.
 *
 * Sender messages: message j of a request is the bytes
 * [pt_plan_message_offset(j), pt_plan_message_offset(j+1)) of the user's
 * buffer (a group of consecutive partitions, or a piece of the cut). Under
 * the timer policy a group may go instead in runs of its partitions, then
 * "finished" (send_finish_group) once the rest has gone. */
#ifndef PARTITA_TRANSPORT_H
#define PARTITA_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct pt_request;

/* Sender partitions [first, first + count). */
typedef struct pt_run {
    int first, count;
} pt_run;

/* The receive partition an MPI_Parrived asks about, and the transport
 * messages lo..hi that carry it (the request layer's pt_recv_focus_of; the
 * sender partitions holding its bytes, which a split group sends in runs or
 * alone: pt_recv_sender_span). */
typedef struct pt_recv_focus {
    int part, lo, hi;
} pt_recv_focus;

/* send_runs flags. */
enum {
    PT_RUNS_FIRST_FLUSH = 1, /* the group's first flush this round: later partitions follow alone */
    PT_RUNS_ALONE = 2,       /* partitions of a group after its first flush, each sent alone */
    /* With PT_RUNS_FIRST_FLUSH: the group was split (a stall or a late
     * begin), and in the next PT_AHEAD_ROUNDS rounds it goes alone from the
     * round's start, every partition at its mark. A transport whose runs are
     * not cheap carries it (the receiver posts their receives when the round
     * starts); one whose runs are cheap has nothing to tell the receiver,
     * as each write names what it carries (over the fabric only groups of
     * at most PT_LATE_MAX partitions are announced: flush/timer_flush.c,
     * ahead_pays). */
    PT_RUNS_AHEAD = 4,
    /* Sent because the group's marking stalled (a laggard holds the rest):
     * the receiver can use each partition of these runs as soon as it lands,
     * so a transport may send a long run in several messages. */
    PT_RUNS_EARLY = 8
};
/* Rounds after the one announcing a group ahead (PT_RUNS_AHEAD) in which it
 * goes alone from the start; both sides count them from the announcing
 * round, and keep pt_ahead_end of it. */
#define PT_AHEAD_ROUNDS 16
static inline int pt_ahead_end(int announcing_round) { return announcing_round + 1 + PT_AHEAD_ROUNDS; }
/* Whether `round` is one of the rounds announced ahead up to `end` (0: none). */
static inline int pt_ahead_in(int round, int end) { return round < end && round >= end - PT_AHEAD_ROUNDS; }
/* Whether `round` is the first one after the rounds announced up to `end` (0: none). */
static inline int pt_ahead_just_ended(int round, int end) { return end && round == end; }

typedef struct pt_transport_ops {
    const char *name; /* "mpi" */
    /* 1 when a run lands with no set-up on the receiver (the fabric: a write
     * whose immediate names it). 0 for the MPI transport, whose runs wait for
     * a header to be read and their receives posted: a split group is then
     * announced ahead (PT_RUNS_AHEAD), which such a transport must carry
     * (flush/timer_flush.c); a transport with cheap runs may ignore that
     * flag. */
    int cheap_runs;
    /* Process-wide, at Partita_Init_hook / Partita_Finalize_hook: connect. */
    int (*init)(char *err, size_t errlen);
    void (*finalize)(void);
    /* Process-wide background progress, optional (NULL): whether this
     * transport has traffic that needs the process's progress while it is
     * elsewhere (then waits on ordinary requests poll), and that progress. */
    int (*pending)(void);
    void (*poll)(void);
    /* Optional (NULL: no): whether a thread of the transport's own already
     * polls that traffic, so partita's progress thread need not watch it. */
    int (*self_progressed)(void);
    /* Sender. send_init: the messages are planned (req->u.s: ntrans, cut,
     * bound) and req->hs_buf is allocated: create resources, fill
     * hs_buf[PT_HS_TRANSPORT_ARG], start connecting; never block on the peer. */
    int (*send_init)(struct pt_request *req);
    void (*send_start)(struct pt_request *req);                /* a round begins */
    int (*send_message)(struct pt_request *req, int j);       /* message j whole, at its last mark */
    /* Timer: runs of group g sent early, and the rest of a group sent in runs
     * (after its own runs). Callers serialise these per request. */
    int (*send_runs)(struct pt_request *req, int g, const pt_run *runs, int n, int flags);
    int (*send_finish_group)(struct pt_request *req, int g);
    /* *done: every send posted this round is complete locally. all_issued:
     * every message of the round was handed over; otherwise only message j
     * whose group has req->u.s.groups[j].issued set (the flush layer sets it
     * once send_message or send_finish_group returned) may be looked at.
     * Returns an MPI code (already reported). */
    int (*send_progress)(struct pt_request *req, int all_issued, int *done);
    /* Optional (NULL: nothing to do): move the sends of runs, lone partitions
     * and terminators that the transport may hold back until the sender
     * calls it again, for the progress thread while the application
     * computes. A few tests at most; 1 when every such send of the round is
     * complete, 0 when some is not but some moved (or another thread is at
     * them), -1 when none moved (they wait for the receiver). */
    int (*send_drain)(struct pt_request *req);
    void (*send_destroy)(struct pt_request *req);
    /* Receiver. recv_setup: the set-up message is in req->u.r.hs and the
     * receive plan is built; a failure is recorded as req->u.r.error. */
    int (*recv_setup)(struct pt_request *req);
    int (*recv_start)(struct pt_request *req); /* a round begins: the round's credit (post receives) */
    /* Report arrivals through the upcalls; with a focus (not NULL), look
     * first-hand at what carries the partition MPI_Parrived asks about. */
    int (*recv_progress)(struct pt_request *req, const pt_recv_focus *focus);
    /* Nothing of this round is still owed to the transport itself (e.g. the
     * MPI transport's empty terminators of groups that came in runs). */
    int (*recv_settled)(const struct pt_request *req);
    /* Optional (NULL: yes): whether runs of split groups may still come this
     * round, which need receiving while the application is elsewhere (the
     * receive then stays listed for background progress all round). */
    int (*recv_runs_may_come)(const struct pt_request *req);
    void (*recv_destroy)(struct pt_request *req);
    /* Optional (NULL: nothing to add): what Partita_Request_why says of the
     * request's transport after its name, into text (len bytes). */
    void (*describe)(const struct pt_request *req, char *text, size_t len);
} pt_transport_ops;

/* select.c: the transports by name and by their index (the set-up message's
 * PT_HS_TRANSPORT). */
struct pt_settings;
/* The transport of a send request to world rank peer_world under settings
 * (PARTITA_TRANSPORT / info partita_transport): NULL, with one line in err,
 * when an explicit choice cannot be had in this build. */
const pt_transport_ops *pt_transport_choose(const struct pt_settings *s, int peer_world, char *err, size_t errlen);
/* Background progress of every transport (pending / poll above). */
int pt_transports_pending(void);
/* The same, leaving out transports whose own thread progresses them. */
int pt_transports_unattended(void);
void pt_transports_poll(void);
const pt_transport_ops *pt_transport_by_name(const char *name);
const pt_transport_ops *pt_transport_by_index(int64_t index); /* NULL when unknown */
int64_t pt_transport_index(const pt_transport_ops *ops);
/* The transports of this build, bit b for pt_transport_known_name(b) (NULL
 * past the last name): every rank's libpartita must have the same. */
uint64_t pt_transports_built(void);
const char *pt_transport_known_name(int b);
/* Why a receiver cannot serve a set-up message naming transport `index`,
 * which pt_transport_by_index does not know in this build: one line. */
const char *pt_transport_missing_why(int64_t index);
int pt_transports_init(char *err, size_t errlen);
void pt_transports_finalize(void);

/* Upcalls into the receive plan (request/recv_plan.c), transport-independent. */
/* Every byte of message j is in. */
void pt_recv_message_done(struct pt_request *req, int j);
/* Sender partitions [first, first + count) of group g are in (a run): the
 * receive partitions they complete are reported, and group g's message is
 * done once all its partitions are in. */
void pt_recv_parts_in(struct pt_request *req, int g, int first, int count);

#endif
