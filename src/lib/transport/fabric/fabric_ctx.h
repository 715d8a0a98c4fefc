/* One libfabric endpoint per provider per process: fabric, domain, RDM
 * endpoint, completion queue and address vector, opened at first use and
 * shared by every request. The completion queue carries four kinds of entries:
 *   - our writes completing locally (op context: a pt_fab_op),
 *   - remote writes into our registered buffers, with their remote CQ data
 *     (the "immediate"): handed to handlers.remote_write,
 *   - small control messages with an immediate (address/key replies, credits):
 *     handlers.control,
 *   - errors of either side.
 * Every call below that touches the endpoint needs the context's lock (the
 * domain is opened FI_THREAD_DOMAIN: the lock is the serialisation libfabric
 * asks of us); handlers run with it held. */
#ifndef PARTITA_FABRIC_CTX_H
#define PARTITA_FABRIC_CTX_H

#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <stddef.h>
#include <stdint.h>

#define PT_FAB_NAME_MAX 128 /* endpoint address bytes we carry */
#define PT_FAB_PROV_MAX 32  /* provider name bytes, with the terminating 0 */
#define PT_FAB_CTRL_MAX 256 /* control message payload (the receiver's reply: address, key, buffer) */

typedef struct pt_fab_ctx pt_fab_ctx;

/* The context of one of our operations that completes locally. */
typedef struct pt_fab_op {
    struct fi_context2 fi;                   /* for providers that ask FI_CONTEXT/FI_CONTEXT2 */
    void (*done)(pt_fab_ctx *ctx, struct pt_fab_op *op, int error);
} pt_fab_op;

typedef struct pt_fab_handlers {
    void (*remote_write)(pt_fab_ctx *ctx, uint64_t imm);
    void (*control)(pt_fab_ctx *ctx, uint64_t imm, const void *payload, size_t len);
    /* after each poll: post what waited for a credit or for room in the queue */
    void (*resume)(pt_fab_ctx *ctx);
    /* a completion error that names no operation of ours (e.g. a peer's write failed here) */
    void (*error)(pt_fab_ctx *ctx, int error, const char *what);
} pt_fab_handlers;

/* Install the handlers (once, before the first pt_fab_open). */
void pt_fab_set_handlers(const pt_fab_handlers *h);

/* The process's context for provider (e.g. "shm", "tcp;ofi_rxm"; "tcp" finds
 * "tcp;ofi_rxm" too), opened on first use. Returns 0, or a negative libfabric error with one line in err. */
int pt_fab_open(const char *provider, pt_fab_ctx **out, char *err, size_t errlen);
/* A 0|1 environment setting of the fabric: *on = its value, dflt when unset;
 * -1 with one line in err for any other value. */
int pt_fab_env_flag(const char *name, int dflt, int *on, char *err, size_t errlen);
/* PARTITA_FABRIC_SHM_SWEEP (0|1, default 1), read once: 0 with *on set,
 * or -1 with one line in err for a bad value. */
int pt_fab_shm_sweep_wanted(int *on, char *err, size_t errlen);
/* Remove from dir the shm provider's regions ("PID:N:N", of this user)
 * whose process no longer lives; returns how many (fabric_shm_sweep.c).
 * pt_fab_open does it in /dev/shm before it opens the shm provider, unless
 * PARTITA_FABRIC_SHM_SWEEP=0. */
int pt_fab_shm_sweep(const char *dir);
/* Whether provider can be opened here (fi_getinfo finds it with RMA and remote
 * CQ data), without opening it. */
int pt_fab_provider_available(const char *provider, char *err, size_t errlen);
/* Close every context (at MPI_Finalize; no request may use them after). */
void pt_fab_close_all(void);

/* The provider libfabric gave (e.g. "tcp;ofi_rxm" when "tcp" was asked). */
const char *pt_fab_provider(const pt_fab_ctx *ctx);
/* Our endpoint's address: its length, and its bytes in name (PT_FAB_NAME_MAX). */
size_t pt_fab_name(const pt_fab_ctx *ctx, const void **name);
void pt_fab_lock(pt_fab_ctx *ctx);
void pt_fab_unlock(pt_fab_ctx *ctx);
int pt_fab_trylock(pt_fab_ctx *ctx);
const char *pt_fab_strerror(int rc);

/* Lock held: the fi_addr of a peer's endpoint address (inserted once). */
int pt_fab_peer(pt_fab_ctx *ctx, const void *name, size_t len, fi_addr_t *out);

/* A registered buffer: what a peer needs to write into it is (key, base). */
typedef struct pt_fab_mr {
    struct fid_mr *mr;
    void *desc;     /* local descriptor (FI_MR_LOCAL providers), else NULL */
    uint64_t key;   /* remote key */
    uint64_t base;  /* remote address of the buffer's byte 0 */
} pt_fab_mr;
/* Register [buf, buf+len) for access (FI_REMOTE_WRITE, FI_WRITE, FI_SEND...).
 * A provider that needs no registration for the access gets none (mr NULL). */
int pt_fab_mr_reg(pt_fab_ctx *ctx, void *buf, size_t len, uint64_t access, pt_fab_mr *out);
void pt_fab_mr_close(pt_fab_mr *m);
/* Bytes a control message may carry without a completion (fi_inject). */
size_t pt_fab_inject_size(const pt_fab_ctx *ctx);
/* Whether local buffers must be registered to be sent from (FI_MR_LOCAL). */
int pt_fab_needs_local_mr(const pt_fab_ctx *ctx);

/* Lock held: one RMA write of [buf, buf+len) to (raddr, key) at dest with
 * remote CQ data imm. -FI_EAGAIN: no room now, try again after a poll. */
int pt_fab_write(pt_fab_ctx *ctx, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t raddr,
                 uint64_t key, uint64_t imm, pt_fab_op *op);
/* Lock held: the same write without remote data (nothing in the target's
 * completion queue; over shm the writer copies in the call). */
int pt_fab_write_plain(pt_fab_ctx *ctx, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t raddr,
                       uint64_t key, pt_fab_op *op);
/* Lock held: the same write with no local completion, for len up to the
 * inject size (the data is copied out before it returns); -FI_EMSGSIZE above. */
int pt_fab_inject_write(pt_fab_ctx *ctx, const void *buf, size_t len, fi_addr_t dest, uint64_t raddr, uint64_t key,
                        uint64_t imm);
/* Lock held: a control message (payload <= PT_FAB_CTRL_MAX bytes, may be 0)
 * with immediate imm. Up to the provider's inject size it needs no
 * completion and op is not used; above it the payload (registered as desc
 * when the provider wants local registration) must stay put until op
 * completes (its `done` is called). -FI_EAGAIN as above. */
int pt_fab_control(pt_fab_ctx *ctx, fi_addr_t dest, uint64_t imm, const void *payload, size_t len, void *desc,
                   pt_fab_op *op);

/* Drain up to max completions and dispatch them, then call handlers.resume.
 * Takes the lock unless the caller holds it (locked != 0); if another thread
 * holds it, returns at once (that thread is making progress). Returns the
 * entries handled, or a negative libfabric error. */
int pt_fab_poll(pt_fab_ctx *ctx, int max, int locked);
/* Poll every open context (lock not held). */
int pt_fab_poll_all(int max);

/* An application call's progress reads the completion queues twice: once
 * for every live request (the transport's background poll), then again for
 * the request it serves. pt_fab_queues_read() says this thread has just read
 * them all; pt_fab_poll_again() then skips the next read, once (with the
 * pass over the receive pool that each read made, an MPI_Parrived that
 * finds nothing took about 580 ns; 425 with one read and no pass).
 * The mark is thread-local and used up by the first read it skips, so a
 * stale one costs one skipped read at most: the receive progress that uses
 * it runs right after the background poll, or (a receive still waiting for
 * its set-up) inside that poll just before the queues are read. */
void pt_fab_queues_read(void);
int pt_fab_poll_again(pt_fab_ctx *ctx, int max);

#endif
