/* pt_fab_shm_sweep on its own, in a folder of its own: it removes exactly
 * the regions ("PID:N:N", regular files of this user) whose process is
 * gone, and leaves a living process's region, its own, other names and
 * anything that is not a regular file. Usage: partita-test-fabric-shm-sweep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/fabric/fabric_ctx.h"

static int failures;
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fabric-shm-sweep: FAILED: " __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                                             \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

static char dir[256];

static void make(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static int exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: partita-test-fabric-shm-sweep\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/partita-shm-sweep-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    pid_t child = fork(); /* a PID that was a process a moment ago */
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    char dead[64], dead2[64], dead_dir[64], living[64], own[64];
    snprintf(dead, sizeof dead, "%d:0:0", (int)child);
    snprintf(dead2, sizeof dead2, "%d:1:3", (int)child);
    snprintf(dead_dir, sizeof dead_dir, "%d:2:0", (int)child);
    snprintf(living, sizeof living, "%d:0:0", (int)getppid());
    snprintf(own, sizeof own, "%d:0:0", (int)getpid());
    const char *others[] = {"notaregion", "12:ab:0", "1:2", "1:2:3:4", ":1:2", "mpich_shm_1"};
    make(dead), make(dead2), make(living), make(own);
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        make(others[i]);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, dead_dir);
    mkdir(path, 0700);

    int removed = pt_fab_shm_sweep(dir);
    CHECK(removed == 2, "removed %d, expected 2 (the two regions of exited process %d)", removed, (int)child);
    CHECK(!exists(dead) && !exists(dead2), "a region of exited process %d is still there", (int)child);
    CHECK(exists(living), "the region of living process %d was removed", (int)getppid());
    CHECK(exists(own), "this process's own region was removed");
    CHECK(exists(dead_dir), "a folder named like a region was removed");
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        CHECK(exists(others[i]), "'%s', not a region's name, was removed", others[i]);
    CHECK(pt_fab_shm_sweep("/nonexistent-partita-dir") == 0, "a missing folder is not an error");

    /* clean up the folder */
    const char *all[] = {living, own};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, all[i]);
        unlink(path);
    }
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, others[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/%s", dir, dead_dir);
    rmdir(path);
    rmdir(dir);
    if (failures)
        return 1;
    printf("fabric-shm-sweep: all checks passed\n");
    return 0;
}
