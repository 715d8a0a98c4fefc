/* The rank's file (format partita.trace/1, docs/trace.md): the events sorted
 * per request and time, cut into rounds at each MPI_Start. A round that may
 * have lost events to an overflow (not completed before the first dropped
 * event) is left out and counted, never written half. Written to a temporary
 * name and renamed, so a reader never sees a half-written file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

static const ptr_event *all_events;

static int by_request_then_time(const void *pa, const void *pb)
{
    const ptr_event *a = &all_events[*(const int64_t *)pa], *b = &all_events[*(const int64_t *)pb];
    if (a->req != b->req)
        return a->req < b->req ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    /* same stamp: the start of a round before its other events */
    return (a->kind != EV_START) - (b->kind != EV_START);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void int_or_null(FILE *f, int64_t v, int64_t null_value)
{
    if (v == null_value)
        fputs("null", f);
    else
        fprintf(f, "%lld", (long long)v);
}

static void time_or_null(FILE *f, int64_t ticks)
{
    if (ticks == INT64_MIN)
        fputs("null", f);
    else
        fprintf(f, "%lld", (long long)ptr_ticks_to_ns(ticks));
}

/* One round under construction. */
typedef struct round_buf {
    int64_t start, complete, *stamp; /* stamp: ready (send) or arrived (recv) per partition */
    int *thread;
    int messages, cut;               /* libpartita's layout of a send round (cut: 0 groups, 1 cut, 2 groups
                                        that split); messages 0: unknown */
} round_buf;

#define NONE INT64_MIN

static void round_open(round_buf *r, int P, int64_t t)
{
    r->start = t;
    r->complete = NONE;
    r->messages = 0;
    for (int p = 0; p < P; p++) {
        r->stamp[p] = NONE;
        r->thread[p] = -1;
    }
}

static void round_add(round_buf *r, const ptr_event *e, int P)
{
    if (e->kind == EV_COMPLETE) {
        if (r->complete == NONE)
            r->complete = e->t;
        return;
    }
    if (e->kind == EV_LAYOUT) {
        r->messages = e->a;
        r->cut = e->b;
        return;
    }
    for (int p = e->a; p <= e->b; p++)
        if (p >= 0 && p < P && r->stamp[p] == NONE) {
            r->stamp[p] = e->t;
            r->thread[p] = e->thread;
        }
}

/* Whether every event of the round was surely kept. */
static int round_whole(const round_buf *r, int64_t first_drop)
{
    return first_drop == INT64_MAX || (r->complete != NONE && r->complete < first_drop);
}

static void round_write(FILE *f, const round_buf *r, int P, int send, int first)
{
    fprintf(f, "%s\n        {\"start_ns\": %lld, \"%s\": [", first ? "" : ",", (long long)ptr_ticks_to_ns(r->start),
            send ? "ready_ns" : "arrived_ns");
    for (int p = 0; p < P; p++) {
        fputs(p ? ", " : "", f);
        time_or_null(f, r->stamp[p]);
    }
    if (send) {
        fputs("], \"ready_thread\": [", f);
        for (int p = 0; p < P; p++) {
            fputs(p ? ", " : "", f);
            int_or_null(f, r->thread[p], -1);
        }
    }
    fputs("], \"complete_ns\": ", f);
    time_or_null(f, r->complete);
    if (r->messages > 0)
        fprintf(f, ", \"layout\": {\"messages\": %d, \"cut\": %s%s}", r->messages, r->cut == 1 ? "true" : "false",
                r->cut == 2 ? ", \"split\": true" : ""); /* Partita_Request_layouts' kind */
    fputc('}', f);
}

/* Writes the rounds of request `id` from its sorted events; returns how many. */
static int64_t request_rounds(FILE *f, const ptr_request *q, const int64_t *idx, int64_t n, round_buf *r)
{
    int P = q->partitions, send = q->kind == 0, open = 0;
    int64_t written = 0, first_drop = ptr_first_drop_ns();
    for (int64_t i = 0; i <= n; i++) {
        const ptr_event *e = i < n ? &all_events[idx[i]] : NULL;
        if (!e || e->kind == EV_START) {
            if (open && round_whole(r, first_drop))
                round_write(f, r, P, send, written++ == 0);
            if (e)
                round_open(r, P, e->t);
            open = e != NULL;
        } else if (open)
            round_add(r, e, P);
    }
    return written;
}

static int write_requests(FILE *f, int64_t *dropped_rounds)
{
    int64_t n = 0, kept = 0;
    all_events = ptr_events(&n);
    int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    int maxP = 1;
    for (int i = 0; i < ptr_registry_count(); i++)
        if (ptr_registry_get(i)->partitions > maxP)
            maxP = ptr_registry_get(i)->partitions;
    round_buf r = {.stamp = malloc((size_t)maxP * sizeof(int64_t)), .thread = malloc((size_t)maxP * sizeof(int))};
    if (!idx || !r.stamp || !r.thread)
        return -1;
    for (int64_t i = 0; i < n; i++)
        if (all_events[i].req >= 0)
            idx[kept++] = i;
    qsort(idx, (size_t)kept, sizeof *idx, by_request_then_time);
    *dropped_rounds = 0;
    fputs("  \"requests\": [", f);
    int64_t at = 0;
    for (int id = 0; id < ptr_registry_count(); id++) {
        const ptr_request *q = ptr_registry_get(id);
        int64_t from = at;
        while (at < kept && all_events[idx[at]].req == id)
            at++;
        fprintf(f, "%s\n    {\"id\": %d, \"kind\": \"%s\", \"peer\": %d, \"tag\": %d, \"comm_size\": %d, "
                   "\"partitions\": %d, \"count\": %lld, \"type_size\": %lld, \"bytes\": %lld,\n",
                id ? "," : "", id, q->kind == 0 ? "send" : "recv", q->peer, q->tag, q->comm_size, q->partitions,
                (long long)q->count, (long long)q->type_size, (long long)(q->partitions * q->count * q->type_size));
        if (q->transport && strcmp(q->transport, "unknown") != 0)
            fprintf(f, "      \"transport\": \"%s\",\n", q->transport);
        fputs("      \"rounds\": [", f);
        int64_t rounds = request_rounds(f, q, idx + from, at - from, &r);
        *dropped_rounds += atomic_load(&q->starts) - rounds;
        fputs(rounds ? "\n      ]}" : "]}", f);
    }
    fputs("\n  ]\n", f);
    free(idx);
    free(r.stamp);
    free(r.thread);
    return 0;
}

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

static void write_header(FILE *f, int rank, int size, const ptr_clock *clock, const int64_t time_ns[CAT_COUNT],
                         const int64_t calls[CAT_COUNT])
{
    char host[256] = {0}, library[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
    int len = 0, level = MPI_THREAD_SINGLE;
    gethostname(host, sizeof host - 1);
    PMPI_Get_library_version(library, &len);
    library[strcspn(library, "\n")] = 0;
    PMPI_Query_thread(&level);
    const char *after = ptr_preloaded_after();
    fprintf(f, "{\n  \"format\": \"partita.trace/1\",\n  \"rank\": %d, \"size\": %d,\n  \"hostname\": ", rank, size);
    json_string(f, host);
    fputs(",\n  \"mpi_library\": ", f);
    json_string(f, library);
    fprintf(f, ",\n  \"thread_level\": \"%s\",\n  \"preloaded_after\": %s%s%s,\n", level_name(level),
            after ? "\"" : "", after ? after : "null", after ? "\"" : "");
    fprintf(f, "  \"clock\": {\"reference_rank\": 0, \"offset_ns\": %lld, \"uncertainty_ns\": %lld, \"shared\": %s},\n",
            (long long)clock->offset_ns, (long long)clock->uncertainty_ns, clock->shared ? "true" : "false");
    fprintf(f, "  \"wall\": {\"init_ns\": %lld, \"finalize_ns\": %lld},\n", (long long)ptr_init_ns,
            (long long)ptr_finalize_ns);
    fprintf(f, "  \"mpi_time_ns\": {\"p2p\": %lld, \"collective\": %lld, \"partitioned\": %lld},\n",
            (long long)time_ns[CAT_P2P], (long long)time_ns[CAT_COLLECTIVE], (long long)time_ns[CAT_PARTITIONED]);
    fprintf(f, "  \"mpi_calls\": {\"p2p\": %lld, \"collective\": %lld, \"partitioned\": %lld},\n",
            (long long)calls[CAT_P2P], (long long)calls[CAT_COLLECTIVE], (long long)calls[CAT_PARTITIONED]);
}

/* mkdir -p: the folder and any missing parent (PARTITA_TRACE=results/run1/trace). */
static int make_dirs(const char *dir)
{
    char part[4096];
    size_t n = strlen(dir);
    if (n >= sizeof part) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(part, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (part[i] != '/' && part[i] != '\0')
            continue;
        char c = part[i];
        part[i] = '\0';
        if (mkdir(part, 0777) != 0 && errno != EEXIST)
            return -1;
        part[i] = c;
    }
    return 0;
}

int ptr_dir_ready(const char *dir, char *err, size_t errlen)
{
    if (make_dirs(dir) == 0 && access(dir, W_OK | X_OK) == 0)
        return 0;
    snprintf(err, errlen, "cannot create the trace folder %s: %s (nothing was traced)", dir, strerror(errno));
    return -1;
}

int ptr_write(const char *dir, int rank, int size, const ptr_clock *clock, const int64_t time_ns[CAT_COUNT],
              const int64_t calls[CAT_COUNT])
{
    char path[4096], tmp[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/rank-%05d.json", dir, rank) >= sizeof path) {
        fprintf(stderr, "partita-trace: error: the trace folder name is %zu characters, too long for a path "
                "(rank %d wrote no trace)\n", strlen(dir), rank);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "partita-trace: error: cannot create the trace folder %s: %s (rank %d wrote no trace)\n", dir,
                strerror(errno), rank);
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "partita-trace: error: cannot write %s: %s (rank %d wrote no trace)\n", path, strerror(errno),
                rank);
        return -1;
    }
    /* the requests first (in memory): the overflow counts come out of them */
    char *body = NULL;
    size_t body_len = 0;
    int64_t dropped_rounds = 0;
    FILE *m = open_memstream(&body, &body_len);
    int rc = m ? write_requests(m, &dropped_rounds) : -1;
    if (m)
        fclose(m);
    write_header(f, rank, size, clock, time_ns, calls);
    fprintf(f, "  \"overflow\": {\"dropped_events\": %lld, \"dropped_rounds\": %lld, \"capacity_events\": %lld, "
               "\"untracked_requests\": %lld},\n",
            (long long)ptr_events_dropped(), (long long)dropped_rounds, (long long)ptr_events_capacity(),
            (long long)ptr_registry_untracked());
    if (rc == 0)
        fwrite(body, 1, body_len, f);
    fputs("}\n", f);
    free(body);
    if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "partita-trace: error: cannot write %s: %s (rank %d wrote no trace)\n", path,
                rc ? "out of memory" : strerror(errno), rank);
        remove(tmp);
        return -1;
    }
    return 0;
}
