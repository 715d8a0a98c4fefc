#include "cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *flush_buf;
static size_t flush_len;

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'K')
        v *= 1024ULL;
    else if (*end == 'M')
        v *= 1024ULL * 1024ULL;
    return (size_t)v;
}

size_t pt_llc_bytes(void)
{
    size_t best = 0;
    int best_level = -1;
    for (int idx = 0; idx < 16; idx++) {
        char path[128], buf[64];
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(buf, sizeof buf, f) && level >= best_level) {
            best_level = level;
            best = parse_size(buf);
        }
        fclose(f);
    }
    return best ? best : (size_t)32 << 20;
}

int pt_cache_setup(void)
{
    if (flush_buf)
        return 0;
    flush_len = 2 * pt_llc_bytes();
    if (flush_len < ((size_t)8 << 20))
        flush_len = (size_t)8 << 20;
    flush_buf = malloc(flush_len);
    if (!flush_buf)
        return -1;
    memset(flush_buf, 1, flush_len);
    return 0;
}

size_t pt_cache_flush_bytes(void) { return flush_len; }

void pt_cache_flush_thread(void)
{
    if (!flush_buf)
        return;
    uint64_t sum = 0;
    const uint64_t *p = (const uint64_t *)flush_buf;
    size_t words = flush_len / sizeof *p;
    for (size_t i = 0; i < words; i += 8) /* one read per 64-byte line */
        sum += p[i];
    volatile uint64_t sink = sum;
    (void)sink;
}

void pt_cache_evict(const void *p, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63);
    const char *end = (const char *)p + n;
    for (; c < end; c += 64)
        __builtin_ia32_clflush(c);
    __builtin_ia32_mfence();
#else
    (void)p;
    (void)n; /* other architectures: the flush buffer alone evicts the data */
#endif
}

void pt_cache_teardown(void)
{
    free(flush_buf);
    flush_buf = NULL;
    flush_len = 0;
}
