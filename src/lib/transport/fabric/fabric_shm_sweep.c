/* pt_fab_shm_sweep (fabric_ctx.h): remove the shm provider's regions that
 * processes killed before closing their endpoint left behind.
 *
 * libfabric's shm provider backs each endpoint with a POSIX shared-memory
 * region of 16 MiB, /dev/shm/PID:N:N, and unlinks it when the endpoint is
 * closed. A process killed first (MPI_Abort's kill, the OOM killer, kill -9)
 * leaves it there, in RAM, until reboot. So before a process opens its own
 * shm endpoint it removes those regions of its own user whose PID is not a
 * living process. Another process's region is never touched while that
 * process lives (kill(pid, 0) finds it); a PID reused since is taken as
 * alive, so such a region stays. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/fabric/fabric_ctx.h"

/* The PID of a region's name "PID:N:N" (digits only), or 0. */
static long region_pid(const char *name)
{
    long pid = 0;
    int fields = 0, digits = 0;
    for (const char *c = name;; c++) {
        if (*c >= '0' && *c <= '9') {
            if (fields == 0 && pid < 1000000000L)
                pid = pid * 10 + (*c - '0');
            digits++;
        } else if ((*c == ':' || *c == '\0') && digits > 0) {
            fields++, digits = 0;
            if (*c == '\0')
                return fields == 3 ? pid : 0;
        } else {
            return 0;
        }
    }
}

int pt_fab_shm_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    uid_t me = getuid();
    for (struct dirent *e; (e = readdir(d));) {
        long pid = region_pid(e->d_name);
        struct stat st;
        if (pid <= 0 || pid == (long)getpid() || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != me)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) /* alive, or not ours to ask about */
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}
