/* bench/gpu/napper.c: host load shaped like the interposer's tracker threads, for
 * bench/gpu/host-noise.sh. THREADS threads each either nap on a futex for NAP_NS at a time
 * (timer slack 1 us, as the tracker sets it: a memop stream is looked at every 5 us while its
 * launchers wait on a limit), or spin (NAP_NS=0: a thread waiting in a spinning synchronize, as
 * a best-effort process under native sharing does). Runs until killed.
 *   cc -O2 -pthread -o napper bench/gpu/napper.c && ./napper THREADS NAP_NS */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long nap_ns;
static uint32_t word;

static void *run(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1000UL);
    volatile uint64_t spins = 0;
    for (;;) {
        if (nap_ns <= 0) {
            spins++;
            continue;
        }
        struct timespec ts = {0, nap_ns};
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: napper THREADS NAP_NS (NAP_NS 0: spin)\n");
        return 2;
    }
    int n = atoi(argv[1]);
    nap_ns = atol(argv[2]);
    if (n < 1 || n > 256 || nap_ns < 0 || nap_ns >= 1000000000L) {
        fprintf(stderr, "napper: THREADS %s must be 1-256 and NAP_NS %s 0-999999999\n", argv[1], argv[2]);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, NULL)) {
            perror("napper: pthread_create");
            return 1;
        }
    }
    pause();
    return 0;
}
