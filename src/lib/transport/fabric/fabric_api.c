/* Loads libfabric (the file chosen at configure time) into a link-map namespace of its own (see fabric_api.h). */
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
static _Thread_local int thread_ready __attribute__((tls_model("initial-exec")));
static int loaded;
static char load_error[256];

const char *pt_fi_path(void)
{
    const char *env = getenv("PARTITA_LIBFABRIC");
    return env && *env ? env : PARTITA_LIBFABRIC_PATH;
}

/* Symbols found without the version the headers' library gives them. */
static int unversioned;

/* Function `name` at `version`, the default version of the library the
 * headers belong to (cmake/PartitaFabric.cmake): a newer library keeps the
 * older versions for programs built against older headers, with the
 * structure layouts of those headers. A library without symbol versions (or
 * an unknown version) gets a plain lookup, and then must be of the headers'
 * major version (load). */
static void *need(void *h, const char *name, const char *version)
{
    void *f = version[0] ? dlvsym(h, name, version) : NULL;
    if (!f) {
        f = dlsym(h, name);
        unversioned++;
    }
    if (!f && !load_error[0])
        snprintf(load_error, sizeof load_error, "%s: no symbol %s", pt_fi_path(), name);
    return f;
}

#ifndef PT_FI_VER_fi_getinfo /* built without cmake/PartitaFabric.cmake's versions */
#define PT_FI_VER_fi_getinfo ""
#define PT_FI_VER_fi_freeinfo ""
#define PT_FI_VER_fi_dupinfo ""
#define PT_FI_VER_fi_fabric ""
#define PT_FI_VER_fi_strerror ""
#define PT_FI_VER_fi_version ""
#endif
#define NEED(h, sym) need(h, #sym, PT_FI_VER_##sym)

static void load(void)
{
    const char *path = pt_fi_path();
    void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", path, why ? why : "unknown error");
        return;
    }
    *(void **)&api.getinfo = NEED(h, fi_getinfo);
    *(void **)&api.freeinfo = NEED(h, fi_freeinfo);
    *(void **)&api.dupinfo = NEED(h, fi_dupinfo);
    *(void **)&api.fabric = NEED(h, fi_fabric);
    *(void **)&api.strerror = NEED(h, fi_strerror);
    *(void **)&api.version = NEED(h, fi_version);
    if (load_error[0])
        return;
    Lmid_t lmid;
    void *libc = dlinfo(h, RTLD_DI_LMID, &lmid) == 0 ? dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD) : NULL;
    *(void **)&ctype_init = libc ? dlsym(libc, "__ctype_init") : NULL;
    pt_fi_thread();
    uint32_t v = api.version();
    if (v < PT_FI_VERSION || (unversioned && FI_MAJOR(v) != FI_MAJOR_VERSION)) {
        snprintf(load_error, sizeof load_error,
                 "%s is libfabric %u.%u; the fabric transport needs %u.x >= %u.%u (or a later major version "
                 "that keeps the symbol versions of libfabric %u.%u's)",
                 path, FI_MAJOR(v), FI_MINOR(v), FI_MAJOR_VERSION, FI_MAJOR(PT_FI_VERSION), FI_MINOR(PT_FI_VERSION),
                 FI_MAJOR_VERSION, FI_MINOR_VERSION);
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
