/* A disk model for bench/engine.sh, loaded with LD_PRELOAD into both engines alike (ours and the peer).
 * It counts every fsync and fdatasync the process makes (written to $SYNC_COUNT_FILE at exit, one line per
 * process), and when $SYNC_MIN_MS is set, makes each of them take at least that long (the real call first, then
 * a sleep for the rest): the cost of a sync on a disk slower than the one the benchmark runs on. Nothing else is
 * changed; data is still synced by the real call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_long syncs;

static long min_ns(void) {
    static long cached = -1;
    if (cached < 0) {
        const char *v = getenv("SYNC_MIN_MS");
        cached = v ? (long)(atof(v) * 1e6) : 0;
    }
    return cached;
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int timed(int (*real)(int), int fd) {
    long started = now_ns();
    int rc = real(fd);
    atomic_fetch_add(&syncs, 1);
    long rest = min_ns() - (now_ns() - started);
    if (rest > 0) {
        struct timespec t = {rest / 1000000000L, rest % 1000000000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    return rc;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return timed(real, fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    return timed(real, fd);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("SYNC_COUNT_FILE");
    if (!path) return;
    FILE *out = fopen(path, "a");
    if (!out) return;
    fprintf(out, "%ld\n", atomic_load(&syncs));
    fclose(out);
}
