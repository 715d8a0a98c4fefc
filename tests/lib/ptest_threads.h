/* The threads of the calling process, by name (Linux's /proc/self/task):
 * partita's progress thread names itself "pt-progress" when it first runs,
 * the fabric's "pt-fabric". */
#ifndef PTEST_THREADS_H
#define PTEST_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The thread of this process named `name`, or 0. */
static inline long ptest_thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long tid = 0;
    while (d && !tid && (e = readdir(d))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && !strncmp(comm, name, strlen(name)) && comm[strlen(name)] == '\n')
            tid = atol(e->d_name);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return tid;
}

#endif
