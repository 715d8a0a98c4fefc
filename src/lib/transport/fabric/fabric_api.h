/* The few libfabric functions that are not inline calls through an object's
 * operation table, loaded at run time from a libfabric file chosen at configure time.
 *
 * Why not link with -lfabric: the MPICH wheel carries its own libfabric.so.1
 * (a newer one, with symbol versions up to FABRIC_1.9) and libmpi.so.12 needs
 * it. Both copies have the SONAME libfabric.so.1, so whichever is loaded first
 * serves every user: a preloaded libpartita-mpi linked with the system copy
 * made libmpi fail to load ("version FABRIC_1.9 not found"), and a plain
 * dlopen(RTLD_LOCAL) of the system copy still bound its internal calls
 * (fi_log, fi_param_get, fi_dupinfo@FABRIC_1.3) to the MPICH copy through the
 * global scope. dlmopen(LM_ID_NEWLM) gives the system copy a namespace of its
 * own (RTLD_DEEPBIND would too, but the sanitizers refuse it). Which file:
 * cmake/PartitaFabric.cmake (PARTITA_LIBFABRIC_PATH), or PARTITA_LIBFABRIC.
 *
 * Rules that follow: memory libfabric frees (fi_freeinfo) must come from it:
 * hints are made by pt_fi.dupinfo(NULL), and strings we point hints at are
 * unhooked before they are freed. And every thread must call pt_fi_thread()
 * before it calls into libfabric: a thread's start initialises the ctype
 * tables (tolower...) of the main namespace's libc only, and the copy in
 * libfabric's namespace crashed in strcasecmp under fi_getinfo from an
 * application thread. */
#ifndef PARTITA_FABRIC_API_H
#define PARTITA_FABRIC_API_H

#include <rdma/fabric.h>
#include <stddef.h>

typedef struct pt_fi_api {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
    uint32_t (*version)(void);
} pt_fi_api;

/* The header version this code is written against (and asks providers for). */
#define PT_FI_VERSION FI_VERSION(1, 5)

/* Load the library once per process (thread-safe). Returns the table, or NULL
 * with a one-line reason in err. */
const pt_fi_api *pt_fi_load(char *err, size_t errlen);
/* Make this thread ready to call into libfabric (cheap after the first call). */
void pt_fi_thread(void);
/* The file it is loaded from (PARTITA_LIBFABRIC overrides the configured path). */
const char *pt_fi_path(void);

#endif
