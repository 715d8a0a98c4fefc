/* Cold-cache emulation (docs/metrics.md, "Cache").
 *
 * Hot cache does nothing. Cold cache, before every timed iteration: every
 * thread of every rank reads through a flush buffer of at least twice the
 * last-level cache (so its own L1/L2 and the shared LLC hold flush data only),
 * and the message buffers are evicted line by line (clflush on x86). */
#ifndef PT_CACHE_H
#define PT_CACHE_H
#include <stddef.h>

/* Size of the largest (last-level) cache from sysfs; 32 MiB when unknown. */
size_t pt_llc_bytes(void);
/* Allocate the process's flush buffer (2 x LLC, at least 8 MiB). Call once. */
int pt_cache_setup(void);
size_t pt_cache_flush_bytes(void);
/* Read through the whole flush buffer (call from each thread). */
void pt_cache_flush_thread(void);
/* Evict [p, p+n) from every cache level. */
void pt_cache_evict(const void *p, size_t n);
void pt_cache_teardown(void);

#endif
