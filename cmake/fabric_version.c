/* Configure-time probe (cmake/PartitaFabric.cmake): prints the version of the
 * libfabric file given as argv[1], "MAJOR.MINOR", or nothing if it cannot be
 * loaded. Loaded the way libpartita loads it: a namespace of its own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    void *h = dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW | RTLD_LOCAL);
    uint32_t (*version)(void) = h ? (uint32_t(*)(void))dlsym(h, "fi_version") : NULL;
    if (!version)
        return 1;
    uint32_t v = version();
    printf("%u.%u", v >> 16, v & 0xffff);
    return 0;
}
