#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdlib.h>
static void *run(void *a) {
    cpu_set_t s; CPU_ZERO(&s); CPU_SET((int)(long)a, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
    struct timespec t = {0, 200000};
    for (;;) nanosleep(&t, 0);
    return 0;
}
int main(void) { pthread_t t[2]; for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, run, (void *)i); pthread_join(t[0], 0); }
