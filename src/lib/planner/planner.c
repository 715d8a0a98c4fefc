/* Aggregation planner. The model parameters (PARTITA_LOGGP, and for the
 * fabric transport PARTITA_LOGGP_FABRIC) and the tuning table (PARTITA_TUNING)
 * are read once, on first use; an unreadable file gives one warning on stderr
 * and the built-in defaults (or no table). */
#include "planner/planner.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "partita/model.h"

static ptm_params params;        /* the MPI transport's */
static ptm_params fabric_params; /* the fabric transport's (its own file, else the MPI ones) */
static ptm_table *table;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load_files(void)
{
    char err[512];
    /* $PARTITA_LOGGP, else the file `partita loggp` saved, else the built-in
     * defaults of the MPI library underneath; an unusable file is named in a
     * one-time warning, never fatal */
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
        version[0] = '\0';
    ptm_params_load_for(&params, version);
    ptm_params_load_transport(&fabric_params, "fabric", version);
    const char *path = getenv("PARTITA_TUNING");
    if (path && *path) {
        table = ptm_table_load(path, err, sizeof err);
        if (!table)
            fprintf(stderr, "partita: warning: PARTITA_TUNING: %s; the table policy uses the model\n", err);
    }
}

/* The parameters of the transport the request uses (settings->transport is
 * resolved before planning: auto became mpi or fabric). */
static const ptm_params *params_for(const pt_settings *s)
{
    return s->transport == PT_TRANSPORT_FABRIC ? &fabric_params : &params;
}

static int clamp_parts(long long n, int partitions)
{
    return n < 1 ? 1 : n > partitions ? partitions : (int)n;
}

/* Most transport messages per round under any policy: each is a persistent
 * request on both sides (and takes a tag); `none` with 10^6 partitions made
 * 10^6 of them, 2.5 GB on the sender. */
#define MAX_MESSAGES 4096
#define MAX_FIXED_MESSAGES MAX_MESSAGES

static int modelled(const pt_settings *s, size_t total, int partitions, int can_cut, int *cut)
{
    pthread_once(&loaded, load_files);
    if (total == 0)
        return 1;
    /* The cut pays off below MPI's eager limit; over the fabric every piece is
     * one more write: 64 KiB cut for shm took 1.5-3.4x one MPI_Send, whole
     * 1.0-1.1x (docs/library.md, "The fabric transport"). */
    int cuts = can_cut && s->transport != PT_TRANSPORT_FABRIC;
    int n = ptm_optimal_layout(params_for(s), total, partitions, s->delay_us, cuts ? PTM_MAX_CUT_MESSAGES : 1, cut);
    return *cut ? n : clamp_parts(n, partitions);
}

/* A fixed count n: groups up to the partition count; beyond it, when the
 * partitions can be cut, the buffer cut into n messages (at most one per
 * byte, at most MAX_FIXED_MESSAGES). */
static int fixed(long long n, size_t part_bytes, int partitions, int can_cut, int *cut)
{
    size_t total = part_bytes * (size_t)partitions;
    if (n <= partitions || !can_cut || total <= (size_t)partitions)
        return clamp_parts(n, partitions);
    if (n > MAX_FIXED_MESSAGES)
        n = MAX_FIXED_MESSAGES;
    if ((size_t)n > total)
        n = (long long)total;
    *cut = 1;
    return (int)n;
}

size_t pt_plan_message_offset(size_t part_bytes, int parts, int nmsg, int cut, int j)
{
    if (cut)
        return ptm_piece_offset(part_bytes * (size_t)parts, (size_t)nmsg, (size_t)j);
    return (size_t)ptm_group_first(parts, nmsg, j) * part_bytes;
}

/* Largest transport message in bytes: MPI's counts are ints, and a message
 * of a non-contiguous type has at most one element per byte. */
#define MAX_MESSAGE_BYTES ((size_t)INT_MAX)

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* The policy's count n made to fit MPI's int counts: groups of at most
 * MAX_MESSAGE_BYTES (more groups), or, when one partition alone is larger
 * and the data are contiguous bytes, the buffer cut into pieces of at most
 * that (a non-contiguous partition that large is refused at init). Groups
 * are also capped at MAX_MESSAGES. */
static int fit_counts(int n, size_t part_bytes, int partitions, int can_cut, int *cut)
{
    size_t total = part_bytes * (size_t)partitions;
    if (!*cut && n > MAX_MESSAGES)
        n = MAX_MESSAGES;
    if (part_bytes == 0)
        return n;
    if (*cut) {
        size_t need = ceil_div(total, MAX_MESSAGE_BYTES);
        return (size_t)n >= need ? n : (int)need;
    }
    if (part_bytes <= MAX_MESSAGE_BYTES) {
        size_t per = MAX_MESSAGE_BYTES / part_bytes; /* partitions a group may hold */
        return ceil_div((size_t)partitions, (size_t)n) <= per ? n : (int)ceil_div((size_t)partitions, per);
    }
    if (!can_cut)
        return n;
    *cut = 1;
    size_t need = ceil_div(total, MAX_MESSAGE_BYTES);
    return (size_t)n >= need ? n : (int)need;
}

static int policy_count(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, int *cut);

int pt_plan_transport(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, int *cut)
{
    *cut = 0;
    if (partitions < 1)
        return 1;
    can_cut = can_cut && part_bytes > 0;
    int n = policy_count(s, part_bytes, partitions, can_cut, cut);
    return fit_counts(n, part_bytes, partitions, can_cut, cut);
}

static int policy_count(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, int *cut)
{
    size_t total = part_bytes * (size_t)partitions;
    switch (s->policy) {
    case PT_POLICY_NONE: {
        /* Each partition at its mark. Over MPI, partitions past its eager
         * limit go in eager pieces (pt_plan_late_pieces, the whole buffer as
         * one group for the cap): a cut into partitions x k pieces, whose
         * boundaries fall on the partitions' (ptm_piece_offset), so each
         * piece goes at its partition's mark. Whole, each was a rendezvous
         * message waiting for a handshake (docs/library.md, "Late partitions
         * in eager pieces"). */
        int k = s->transport == PT_TRANSPORT_MPI ? pt_plan_late_pieces(s, part_bytes, partitions, 1, can_cut) : 1;
        if (k > 1) {
            *cut = 1;
            return partitions * k;
        }
        return partitions;
    }
    case PT_POLICY_BULK:
        return 1;
    case PT_POLICY_FIXED:
        return fixed(s->transport_parts, part_bytes, partitions, can_cut, cut);
    case PT_POLICY_STATIC: {
        if (part_bytes == 0)
            return 1;
        size_t per = (s->min_bytes + part_bytes - 1) / part_bytes; /* partitions per group */
        if (per < 1)
            per = 1;
        return clamp_parts((long long)(((size_t)partitions + per - 1) / per), partitions);
    }
    case PT_POLICY_TABLE:
        pthread_once(&loaded, load_files);
        if (table) {
            int n = ptm_table_lookup(table, total, partitions);
            if (n > 0)
                return clamp_parts(n, partitions);
        }
        return modelled(s, total, partitions, can_cut, cut); /* what the table does not know */
    case PT_POLICY_TIMER:
        /* A tuned count, else the model's layout: with no late partition the
         * timer sends what `model` sends. Until 2026-11-25 it took more,
         * smaller groups where the model priced them within 1%, so that a
         * prompt thread's partitions went at their marks under a laggard; on
         * 2026-11-25 that made it lose to `model` in 32-33 of 150 cases
         * (64 KiB-16 MiB, down to 0.88), against 1 with the model's layout,
         * which loses under a laggard at 4 MiB in 2 and 8 partitions (0.94)
         * instead (docs/library.md, "The timer's groups"). */
        if (s->transport_parts > 0)
            return fixed(s->transport_parts, part_bytes, partitions, can_cut, cut);
        return modelled(s, total, partitions, can_cut, cut);
    case PT_POLICY_ADAPTIVE: /* its first candidate (pt_plan_candidates) */
    case PT_POLICY_MODEL:
    default:
        return modelled(s, total, partitions, can_cut, cut);
    }
}

/* The pieces of a partition sent alone (1: whole) and, in *past, whether it
 * is past MPI's eager limit: the two public questions below, from one look
 * at the limit. */
static int lone_pieces(const pt_settings *s, size_t part_bytes, int partitions, int ntrans, int contiguous, int *past)
{
    pthread_once(&loaded, load_files);
    size_t eager = ptm_eager_limit(params_for(s));
    *past = eager && part_bytes > eager;
    /* the largest group: ptm_group_first balances them to within one partition */
    int group_parts = ntrans > 0 ? (int)(((long long)partitions + ntrans - 1) / ntrans) : 0;
    if (!contiguous || !*past || group_parts < 1)
        return 1;
    size_t k = ceil_div(part_bytes, eager);
    return k > PT_MAX_EAGER_PIECES || k * (size_t)group_parts > PT_EAGER_PIECES_MAX_MESSAGES ? 1 : (int)k;
}

int pt_plan_late_pieces(const pt_settings *s, size_t part_bytes, int partitions, int ntrans, int contiguous)
{
    int past;
    return lone_pieces(s, part_bytes, partitions, ntrans, contiguous, &past);
}

/* From this size a partition's own copy dwarfs the handshake it waits for
 * alone, and runs only add their header and the wait for a stall: under
 * `partita-adapt-bench -L 100` (progress thread on, 8 interleaved launches)
 * the timer sent a laggard's block of 256 KiB-1 MiB partitions in runs at
 * 0.92-0.99 of `none`'s speed after the last mark (4 MiB in 8 and 16: 0.92,
 * 0.95), with launches down to 0.43-0.66 where the progress thread found the
 * stall late; alone, announced ahead, at 0.99-1.00 (launches 0.81-1.02),
 * giving up 3.5% at 16 MiB in 64 where runs led (docs/library.md). */
#define PT_LONE_CHEAP_BYTES ((size_t)256 << 10)

int pt_plan_lone_waits(const pt_settings *s, size_t part_bytes, int partitions, int ntrans, int contiguous)
{
    int past, k = lone_pieces(s, part_bytes, partitions, ntrans, contiguous, &past);
    return past && k == 1 && part_bytes < PT_LONE_CHEAP_BYTES;
}

long long pt_plan_delta_ns(const pt_settings *s, size_t group_bytes, int group_parts)
{
    if (s->delta_us >= 0)
        return llround(s->delta_us * 1e3);
    pthread_once(&loaded, load_files);
    return llround(ptm_timer_delta_us(params_for(s), group_bytes, group_parts) * 1e3);
}

/* Whether one message per partition is a candidate layout of `adaptive`
 * whatever the model's price of it: not beyond the model's eager burst, since
 * 512 messages took 0.3-3 ms a round here, and trying them costs rounds (the
 * timer's against its cut: up to PT_PER_PARTITION_MAX, pt_plan_timer_candidates).
 * The parameter files are loaded. */
static int per_partition_candidate(int partitions) { return partitions <= ptm_max_eager_messages(&params); }

/* Beyond the eager burst, adaptive still tries one message per partition
 * (`each`: none's layout, eager pieces included) up to PT_PER_PARTITION_MAX
 * partitions when the model prices that layout within PT_PER_PARTITION_WITHIN
 * of its best (`best_us`): whether 32-64 eager messages in a row run fast
 * depends on the launch's mode of MPICH's eager path, which only measuring
 * tells. 128 KiB in 32 and 256 KiB in 64 partitions are priced at 0.59 and
 * 0.63 of one message; one message per partition was the launch's best in 4
 * and 3 of 5 launches of a `library` suite run, and with it as a candidate
 * adaptive/bulk went from 1.01 to 0.77 and 0.85 (8 launches of each build;
 * docs/library.md). Priced as whole partitions when it goes in pieces, 1 MiB
 * in 64 partitions (16 KiB each: 192 eager pieces, 51 us) came to 183 us
 * against one message's 85 and was never tried, though `none` was the
 * launch's best there. */
#define PT_PER_PARTITION_MAX 64
#define PT_PER_PARTITION_WITHIN 2.0
static int per_partition_worth_trying(size_t total, int partitions, pt_layout each, double best_us)
{
    if (per_partition_candidate(partitions))
        return 1;
    if (partitions > PT_PER_PARTITION_MAX || best_us <= 0)
        return 0;
    double us = ptm_grouped_us(&params, total, partitions, each.count, NULL, NULL);
    return us >= 0 && us <= PT_PER_PARTITION_WITHIN * best_us;
}

/* One message per partition, each sent at its mark: `none`'s layout (over
 * MPI, partitions past the eager limit in eager pieces), so that a policy
 * measuring it against its own is not beaten by `none` itself. */
static pt_layout per_partition_layout(const pt_settings *s, size_t part_bytes, int partitions, int can_cut)
{
    pt_settings none = *s;
    none.policy = PT_POLICY_NONE;
    pt_layout l = { 0, 0, 0 };
    l.count = pt_plan_transport(&none, part_bytes, partitions, can_cut, &l.cut);
    return l;
}

/* A group layout split by the timer when its marking stalls: the data that
 * is ready goes while a laggard holds the rest back, which no layout sent
 * whole can do. When the late partitions lie scattered among the early ones
 * (every fourth partition late), every group waits for one, and sent whole
 * they all go after the laggard; the timer sent 1 MiB in 64 partitions at
 * 2.3x `none`'s perceived bandwidth and `adaptive` without this candidate at
 * 1.2x (docs/library.md, "Which policy under a laggard"). Only with a
 * progress thread: without it nobody sees a stall while the application
 * computes. Its base is the first candidate of groups with more than one
 * partition each; it takes the last slot when all are used, unless that is
 * its base. */
static int add_split_candidate(const pt_settings *s, size_t part_bytes, int partitions, pt_layout *out, int n,
                               int max)
{
    if (!s->background || part_bytes == 0)
        return n;
    for (int k = 0; k < n; k++) {
        if (out[k].cut || out[k].count >= partitions)
            continue;
        int at = n < max ? n++ : k == max - 1 ? -1 : max - 1;
        if (at >= 0)
            out[at] = (pt_layout){ out[k].count, 0, 1 };
        break;
    }
    return n;
}

int pt_plan_candidates(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, pt_layout *out, int max)
{
    pt_settings model = *s;
    model.policy = PT_POLICY_MODEL;
    int n = 0;
    out[n].count = pt_plan_transport(&model, part_bytes, partitions, can_cut, &out[n].cut);
    out[n].split = 0;
    n++;
    if (!s->adapt || max < 2 || partitions < 1 || part_bytes == 0)
        return n;
    pthread_once(&loaded, load_files);
    /* One plain message (MPIPCL's default, and MPICH's own); one per
     * partition, each sent at its mark (the model, planning for all marks
     * at once, ranks it low, but marks spread in time favour it); then the
     * model's next best. */
    /* Ranked with the MPI transport's parameters and cuts over the fabric
     * too, on purpose: its cuts are what can win there in a fast launch,
     * and measuring weeds them out in the others. Ranked with the fabric's
     * own (no cuts), adaptive@fabric/bulk@fabric went from 0.85-0.90 to
     * 0.99-1.01 at 64 KiB in 1-64 partitions (8 interleaved launches of
     * each, docs/library.md, "Adaptive plans"). */
    ptm_ranked_layout ranked[PT_MAX_CANDIDATES_RANKED];
    int nr = ptm_layout_ranking(&params, part_bytes * (size_t)partitions, partitions, s->delay_us,
                                can_cut ? PTM_MAX_CUT_MESSAGES : 1, ranked + 2, PT_MAX_CANDIDATES_RANKED - 2);
    pt_layout each = per_partition_layout(s, part_bytes, partitions, can_cut);
    ranked[0] = (ptm_ranked_layout){ 1, 0, 0 };
    ranked[1] = (ptm_ranked_layout){ each.count, each.cut, 0 };
    for (int k = 0; k < nr + 2 && n < max; k++) {
        if (k == 1 && !per_partition_worth_trying(part_bytes * (size_t)partitions, partitions, each,
                                                  nr > 0 ? ranked[2].model_us : 0))
            continue;
        int cut = ranked[k].cut;
        int count = fit_counts(ranked[k].count, part_bytes, partitions, can_cut && part_bytes > 0, &cut);
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= out[i].count == count && out[i].cut == cut;
        /* The model's next best only when it differs from every candidate
         * so far by half as many messages again: near twins (9, 10 and 11
         * pieces of 64 KiB) measure alike but noisily, and the best of three
         * noisy estimates beats one message by chance (the winner's curse):
         * 64 KiB in 1 partition chose 10 or 11 pieces at 5.4-6.4 us against
         * one message's 7.2-7.4, then took 7.5 us a round to its 7.2-7.3. */
        for (int i = 0; k >= 2 && i < n; i++)
            seen |= out[i].cut == cut && count * 2 < out[i].count * 3 && out[i].count * 2 < count * 3;
        if (!seen)
            out[n++] = (pt_layout){ count, cut, 0 };
    }
    return add_split_candidate(s, part_bytes, partitions, out, n, max);
}

int pt_plan_timer_candidates(const pt_settings *s, size_t part_bytes, int partitions, int can_cut, pt_layout *out)
{
    out[0].count = pt_plan_transport(s, part_bytes, partitions, can_cut, &out[0].cut);
    out[0].split = 0;
    if (!s->adapt || !out[0].cut || s->transport != PT_TRANSPORT_MPI || s->transport_parts > 0 || partitions < 2)
        return 1;
    /* Up to 64 partitions whatever the model's price of the second: with the
     * laggard's partitions scattered (every fourth) every piece of the cut
     * waits for one, and at 64 KiB in 32 and 64 partitions, where the eager
     * burst (16) kept the cut alone, the timer fell to 0.63-0.68 of `none`'s
     * perceived bandwidth; measured against it, to 0.87 and above (two
     * `library`-suite runs of each build, 5 launches). Measuring keeps the
     * cut where no partition is late (docs/library.md). */
    if (partitions > PT_PER_PARTITION_MAX)
        return 1;
    pthread_once(&loaded, load_files);
    out[1] = per_partition_layout(s, part_bytes, partitions, can_cut);
    return 2;
}

/* A split sends at least two messages more than the group whole (its first
 * run's header, the terminator; under a laggard also each late partition
 * alone), and what it can gain is the wire time of the partitions ready
 * early, at most all but one. Below twice one more message's overhead the
 * split only loses: 1-4 KiB as one eager group in 64 partitions, two threads,
 * one 100 us late, took 3-15 us from the last MPI_Pready under the timer (the
 * early half as a run, 32 late partitions alone) against 1.3-1.6 us for
 * model's one message and 2.2 us for none (5 launches); with no late partition
 * such a request paid the timer's bookkeeping for nothing (1 KiB in 2, 8, 64
 * partitions, first mark to last arrival: model 0.62/0.80/2.31 us, the timer
 * 0.76/0.92/2.48 before, 0.62/0.63/1.77 after; medians of 5 launches).
 * Over the fabric too with the MPI transport's parameters: with the
 * fabric's own (a write's fitted overhead is higher) 64 KiB in 64 partitions
 * went whole, and under a laggard took 2x none's time after the last mark
 * where split it took 1.09x (shm, 10 launches of each, side by side; 64 KiB
 * in 8: 1.13x and 1.02x, within the noise). */
int pt_plan_timer_splits(const pt_settings *s, size_t group_bytes, int group_parts)
{
    if (s->delta_us >= 0)
        return 1;
    pthread_once(&loaded, load_files);
    const ptm_segment *seg = ptm_segment_for(&params, group_bytes);
    double early = seg->G * (double)group_bytes * (1.0 - 1.0 / group_parts);
    return early > 2.0 * ptm_default_delta_us(&params, group_bytes);
}
