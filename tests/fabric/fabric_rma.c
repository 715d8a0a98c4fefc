/* The fabric layer on its own (2 ranks): the receiver registers its buffer and
 * sends its endpoint address, key and buffer address over MPI (non-blocking,
 * progressing the fabric meanwhile); each round it grants the sender a credit
 * over the fabric; the sender then moves the buffer in `messages` writes
 * with remote CQ data, the last round in timer-style runs. The receiver checks
 * every byte and that each immediate names a message (or run) once.
 * Usage: partita-test-fabric-rma PROVIDER [BYTES [MESSAGES [ROUNDS]]]
 * Exit 77 (skipped) when PROVIDER is not available here. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/fabric/fabric_api.h"
#include "transport/fabric/fabric_ctx.h"
#include "transport/fabric/fabric_ids.h"
#include "transport/fabric/fabric_wire.h"

#define TAG_HELLO 11
#define TAG_REPLY 12
#define TAG_RESULT 13

typedef struct state {
    int messages;             /* receiver: per-message arrival counts this round */
    int *seen;
    int runs_in;              /* receiver: partitions arrived in runs */
    int bad;                  /* receiver: immediates naming nothing, or twice */
    int credits;              /* sender: credits granted */
    int completed;            /* sender: local write completions */
    int errors;
    uint32_t my_id;
} state;

static state st;

static void on_write(pt_fab_ctx *ctx, uint64_t imm)
{
    (void)ctx;
    if (pt_fab_id_find(pt_imm_id(imm)) != &st) {
        st.bad++;
        return;
    }
    if (pt_imm_kind(imm) == PT_IMM_MESSAGE) {
        uint64_t j = pt_imm_low(imm);
        if (j >= (uint64_t)st.messages || st.seen[j]++)
            st.bad++;
    } else if (pt_imm_kind(imm) == PT_IMM_RUN) {
        uint32_t first = pt_imm_run_first(imm), count = pt_imm_run_count(imm);
        for (uint32_t p = first; p < first + count; p++)
            if (p >= (uint32_t)st.messages || st.seen[p]++)
                st.bad++;
        st.runs_in += (int)count;
    } else
        st.bad++;
}

static void on_control(pt_fab_ctx *ctx, uint64_t imm, const void *payload, size_t len)
{
    (void)ctx, (void)payload, (void)len;
    if (pt_imm_kind(imm) == PT_IMM_CREDIT && pt_fab_id_find(pt_imm_id(imm)) == &st)
        st.credits++;
    else
        st.bad++;
}

static void on_error(pt_fab_ctx *ctx, int error, const char *what)
{
    fprintf(stderr, "fabric-rma: completion error on %s: %s (%s)\n", pt_fab_provider(ctx), pt_fab_strerror(error),
            what ? what : "");
    st.errors++;
}

static void on_done(pt_fab_ctx *ctx, pt_fab_op *op, int error)
{
    (void)ctx, (void)op;
    if (error) {
        fprintf(stderr, "fabric-rma: write failed: %s\n", pt_fab_strerror(error));
        st.errors++;
    }
    st.completed++;
}

/* Progress the fabric until the MPI request completes. */
static void wait_mpi(pt_fab_ctx *ctx, MPI_Request *r)
{
    int done = 0;
    while (!done) {
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
        pt_fab_poll(ctx, 64, 0);
    }
}

static void die(int rank, const char *what, int rc)
{
    fprintf(stderr, "fabric-rma: rank %d: %s: %s\n", rank, what, pt_fab_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pattern(int round, size_t i) { return (unsigned char)(round * 31 + i * 7 + (i >> 8)); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s PROVIDER [BYTES [MESSAGES [ROUNDS]]]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *provider = argv[1];
    size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 10) : 1 << 20;
    int messages = argc > 3 ? atoi(argv[3]) : 64;
    int rounds = argc > 4 ? atoi(argv[4]) : 4;
    if (messages < 1 || (size_t)messages > bytes || rounds < 2) {
        if (rank == 0)
            fprintf(stderr, "fabric-rma: need 1 <= MESSAGES <= BYTES and ROUNDS >= 2\n");
        MPI_Finalize();
        return 2;
    }
    char err[256] = "";
    int avail = pt_fab_provider_available(provider, err, sizeof err), both;
    MPI_Allreduce(&avail, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!both) {
        if (rank == 0)
            printf("SKIP: %s\n", err[0] ? err : "provider missing on the other rank");
        MPI_Finalize();
        return 77;
    }
    pt_fab_handlers h = {.remote_write = on_write, .control = on_control, .error = on_error};
    pt_fab_set_handlers(&h);
    pt_fab_ctx *ctx;
    int rc = pt_fab_open(provider, &ctx, err, sizeof err);
    if (rc) {
        fprintf(stderr, "fabric-rma: rank %d: %s\n", rank, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    st.my_id = pt_fab_id_new(&st);
    st.messages = messages;
    st.seen = calloc((size_t)messages, sizeof *st.seen);
    unsigned char *buf = malloc(bytes);
    size_t per = bytes / (size_t)messages;
    int failures = 0;

    if (rank == 1) { /* receiver */
        pt_fab_hello hello;
        MPI_Request r;
        MPI_Irecv(&hello, sizeof hello, MPI_BYTE, 0, TAG_HELLO, MPI_COMM_WORLD, &r);
        pt_fab_mr mr;
        if ((rc = pt_fab_mr_reg(ctx, buf, bytes, FI_REMOTE_WRITE, &mr)))
            die(rank, "fi_mr_reg", rc);
        pt_fab_reply reply = {.base = mr.base, .key = mr.key, .bytes = bytes, .receiver_id = st.my_id};
        const void *name;
        reply.namelen = (uint32_t)pt_fab_name(ctx, &name);
        memcpy(reply.name, name, reply.namelen);
        MPI_Request s;
        MPI_Isend(&reply, sizeof reply, MPI_BYTE, 0, TAG_REPLY, MPI_COMM_WORLD, &s);
        wait_mpi(ctx, &r);
        wait_mpi(ctx, &s);
        fi_addr_t sender;
        pt_fab_lock(ctx);
        if ((rc = pt_fab_peer(ctx, hello.cand[0].name, hello.cand[0].namelen, &sender)))
            die(rank, "fi_av_insert", rc);
        pt_fab_unlock(ctx);
        for (int k = 0; k < rounds; k++) {
            memset(buf, 0xff, bytes);
            memset(st.seen, 0, (size_t)messages * sizeof *st.seen);
            st.runs_in = 0;
            pt_fab_lock(ctx);
            while ((rc = pt_fab_control(ctx, sender, pt_imm(PT_IMM_CREDIT, hello.sender_id, (uint64_t)k + 1), NULL, 0, NULL, NULL)) ==
                   -FI_EAGAIN)
                pt_fab_poll(ctx, 64, 1);
            pt_fab_unlock(ctx);
            if (rc)
                die(rank, "fi_injectdata (credit)", rc);
            int in = 0;
            while (in < messages && !st.errors) {
                pt_fab_poll(ctx, 64, 0);
                in = 0;
                for (int j = 0; j < messages; j++)
                    in += st.seen[j] != 0;
            }
            size_t wrong = 0;
            for (size_t i = 0; i < (size_t)messages * per; i++)
                wrong += buf[i] != pattern(k, i);
            int last = k == rounds - 1;
            if (wrong || st.bad || (last && st.runs_in != messages)) {
                fprintf(stderr, "fabric-rma: round %d: %zu wrong bytes, %d bad immediates, %d of %d in runs\n", k,
                        wrong, st.bad, st.runs_in, last ? messages : 0);
                failures++;
            }
        }
        pt_fab_mr_close(&mr);
    } else { /* sender */
        pt_fab_hello hello = {.magic = PT_FAB_HELLO_MAGIC, .sender_id = st.my_id, .host = pt_fab_host_hash(), .ncand = 1};
        snprintf(hello.cand[0].provider, sizeof hello.cand[0].provider, "%s", provider);
        const void *name;
        hello.cand[0].namelen = (uint32_t)pt_fab_name(ctx, &name);
        memcpy(hello.cand[0].name, name, hello.cand[0].namelen);
        pt_fab_reply reply;
        MPI_Request r, s;
        MPI_Isend(&hello, sizeof hello, MPI_BYTE, 1, TAG_HELLO, MPI_COMM_WORLD, &s);
        MPI_Irecv(&reply, sizeof reply, MPI_BYTE, 1, TAG_REPLY, MPI_COMM_WORLD, &r);
        wait_mpi(ctx, &s);
        wait_mpi(ctx, &r);
        fi_addr_t receiver;
        pt_fab_lock(ctx);
        if ((rc = pt_fab_peer(ctx, reply.name, reply.namelen, &receiver)))
            die(rank, "fi_av_insert", rc);
        pt_fab_unlock(ctx);
        pt_fab_mr mr;
        if ((rc = pt_fab_mr_reg(ctx, buf, bytes, FI_WRITE, &mr)))
            die(rank, "fi_mr_reg", rc);
        pt_fab_op *ops = calloc((size_t)messages, sizeof *ops);
        for (int k = 0; k < rounds; k++) {
            for (size_t i = 0; i < bytes; i++)
                buf[i] = pattern(k, i);
            while (st.credits <= k && !st.errors)
                pt_fab_poll(ctx, 64, 0);
            st.completed = 0;
            int last = k == rounds - 1; /* the last round goes in runs of one partition each */
            for (int j = 0; j < messages; j++) {
                ops[j].done = on_done;
                uint64_t imm = last ? pt_imm_run(reply.receiver_id, (uint32_t)j, 1)
                                    : pt_imm(PT_IMM_MESSAGE, reply.receiver_id, (uint64_t)j);
                pt_fab_lock(ctx);
                while ((rc = pt_fab_write(ctx, buf + (size_t)j * per, per, mr.desc, receiver,
                                          reply.base + (size_t)j * per, reply.key, imm, &ops[j])) == -FI_EAGAIN)
                    pt_fab_poll(ctx, 64, 1);
                pt_fab_unlock(ctx);
                if (rc)
                    die(rank, "fi_writedata", rc);
            }
            while (st.completed < messages && !st.errors)
                pt_fab_poll(ctx, 64, 0);
        }
        /* wait for the receiver's verdict while progressing (rxm needs it for the last acks) */
        pt_fab_mr_close(&mr);
        free(ops);
    }
    failures += st.errors;
    int total;
    MPI_Request red;
    MPI_Iallreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &red);
    wait_mpi(ctx, &red);
    if (rank == 0) {
        uint32_t v = pt_fi_load(NULL, 0)->version(); /* loaded: the context is open */
        printf("%s: %s, %zu bytes in %d writes x %d rounds (last in runs), libfabric %u.%u\n",
               total ? "FAIL" : "PASS", provider, (size_t)messages * per, messages, rounds, FI_MAJOR(v), FI_MINOR(v));
    }
    pt_fab_id_release(st.my_id);
    pt_fab_close_all();
    free(buf);
    free(st.seen);
    MPI_Finalize();
    return total ? 1 : 0;
}
