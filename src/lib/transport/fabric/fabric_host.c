/* pt_fab_host_hash (fabric_wire.h). */
#include <stdint.h>
#include <unistd.h>

#include "transport/fabric/fabric_wire.h"

uint64_t pt_fab_host_hash(void)
{
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    uint64_t h = UINT64_C(14695981039346656037);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * UINT64_C(1099511628211);
    return h;
}
