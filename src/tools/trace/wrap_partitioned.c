/* The partitioned calls: init arguments, MPI_Start/Startall, every
 * MPI_Pready* (one clock read, no lock, no allocation), the first
 * MPI_Parrived == true per partition and round, MPI_Request_free. */
#include <dlfcn.h>
#include <string.h>

#include "partitioned_decls.h" /* the calls on an MPI older than MPI-4; LIST_CONST */
#include "trace.h"
#include "world_rank.h"

typedef int (*pinit_fn)(const void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *);
static pinit_fn next_Psend_init, next_Precv_init;
static int (*next_Pready)(int, MPI_Request);
static int (*next_Pready_range)(int, int, MPI_Request);
static int (*next_Pready_list)(int, LIST_CONST int[], MPI_Request);
static int (*next_Parrived)(MPI_Request, int, int *);
static int (*next_Start)(MPI_Request *);
static int (*next_Startall)(int, MPI_Request[]);
static int (*next_Request_free)(MPI_Request *);
/* libpartita's, when it is loaded (the layout a send round uses: the
 * adaptive policy changes it from round to round); NULL otherwise. */
static int (*partita_layouts)(MPI_Request, int, int[], int[], int *, int *);
/* libpartita's transport of a request ("mpi", "fabric", ...), NULL when it is not loaded. */
static int (*partita_transport)(MPI_Request, const char **);
/* Whether libpartita owns a request: a program may link libpartita and still
 * make the MPI library's own partitioned requests (partita-adapt-bench's
 * `native`), and libpartita's queries about such a request are errors, which
 * MPI's default handler makes fatal. NULL when libpartita is not loaded. */
static int (*partita_owns)(MPI_Request);

__attribute__((constructor)) static void resolve(void)
{
    next_Psend_init = (pinit_fn)ptr_next("MPI_Psend_init");
    next_Precv_init = (pinit_fn)ptr_next("MPI_Precv_init");
    next_Pready = (int (*)(int, MPI_Request))ptr_next("MPI_Pready");
    next_Pready_range = (int (*)(int, int, MPI_Request))ptr_next("MPI_Pready_range");
    next_Pready_list = (int (*)(int, LIST_CONST int[], MPI_Request))ptr_next("MPI_Pready_list");
    next_Parrived = (int (*)(MPI_Request, int, int *))ptr_next("MPI_Parrived");
    next_Start = (int (*)(MPI_Request *))ptr_next("MPI_Start");
    next_Startall = (int (*)(int, MPI_Request[]))ptr_next("MPI_Startall");
    next_Request_free = (int (*)(MPI_Request *))ptr_next("MPI_Request_free");
    partita_layouts = (int (*)(MPI_Request, int, int[], int[], int *, int *))dlsym(RTLD_DEFAULT,
                                                                                 "Partita_Request_layouts");
    partita_transport = (int (*)(MPI_Request, const char **))dlsym(RTLD_DEFAULT, "Partita_Request_transport");
    partita_owns = (int (*)(MPI_Request))dlsym(RTLD_DEFAULT, "Partita_Is_partitioned");
}

static int owned_by_partita(MPI_Request request) { return partita_owns && partita_owns(request); }

/* The transport libpartita uses for request id: a sender chooses it at init,
 * a receiver learns it from the sender's set-up message, so a receive is
 * asked again until it knows (the names are libpartita's static strings). */
static void transport_of(MPI_Request request, int id)
{
    ptr_request *q = id >= 0 ? ptr_registry_get(id) : NULL;
    const char *name = NULL;
    if (!q || !partita_transport || (q->transport && strcmp(q->transport, "unknown") != 0) ||
        !owned_by_partita(request) || partita_transport(request, &name) != MPI_SUCCESS || !name)
        return;
    q->transport = name;
}

/* After a send round's MPI_Start: the layout libpartita chose for it. */
static void layout_of(MPI_Request request, int64_t t)
{
    int id = partita_layouts ? ptr_registry_find(request) : -1;
    int counts[4], cuts[4], n = 0, cur = -1;
    if (id < 0 || ptr_registry_get(id)->kind != 0 || !owned_by_partita(request) ||
        partita_layouts(request, 4, counts, cuts, &n, &cur) != MPI_SUCCESS || cur < 0 || cur >= n || cur >= 4)
        return;
    ptr_record(EV_LAYOUT, id, counts[cur], cuts[cur], t);
}

const char *ptr_preloaded_after(void)
{
    const char *lib = ptr_library_of((void *)next_Psend_init);
    return lib && strncmp(lib, "libpartita-mpi", 14) == 0 ? "libpartita-mpi.so" : NULL;
}

/* The peer as a rank of MPI_COMM_WORLD (the key ranks are matched by);
 * MPI_PROC_NULL and a peer outside it stay as given. */
static int world_rank_of(MPI_Comm comm, int peer)
{
    int world = peer < 0 ? MPI_UNDEFINED : pt_world_rank(comm, peer);
    return world == MPI_UNDEFINED ? peer : world;
}

static void registered(int kind, int rc, int partitions, MPI_Count count, MPI_Datatype type, int peer, int tag,
                       MPI_Comm comm, MPI_Request *request, int64_t t0)
{
    if (rc == MPI_SUCCESS && ptr_active) {
        MPI_Count type_size = 0;
        int comm_size = 0;
        PMPI_Type_size_x(type, &type_size);
        PMPI_Comm_size(comm, &comm_size);
        ptr_request info = {.kind = kind, .peer = world_rank_of(comm, peer), .tag = tag, .comm_size = comm_size,
                            .partitions = partitions, .count = count, .type_size = type_size};
        transport_of(*request, ptr_registry_add(*request, &info));
    }
    ptr_account(CAT_PARTITIONED, t0, ptr_ticks());
}

PTR_EXPORT int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest,
                              int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info, request);
    registered(0, rc, partitions, count, datatype, dest, tag, comm, request, t0);
    return rc;
}

PTR_EXPORT int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                              int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Precv_init(buf, partitions, count, datatype, source, tag, comm, info, request);
    registered(1, rc, partitions, count, datatype, source, tag, comm, request, t0);
    return rc;
}

/* The MPI_Pready path: a lock-free look-up, one clock read, one append. */
PTR_EXPORT int MPI_Pready(int partition, MPI_Request request)
{
    int id = ptr_registry_find(request);
    if (id >= 0)
        ptr_record(EV_READY, id, partition, partition, ptr_ticks());
    return next_Pready(partition, request);
}

PTR_EXPORT int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    int id = ptr_registry_find(request);
    if (id >= 0)
        ptr_record(EV_READY_RANGE, id, partition_low, partition_high, ptr_ticks());
    return next_Pready_range(partition_low, partition_high, request);
}

PTR_EXPORT int MPI_Pready_list(int length, LIST_CONST int array_of_partitions[], MPI_Request request)
{
    int id = ptr_registry_find(request);
    if (id >= 0) {
        int64_t t = ptr_ticks();
        for (int i = 0; i < length; i++)
            ptr_record(EV_READY, id, array_of_partitions[i], array_of_partitions[i], t);
    }
    return next_Pready_list(length, array_of_partitions, request);
}

PTR_EXPORT int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    int rc = next_Parrived(request, partition, flag);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    int id = ptr_registry_find(request);
    if (id >= 0) {
        ptr_request *r = ptr_registry_get(id);
        /* only the first flag=1 of this partition in this round is an event */
        if (r->arrived_seen && partition >= 0 && partition < r->partitions &&
            !atomic_exchange_explicit(&r->arrived_seen[partition], 1, memory_order_relaxed))
            ptr_record(EV_ARRIVED, id, partition, partition, ptr_ticks());
    }
    return rc;
}

static void started(MPI_Request request, int64_t t)
{
    int id = ptr_registry_find(request);
    if (id < 0)
        return;
    ptr_request *r = ptr_registry_get(id);
    atomic_fetch_add_explicit(&r->starts, 1, memory_order_relaxed);
    if (r->arrived_seen)
        for (int p = 0; p < r->partitions; p++)
            atomic_store_explicit(&r->arrived_seen[p], 0, memory_order_relaxed);
    ptr_record(EV_START, id, 0, 0, t);
}

PTR_EXPORT int MPI_Start(MPI_Request *request)
{
    int64_t t0 = ptr_ticks();
    MPI_Request h = *request;
    int partitioned = ptr_registry_find(h) >= 0;
    if (partitioned)
        started(h, t0);
    int rc = next_Start(request);
    if (partitioned && rc == MPI_SUCCESS)
        layout_of(h, t0);
    ptr_account(partitioned ? CAT_PARTITIONED : CAT_P2P, t0, ptr_ticks());
    return rc;
}

PTR_EXPORT int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    int64_t t0 = ptr_ticks();
    int partitioned = 0;
    for (int i = 0; i < count; i++)
        if (ptr_registry_find(array_of_requests[i]) >= 0) {
            started(array_of_requests[i], t0);
            partitioned = 1;
        }
    int rc = next_Startall(count, array_of_requests);
    for (int i = 0; rc == MPI_SUCCESS && partitioned && i < count; i++)
        layout_of(array_of_requests[i], t0);
    ptr_account(partitioned ? CAT_PARTITIONED : CAT_P2P, t0, ptr_ticks());
    return rc;
}

PTR_EXPORT int MPI_Request_free(MPI_Request *request)
{
    transport_of(*request, ptr_registry_find(*request));
    ptr_registry_forget(*request);
    return next_Request_free(request);
}
