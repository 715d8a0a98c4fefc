/* Tag ranges: a sorted list of live ranges and a cursor that only moves forward
 * (wrapping at the upper bound). Init and free only, so a mutex is fine. */
#include "transport/mpi/tag_alloc.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct range {
    int base, count;
    struct range *next;
} range;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static range *live; /* sorted by base */
static int cursor, upper = 32767;

void pt_tags_init(int tag_ub)
{
    pthread_mutex_lock(&lock);
    upper = tag_ub;
    cursor = 0;
    pthread_mutex_unlock(&lock);
}

/* First live range that ends after `at`, or NULL. */
static range *first_after(int at)
{
    range *r = live;
    while (r && r->base + r->count <= at)
        r = r->next;
    return r;
}

int pt_tags_alloc(int count, int *base)
{
    if (count < 1)
        count = 1;
    range *node = malloc(sizeof *node);
    if (!node)
        return -1;
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int lap = 0; lap < 2 && found < 0; lap++) {
        int at = lap == 0 ? cursor : 0;
        int stop = lap == 0 ? upper : cursor;
        while (at <= stop - count + 1 && (long long)at + count - 1 <= upper) {
            range *r = first_after(at);
            if (!r || r->base >= at + count) {
                found = at;
                break;
            }
            at = r->base + r->count; /* skip past the live range in the way */
        }
    }
    if (found >= 0) {
        node->base = found;
        node->count = count;
        range **p = &live;
        while (*p && (*p)->base < found)
            p = &(*p)->next;
        node->next = *p;
        *p = node;
        cursor = found + count > upper ? 0 : found + count;
        *base = found;
    }
    pthread_mutex_unlock(&lock);
    if (found < 0)
        free(node);
    return found < 0 ? -1 : 0;
}

void pt_tags_free(int base, int count)
{
    (void)count;
    pthread_mutex_lock(&lock);
    for (range **p = &live; *p; p = &(*p)->next) {
        if ((*p)->base == base) {
            range *r = *p;
            *p = r->next;
            free(r);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

void pt_tags_finalize(void)
{
    pthread_mutex_lock(&lock);
    while (live) {
        range *r = live;
        live = r->next;
        free(r);
    }
    pthread_mutex_unlock(&lock);
}
