/* Loads the system libfabric into a link-map namespace of its own (see fabric_api.h). */
#include "transport/fabric/fabric_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PARTITA_LIBFABRIC_PATH
#define PARTITA_LIBFABRIC_PATH "libfabric.so.1"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pt_fi_api api;
static void (*ctype_init)(void); /* __ctype_init of the libc in libfabric's namespace */
static _Thread_local int thread_ready;
static int loaded;
static char load_error[256];

const char *pt_fi_path(void)
{
    const char *env = getenv("PARTITA_LIBFABRIC");
    return env && *env ? env : PARTITA_LIBFABRIC_PATH;
}

static void *need(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f && !load_error[0])
        snprintf(load_error, sizeof load_error, "%s: no symbol %s", pt_fi_path(), name);
    return f;
}

static void load(void)
{
    const char *path = pt_fi_path();
    void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", path, why ? why : "unknown error");
        return;
    }
    /* The default symbol versions match the headers this file was built with. */
    *(void **)&api.getinfo = need(h, "fi_getinfo");
    *(void **)&api.freeinfo = need(h, "fi_freeinfo");
    *(void **)&api.dupinfo = need(h, "fi_dupinfo");
    *(void **)&api.fabric = need(h, "fi_fabric");
    *(void **)&api.strerror = need(h, "fi_strerror");
    *(void **)&api.version = need(h, "fi_version");
    if (load_error[0])
        return;
    Lmid_t lmid;
    void *libc = dlinfo(h, RTLD_DI_LMID, &lmid) == 0 ? dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD) : NULL;
    *(void **)&ctype_init = libc ? dlsym(libc, "__ctype_init") : NULL;
    pt_fi_thread();
    if (FI_MAJOR(api.version()) != FI_MAJOR_VERSION || api.version() < PT_FI_VERSION) {
        snprintf(load_error, sizeof load_error, "%s is libfabric %u.%u; the fabric transport needs %u.x >= %u.%u",
                 path, FI_MAJOR(api.version()), FI_MINOR(api.version()), FI_MAJOR_VERSION,
                 FI_MAJOR(PT_FI_VERSION), FI_MINOR(PT_FI_VERSION));
        return;
    }
    loaded = 1;
}

void pt_fi_thread(void)
{
    if (thread_ready)
        return;
    thread_ready = 1;
    if (ctype_init)
        ctype_init();
}

const pt_fi_api *pt_fi_load(char *err, size_t errlen)
{
    pthread_once(&load_once, load);
    if (loaded)
        pt_fi_thread();
    if (!loaded && err)
        snprintf(err, errlen, "%s", load_error);
    return loaded ? &api : NULL;
}
