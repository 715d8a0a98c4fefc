/* Transfers at MPI's 2^31 boundary: aggregation must never make a transport
 * message over INT_MAX elements or bytes.
 *   large plan
 *       1 rank, no memory used: 64 partitions of 48 MiB (3 GiB) under every
 *       policy must initialise, with at least 2 transport messages; a buffer
 *       of 10^6 one-byte partitions under `none` has at most 4096; one
 *       partition of a non-contiguous type over INT_MAX bytes is refused at
 *       init with MPI_ERR_COUNT and a message saying so.
 *   large transfer -k KIND -s PARTS
 *       2 ranks, one round, every byte checked. KIND:
 *         bytes    one MPI_BYTE partition group of 2^31 bytes in total
 *         ints     MPI_INT, 2^29 + 1 elements in total (elements below
 *                  INT_MAX, bytes above)
 *         derived  a 255-byte element with a 1-byte gap (non-contiguous),
 *                  received as MPI_BYTE, 2^31 + 255·PARTS bytes in total
 *       The run is skipped (one line, exit 0) when MemAvailable cannot hold
 *       both buffers with 1 GiB to spare. */
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptest.h"

typedef int (*plan_fn)(MPI_Request, int *, const char **);

static int plan_of(MPI_Request req)
{
    plan_fn plan = (plan_fn)dlsym(RTLD_DEFAULT, "Partita_Request_plan");
    int n = -1;
    if (plan)
        plan(req, &n, NULL);
    return n;
}

/* Address space only: init never touches the buffer. */
static char *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Init a pair on MPI_COMM_SELF under `policy` and return the send plan. */
static int self_plan(char *buf, int parts, MPI_Count count, MPI_Datatype type, const char *policy, int *rc)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "partita_policy", policy);
    if (!strcmp(policy, "fixed"))
        MPI_Info_set(info, "partita_transport_parts", "1");
    MPI_Request s = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL;
    int n = -1;
    *rc = MPI_Psend_init(buf, parts, count, type, 0, 11, MPI_COMM_SELF, info, &s);
    if (*rc == MPI_SUCCESS) {
        n = plan_of(s);
        OK(MPI_Precv_init(buf, parts, count, type, 0, 11, MPI_COMM_SELF, MPI_INFO_NULL, &r));
        OK(MPI_Request_free(&s));
        OK(MPI_Request_free(&r));
    }
    MPI_Info_free(&info);
    return n;
}

static void plans(void)
{
    static const char *const policies[] = { "none", "bulk", "static", "model", "timer", "fixed", "table" };
    size_t part = (size_t)48 << 20, total = 64 * part;
    char *buf = reserve(total);
    CHECK(buf, "cannot reserve 3 GiB of address space");
    if (!buf)
        return;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (size_t k = 0; k < sizeof policies / sizeof *policies; k++) {
        int rc;
        int n = self_plan(buf, 64, (MPI_Count)part, MPI_BYTE, policies[k], &rc);
        CHECK(rc == MPI_SUCCESS, "64 partitions of 48 MiB under %s: init failed", policies[k]);
        /* groups of ceil(64 / n) partitions: at most 42 fit in INT_MAX bytes */
        CHECK(rc != MPI_SUCCESS || (n >= 2 && (64 + n - 1) / n * part <= (size_t)INT_MAX),
              "64 partitions of 48 MiB under %s: %d transport messages", policies[k], n);
    }
    /* one partition of 3 GiB: cut into pieces */
    int rc;
    int n = self_plan(buf, 1, (MPI_Count)total, MPI_BYTE, "model", &rc);
    CHECK(rc == MPI_SUCCESS && n >= 2, "one partition of 3 GiB: rc %d, %d messages", rc, n);
    n = self_plan(buf, 1000000, 1, MPI_BYTE, "none", &rc);
    CHECK(rc == MPI_SUCCESS && n >= 1 && n <= 4096, "10^6 partitions under none: rc %d, %d messages", rc, n);
    /* a non-contiguous partition over INT_MAX bytes: refused, and said so */
    MPI_Datatype gap;
    MPI_Type_vector(1, 255, 256, MPI_BYTE, &gap);
    MPI_Datatype gapped;
    MPI_Type_create_resized(gap, 0, 256, &gapped);
    MPI_Type_commit(&gapped);
    MPI_Request s = MPI_REQUEST_NULL;
    rc = MPI_Psend_init(buf, 1, (MPI_Count)(total / 256), gapped, 0, 12, MPI_COMM_SELF, MPI_INFO_NULL, &s);
    ptest_expect_says(rc, MPI_ERR_COUNT, "non-contiguous partition of 3 GiB", "MPI_Psend_init", "INT_MAX", NULL);
    if (rc == MPI_SUCCESS)
        MPI_Request_free(&s);
    MPI_Type_free(&gapped);
    MPI_Type_free(&gap);
    munmap(buf, total);
}

static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* The expected value of data byte i (a position-dependent pattern). */
static inline unsigned char pattern(size_t i) { return (unsigned char)(i ^ (i >> 8) ^ (i >> 16) ^ (i >> 24)); }

static void transfer(const char *kind, int parts)
{
    int rank = ptest_pair_rank("large");
    MPI_Datatype stype = MPI_BYTE, rtype = MPI_BYTE;
    size_t selem = 1, sext = 1, elems; /* bytes and extent of a send element; elements in all */
    if (parts < 1)
        ptest_usage("large: -s must be at least 1");
    if (!strcmp(kind, "bytes")) {
        elems = (size_t)1 << 31;
    } else if (!strcmp(kind, "ints")) {
        stype = rtype = MPI_INT, selem = sext = 4;
        elems = ((size_t)1 << 29) + 1;
    } else if (!strcmp(kind, "derived")) {
        MPI_Datatype v;
        MPI_Type_vector(1, 255, 256, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, 256, &stype);
        MPI_Type_commit(&stype);
        MPI_Type_free(&v);
        selem = 255, sext = 256;
        elems = (size_t)parts * ((((size_t)1 << 31) / 255) / (size_t)parts + 1); /* just over 2^31 bytes */
    } else {
        ptest_usage("large: -k bytes|ints|derived");
        return;
    }
    if (elems % (size_t)parts)
        ptest_usage("large: the elements must divide among the partitions");
    size_t data = elems * selem; /* bytes in all */
    MPI_Count scount = (MPI_Count)(elems / (size_t)parts);
    MPI_Count rcount = (MPI_Count)(data / (size_t)parts / (rtype == MPI_INT ? 4 : 1));
    size_t sbytes = elems * sext, need = sbytes + data + ((size_t)1 << 30);
#if defined(__SANITIZE_ADDRESS__)
    need += need / 8; /* AddressSanitizer's shadow memory */
#endif
    long long avail = mem_available();
    int skip = avail >= 0 && (size_t)avail < need;
#if defined(__SANITIZE_THREAD__)
    skip = 2; /* ThreadSanitizer's shadow is several times the buffers */
#endif
    MPI_Bcast(&skip, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (skip) {
        if (rank == 0 && skip == 2)
            printf("large: skipped: %s under ThreadSanitizer (its shadow memory would be several times %.1f GiB)\n",
                   kind, need / 1073741824.0);
        else if (rank == 0)
            printf("large: skipped: %s needs %.1f GiB, MemAvailable is %.1f GiB\n", kind, need / 1073741824.0,
                   avail / 1073741824.0);
        MPI_Finalize();
        exit(0);
    }
    MPI_Request req;
    char *buf = malloc(rank == 0 ? sbytes : data);
    CHECK(buf, "cannot allocate %zu bytes", rank == 0 ? sbytes : data);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0) {
        for (size_t e = 0, i = 0; e < elems; e++)
            for (size_t b = 0; b < sext; b++)
                buf[e * sext + b] = b < selem ? (char)pattern(i++) : 0;
        OK(MPI_Psend_init(buf, parts, scount, stype, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        CHECK_PARTITA(req);
        OK(MPI_Start(&req));
        OK(MPI_Pready_range(0, parts - 1, req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        printf("large: %s, %d partitions, %zu bytes, %d transport messages\n", kind, parts, data, plan_of(req));
    } else {
        memset(buf, 0xee, data);
        OK(MPI_Precv_init(buf, parts, rcount, rtype, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        OK(MPI_Start(&req));
        MPI_Status st;
        OK(MPI_Wait(&req, &st));
        MPI_Count got = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &got);
        CHECK((size_t)got == data, "received %lld bytes, expected %zu", (long long)got, data);
        size_t bad = 0, first_bad = 0;
        for (size_t i = 0; i < data; i++)
            if ((unsigned char)buf[i] != pattern(i) && !bad++)
                first_bad = i;
        CHECK(!bad, "%zu bytes differ, the first at %zu", bad, first_bad);
    }
    OK(MPI_Request_free(&req));
    free(buf);
    if (stype != MPI_BYTE && stype != MPI_INT)
        MPI_Type_free(&stype);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *kind = NULL;
    int parts = 1;
    if (argc == 2 && !strcmp(argv[1], "plan")) {
        plans();
        return ptest_finish("large");
    }
    if (argc < 2 || strcmp(argv[1], "transfer"))
        ptest_usage("large: plan | transfer -k bytes|ints|derived [-s PARTS]");
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-k"))
            kind = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            parts = atoi(argv[i + 1]);
        else
            ptest_usage("large: unknown option");
    }
    if (!kind)
        ptest_usage("large: transfer needs -k");
    transfer(kind, parts);
    return ptest_finish("large");
}
