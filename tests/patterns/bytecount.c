/* A PMPI byte counter for the pattern tests (LD_PRELOAD). It counts the payload
 * bytes the program hands to MPI_Send, MPI_Isend and, per MPI_Start/MPI_Startall
 * of a request made by MPI_Send_init or MPI_Psend_init, the whole buffer
 * (partitions x count x type size). At MPI_Finalize every rank writes
 * "rank R bytes B sends S" to $PATTERNS_BYTECOUNT.R.
 *
 * With PATTERNS_CORRUPT=1, the first send of every rank (MPI_Send, MPI_Isend, a
 * persistent start, or an MPI_Pready of partition 0) gets its first payload byte
 * flipped before it goes out: the programs' data checks must then fail. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct tracked {
    MPI_Request req;
    long long bytes;
    unsigned char *buf; /* the buffer, to corrupt it */
    int partitioned;
} tracked;

#define MAX_TRACKED 4096
static tracked table[MAX_TRACKED];
static int ntracked;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long total_bytes, total_sends;
static int corrupt_done;

static long long type_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    return (long long)count * size;
}

static void add(long long bytes)
{
    __atomic_fetch_add(&total_bytes, bytes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&total_sends, 1, __ATOMIC_RELAXED);
}

/* Flip the first byte of the first non-empty send of this process (once). */
static void maybe_corrupt(const void *buf, long long bytes)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *e = getenv("PATTERNS_CORRUPT");
        enabled = e && e[0] == '1';
    }
    if (!enabled || bytes <= 0 || __atomic_exchange_n(&corrupt_done, 1, __ATOMIC_ACQ_REL))
        return;
    ((unsigned char *)buf)[0] ^= 0x5a;
}

static void track(MPI_Request req, long long bytes, const void *buf, int partitioned)
{
    pthread_mutex_lock(&lock);
    if (ntracked == MAX_TRACKED) {
        fprintf(stderr, "bytecount: too many persistent send requests\n");
        abort();
    }
    table[ntracked++] = (tracked){req, bytes, (unsigned char *)buf, partitioned};
    pthread_mutex_unlock(&lock);
}

static tracked *find(MPI_Request req)
{
    for (int i = 0; i < ntracked; i++)
        if (table[i].req == req)
            return &table[i];
    return NULL;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    long long b = type_bytes(count, type);
    add(b);
    maybe_corrupt(buf, b);
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    long long b = type_bytes(count, type);
    add(b);
    maybe_corrupt(buf, b);
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Send_init(buf, count, type, dest, tag, comm, req);
    track(*req, type_bytes(count, type), buf, 0);
    return rc;
}

int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    int rc = PMPI_Psend_init(buf, partitions, count, type, dest, tag, comm, info, req);
    track(*req, type_bytes(count, type) * partitions, buf, 1);
    return rc;
}

static void started(MPI_Request req)
{
    pthread_mutex_lock(&lock);
    tracked *t = find(req);
    long long b = t ? t->bytes : -1;
    /* a persistent send's data is packed before its start; a partitioned one's after */
    unsigned char *buf = t && !t->partitioned ? t->buf : NULL;
    pthread_mutex_unlock(&lock);
    if (b >= 0)
        add(b);
    if (buf)
        maybe_corrupt(buf, b);
}

int MPI_Start(MPI_Request *req)
{
    started(*req);
    return PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[])
{
    for (int i = 0; i < n; i++)
        started(reqs[i]);
    return PMPI_Startall(n, reqs);
}

int MPI_Pready(int partition, MPI_Request req)
{
    if (partition == 0) {
        pthread_mutex_lock(&lock);
        tracked *t = find(req);
        unsigned char *buf = t ? t->buf : NULL;
        pthread_mutex_unlock(&lock);
        if (buf)
            maybe_corrupt(buf, 1);
    }
    return PMPI_Pready(partition, req);
}

int MPI_Request_free(MPI_Request *req)
{
    pthread_mutex_lock(&lock);
    tracked *t = find(*req);
    if (t)
        *t = table[--ntracked];
    pthread_mutex_unlock(&lock);
    return PMPI_Request_free(req);
}

int MPI_Finalize(void)
{
    const char *prefix = getenv("PATTERNS_BYTECOUNT");
    if (prefix && *prefix) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", prefix, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "rank %d bytes %lld sends %lld\n", rank, total_bytes, total_sends);
            fclose(f);
        }
    }
    return PMPI_Finalize();
}
