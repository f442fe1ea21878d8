/*
 * libxq-next.so: a preloaded library of someone else's that looks up the next definition of a
 * libc function with dlsym(RTLD_NEXT, ...), as interposers do. Preloaded beside libxq-cuda.so,
 * its dlsym calls reach libxq-cuda.so's dlsym; the answer must be glibc's, as without XQ.
 * Prints one line on stderr: "xq-next: getpid ok" or what went wrong.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void xq_next_init(void)
{
    pid_t (*next)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "getpid");
    void *any = dlsym(RTLD_DEFAULT, "getpid");
    if (!next) fprintf(stderr, "xq-next: dlsym(RTLD_NEXT, getpid) gave NULL\n");
    else if ((void *)next != any) fprintf(stderr, "xq-next: RTLD_NEXT gave %p, RTLD_DEFAULT %p\n", (void *)next, any);
    else if (next() != getpid()) fprintf(stderr, "xq-next: getpid through RTLD_NEXT is wrong\n");
    else fprintf(stderr, "xq-next: getpid ok\n");
}
