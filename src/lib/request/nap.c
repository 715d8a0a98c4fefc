/* A background thread's idle wait that a kick ends early. */
#include "request/nap.h"

#include <time.h>

int pt_nap_init(pt_nap *n)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&n->lock, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&n->cond, &attr)) != 0)
        pthread_mutex_destroy(&n->lock);
    pthread_condattr_destroy(&attr);
    atomic_init(&n->napping, 0);
    atomic_init(&n->kicked, 0);
    return rc;
}

void pt_nap_destroy(pt_nap *n)
{
    pthread_cond_destroy(&n->cond);
    pthread_mutex_destroy(&n->lock);
}

void pt_nap_kick(pt_nap *n)
{
    atomic_store(&n->kicked, 1);
    /* Sequentially consistent with pt_nap_wait's store and load: either the
     * waiter sees the kick before it waits, or this sees it napping and
     * signals under the lock it waits with. */
    if (atomic_load(&n->napping)) {
        pthread_mutex_lock(&n->lock);
        pthread_cond_signal(&n->cond);
        pthread_mutex_unlock(&n->lock);
    }
}

void pt_nap_wait(pt_nap *n, long ns, int (*done)(void))
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec += ns % 1000000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&n->lock);
    atomic_store(&n->napping, 1);
    /* until a kick, done(), the deadline or an error; a spurious wake-up looks again */
    while (!atomic_load(&n->kicked) && !done() && pthread_cond_timedwait(&n->cond, &n->lock, &until) == 0)
        ;
    atomic_store(&n->napping, 0);
    pthread_mutex_unlock(&n->lock);
}

int pt_nap_take_kick(pt_nap *n) { return atomic_exchange(&n->kicked, 0); }
