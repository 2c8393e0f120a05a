/*
 * Experiment behind docs/BENCHMARKS.md "A short scheduler slice for event loops, tried": how late does a thread that
 * sleeps 0.5 ms at a time wake among busy threads, with the fair scheduler's default slice and with a shorter one
 * (sched_setattr's sched_runtime, honoured by EEVDF since Linux 6.12, no privilege needed)? Prints the p50, p90 and
 * p99 of the lateness over 3,000 sleeps. Not part of the build:
 *
 *   gcc -O2 -pthread docs/experiments/wake_latency.c -o wake_latency
 *   ./wake_latency 0 4          # default slice, four busy threads
 *   ./wake_latency 100000 4     # a 0.1 ms slice for the sleeping thread
 *
 * The lateness includes the timer's slack (50 us by default), so its floor is about 60 us.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

static volatile int stop;

static void *busy(void *unused) {
    volatile uint64_t x = 0;
    while (!stop) {
        x++;
    }
    return unused;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SLICE_NS BUSY_THREADS (slice 0 = the default)\n", argv[0]);
        return 2;
    }
    long slice = atol(argv[1]);
    int threads = atoi(argv[2]);
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) {
        pthread_create(&t[i], NULL, busy, NULL);
    }
    if (slice > 0) {
        struct sched_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr; /* SCHED_OTHER, nice 0 */
        attr.runtime = (uint64_t) slice;
        if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
            perror("sched_setattr");
        }
    }
    enum { N = 3000 };
    static uint64_t late[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = now_ns();
        usleep(500);
        late[i] = now_ns() - t0 - 500000;
    }
    stop = 1;
    qsort(late, N, sizeof late[0], by_value);
    printf("slice=%ld busy=%d lateness p50=%lu p90=%lu p99=%lu us\n", slice, threads,
           (unsigned long) (late[N / 2] / 1000), (unsigned long) (late[N * 9 / 10] / 1000),
           (unsigned long) (late[N * 99 / 100] / 1000));
    return 0;
}
