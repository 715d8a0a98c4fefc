/* Completion calls: the Wait/Test that completes a partitioned round is an
 * event; every call's time counts as partitioned when a partitioned request is
 * among its handles, else as point-to-point. Partitioned requests are
 * persistent, so their handles are still valid after the call. A call that
 * returns an error completes nothing here (its outputs may be unset). */
#include "trace.h"

static int (*next_Wait)(MPI_Request *, MPI_Status *);
static int (*next_Waitall)(int, MPI_Request[], MPI_Status[]);
static int (*next_Waitany)(int, MPI_Request[], int *, MPI_Status *);
static int (*next_Waitsome)(int, MPI_Request[], int *, int[], MPI_Status[]);
static int (*next_Test)(MPI_Request *, int *, MPI_Status *);
static int (*next_Testall)(int, MPI_Request[], int *, MPI_Status[]);
static int (*next_Testany)(int, MPI_Request[], int *, int *, MPI_Status *);
static int (*next_Testsome)(int, MPI_Request[], int *, int[], MPI_Status[]);

__attribute__((constructor)) static void resolve(void)
{
    next_Wait = (int (*)(MPI_Request *, MPI_Status *))ptr_next("MPI_Wait");
    next_Waitall = (int (*)(int, MPI_Request[], MPI_Status[]))ptr_next("MPI_Waitall");
    next_Waitany = (int (*)(int, MPI_Request[], int *, MPI_Status *))ptr_next("MPI_Waitany");
    next_Waitsome = (int (*)(int, MPI_Request[], int *, int[], MPI_Status[]))ptr_next("MPI_Waitsome");
    next_Test = (int (*)(MPI_Request *, int *, MPI_Status *))ptr_next("MPI_Test");
    next_Testall = (int (*)(int, MPI_Request[], int *, MPI_Status[]))ptr_next("MPI_Testall");
    next_Testany = (int (*)(int, MPI_Request[], int *, int *, MPI_Status *))ptr_next("MPI_Testany");
    next_Testsome = (int (*)(int, MPI_Request[], int *, int[], MPI_Status[]))ptr_next("MPI_Testsome");
}

/* Records the completion of handle h at t1; 1 if h is partitioned. */
static int completed(MPI_Request h, int64_t t1)
{
    int id = ptr_registry_find(h);
    if (id >= 0)
        ptr_record(EV_COMPLETE, id, 0, 0, t1);
    return id >= 0;
}

static int any_partitioned(int count, const MPI_Request *r)
{
    for (int i = 0; i < count; i++)
        if (ptr_registry_find(r[i]) >= 0)
            return 1;
    return 0;
}

static int category(int partitioned) { return partitioned ? CAT_PARTITIONED : CAT_P2P; }

PTR_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Wait(request, status);
    int64_t t1 = ptr_ticks();
    int partitioned = rc == MPI_SUCCESS ? completed(*request, t1) : ptr_registry_find(*request) >= 0;
    ptr_account(category(partitioned), t0, t1);
    return rc;
}

PTR_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Test(request, flag, status);
    int64_t t1 = ptr_ticks();
    int partitioned = rc == MPI_SUCCESS && *flag ? completed(*request, t1) : ptr_registry_find(*request) >= 0;
    ptr_account(category(partitioned), t0, t1);
    return rc;
}

static int all_completed(int count, MPI_Request *r, int64_t t1)
{
    int partitioned = 0;
    for (int i = 0; i < count; i++)
        partitioned |= completed(r[i], t1);
    return partitioned;
}

PTR_EXPORT int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    int64_t t0 = ptr_ticks();
    int rc = next_Waitall(count, array_of_requests, array_of_statuses);
    int64_t t1 = ptr_ticks();
    int partitioned = rc == MPI_SUCCESS ? all_completed(count, array_of_requests, t1)
                                        : any_partitioned(count, array_of_requests);
    ptr_account(category(partitioned), t0, t1);
    return rc;
}

PTR_EXPORT int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    int64_t t0 = ptr_ticks();
    int rc = next_Testall(count, array_of_requests, flag, array_of_statuses);
    int64_t t1 = ptr_ticks();
    int partitioned = rc == MPI_SUCCESS && *flag ? all_completed(count, array_of_requests, t1)
                                                 : any_partitioned(count, array_of_requests);
    ptr_account(category(partitioned), t0, t1);
    return rc;
}

static int one_completed(int count, MPI_Request *r, int index, int64_t t1)
{
    int partitioned = any_partitioned(count, r);
    if (partitioned && index >= 0 && index != MPI_UNDEFINED && index < count)
        completed(r[index], t1);
    return partitioned;
}

PTR_EXPORT int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Waitany(count, array_of_requests, index, status);
    int64_t t1 = ptr_ticks();
    ptr_account(category(one_completed(count, array_of_requests, rc == MPI_SUCCESS ? *index : MPI_UNDEFINED, t1)),
                t0, t1);
    return rc;
}

PTR_EXPORT int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    int64_t t0 = ptr_ticks();
    int rc = next_Testany(count, array_of_requests, index, flag, status);
    int64_t t1 = ptr_ticks();
    int index_done = rc == MPI_SUCCESS && *flag ? *index : MPI_UNDEFINED;
    ptr_account(category(one_completed(count, array_of_requests, index_done, t1)), t0, t1);
    return rc;
}

typedef int (*some_fn)(int, MPI_Request[], int *, int[], MPI_Status[]);

/* Waitsome and Testsome: the same bookkeeping around the next library's call. */
static int traced_some(some_fn next, int incount, MPI_Request *r, int *outcount, int *indices, MPI_Status *statuses)
{
    int64_t t0 = ptr_ticks();
    int rc = next(incount, r, outcount, indices, statuses);
    int64_t t1 = ptr_ticks();
    int partitioned = any_partitioned(incount, r);
    if (partitioned && rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)
        for (int i = 0; i < *outcount; i++)
            completed(r[indices[i]], t1);
    ptr_account(category(partitioned), t0, t1);
    return rc;
}

PTR_EXPORT int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                            MPI_Status array_of_statuses[])
{
    return traced_some(next_Waitsome, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

PTR_EXPORT int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                            MPI_Status array_of_statuses[])
{
    return traced_some(next_Testsome, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}
