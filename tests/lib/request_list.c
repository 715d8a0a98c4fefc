/* The process-wide request lists (src/lib/request/request_list.c), whose
 * links live in the requests: a request listed twice is listed once; a
 * poll visits each listed request once and unlists those whose visit says
 * so, unless the visit listed it again; removing an unlisted request does
 * nothing; pt_list_only answers for the only entry; a visit may unlist
 * another request, or its own, and the poll goes on over the rest. All of
 * that once in a serial process and once with the lists' locks. Then two threads list and
 * unlist their requests while a third polls, and the list ends empty with
 * every visit of a listed request. No MPI. */
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "request/request_list.h"

enum { N = 6, ROUNDS = 200000 };

/* Stand-ins for requests: the list only hands their addresses back. */
static struct fake { int id; pt_list_node node; } req[N];
static int visits[N], drop[N], drop_other = -1, drop_self = -1, add_self = -1;
static pt_request_list list = PT_REQUEST_LIST_INIT;

static int id_of(struct pt_request *r) { return ((struct fake *)(void *)r)->id; }

static void add(int i);

static int visit(struct pt_request *r)
{
    int i = id_of(r);
    visits[i]++;
    if (i == drop_self)
        pt_list_remove(&list, &req[i].node);
    if (i == add_self)
        add(i);
    if (drop_other >= 0 && i != drop_other) {
        pt_list_remove(&list, &req[drop_other].node);
        drop_other = -1;
    }
    return drop[i];
}

static void add(int i) { pt_list_add(&list, &req[i].node, (struct pt_request *)(void *)&req[i]); }

static void poll_once(void)
{
    for (int i = 0; i < N; i++)
        visits[i] = 0;
    pt_list_poll(&list, visit);
}

static int listed(void)
{
    int n = 0;
    poll_once();
    for (int i = 0; i < N; i++)
        n += visits[i];
    return n;
}

/* Every case in one thread (a serial process, or the locks with no other thread). */
static void one_thread_cases(void)
{
    for (int i = 0; i < N; i++)
        req[i].id = i;
    CHECK(!pt_list_pending(&list));
    add(0);
    add(0);
    CHECK(pt_list_only(&list, &req[0].node));
    poll_once();
    CHECK(visits[0] == 1);
    add(1);
    CHECK(!pt_list_only(&list, &req[0].node));
    pt_list_remove(&list, &req[1].node);
    pt_list_remove(&list, &req[1].node); /* unlisted: nothing */
    CHECK(pt_list_only(&list, &req[0].node));
    for (int i = 1; i < N; i++)
        add(i);
    CHECK(listed() == N);
    drop[2] = drop[5] = 1;
    poll_once();
    for (int i = 0; i < N; i++)
        CHECK(visits[i] == 1);
    drop[2] = drop[5] = 0;
    CHECK(listed() == N - 2);
    /* The list is 4 3 1 0 (newest first): the visit of 4 unlists 3, and the
     * poll goes on to 1 and 0. */
    drop_other = 3;
    poll_once();
    CHECK(visits[4] == 1 && visits[3] == 0 && visits[1] == 1 && visits[0] == 1);
    CHECK(listed() == 3);
    /* A visit that unlists its own request: the poll goes on past it. */
    drop_self = 1;
    poll_once();
    CHECK(visits[4] == 1 && visits[1] == 1 && visits[0] == 1);
    drop_self = -1;
    CHECK(listed() == 2);
    add(1);
    add(1);
    CHECK(listed() == 3);
    /* A visit that lists its own request again while saying it is done
     * with it: the request stays listed (its new round needs the list). */
    add_self = 1;
    drop[1] = 1;
    poll_once();
    add_self = -1;
    drop[1] = 0;
    CHECK(listed() == 3);
    for (int i = 0; i < N; i++)
        pt_list_remove(&list, &req[i].node);
    CHECK(!pt_list_pending(&list));
    CHECK(listed() == 0);
}

/* Threads: two list and unlist their own request ROUNDS times while a third
 * polls. A poll holds the lock, so the request it visits is listed all
 * through the visit; at the end the list is empty. */
static atomic_int stop, strays, polled;

static int threaded_visit(struct pt_request *r)
{
    int i = id_of(r);
    if ((i != 0 && i != 1) || atomic_load(&req[i].node.on) != &list)
        atomic_fetch_add(&strays, 1);
    atomic_fetch_add(&polled, 1);
    return 0;
}

static void *owner(void *arg)
{
    int i = *(int *)arg;
    for (int k = 0; k < ROUNDS; k++) {
        add(i);
        pt_list_remove(&list, &req[i].node);
    }
    return NULL;
}

static void *poller(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        pt_list_poll(&list, threaded_visit);
    return NULL;
}

static void threaded_cases(void)
{
    int ids[2] = { 0, 1 };
    pthread_t t[3];
    pthread_create(&t[2], NULL, poller, NULL);
    pthread_create(&t[0], NULL, owner, &ids[0]);
    pthread_create(&t[1], NULL, owner, &ids[1]);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    atomic_store(&stop, 1);
    pthread_join(t[2], NULL);
    CHECK(!pt_list_pending(&list));
    CHECK(list.head == NULL);
    CHECK(atomic_load(&strays) == 0);
    printf("threads: %d visits\n", atomic_load(&polled));
}

int main(void)
{
    pt_lists_serial(1);
    one_thread_cases();
    pt_lists_serial(0); /* the same with the locks: a visit's own calls must not wait for its poll's */
    one_thread_cases();
    threaded_cases();
    CHECK_DONE();
}
