// Probe (issue 40): which multiprocessors share a GPC, and which of them a green context takes.
// Session 71's hypothesis for why a large batch in one MPS client waits for another client's long
// kernel in a green context of 64 or 104 SMs but not of 32: the batch runs thread-block clusters,
// which must fit inside one GPC, and a green context that takes part of every GPC leaves no GPC
// room enough for a cluster. This prints the GPCs (multiprocessors linked by sharing a cluster of
// 8: every cluster's blocks run in one GPC) and, for each green context size asked, which
// multiprocessors its kernel ran on and how many each GPC keeps free beside it.
// Usage: [GREEN_SPLIT=cluster] smmap [SMS...]   e.g. smmap 32 64 104      Build: nvcc -O2 -o smmap smmap.cu -lcuda
// (GREEN_SPLIT=cluster: the device split for the largest clusters, as XQ_NARROW_SPLIT=cluster does)
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *m_ = ""; cuGetErrorString(r_, &m_); fprintf(stderr, "%s:%d %s failed %d %s\n", __FILE__, __LINE__, #x, (int) r_, m_); exit(1);} } while (0)
/* GREEN_SPLIT=cluster: split with CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE (groups for the
 * largest clusters), as the interposer's XQ_NARROW_SPLIT=cluster does */
static unsigned split_flags(void) {
    const char *v = getenv("GREEN_SPLIT");
    return v && !strcmp(v, "cluster") ? CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE : 0;
}

enum { MAXSM = 1024 };

__global__ void where(unsigned *sm, unsigned long long spin_ns) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm[blockIdx.x] = id;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < spin_ns);
}

static int parent[MAXSM];
static int find(int x) { while (parent[x] != x) x = parent[x] = parent[parent[x]]; return x; }
static void join(int a, int b) { a = find(a), b = find(b); if (a != b) parent[a < b ? b : a] = a < b ? a : b; }

int main(int argc, char **argv) {
    CK(cudaFree(0));
    int nsm = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    if (nsm > MAXSM) nsm = MAXSM;
    for (int i = 0; i < MAXSM; i++) parent[i] = i;
    const int csize = 8, clusters = 4 * nsm / csize, nb = clusters * csize;
    unsigned *d, *h = (unsigned *) malloc(nb * sizeof *h);
    CK(cudaMalloc(&d, nb * sizeof *d));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(nb); cfg.blockDim = dim3(128);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = csize; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    int seen[MAXSM] = {0};
    for (int round = 0; round < 200; round++) { /* placements vary: links accumulate within GPCs */
        CK(cudaLaunchKernelEx(&cfg, where, d, 2000ULL + 500ULL * (round % 7)));
        CK(cudaMemcpy(h, d, nb * sizeof *h, cudaMemcpyDeviceToHost));
        for (int c = 0; c < clusters; c++)
            for (int k = 0; k < csize; k++) {
                unsigned s = h[c * csize + k];
                if (s < (unsigned) nsm) seen[s] = 1, join((int) h[c * csize], (int) s);
            }
    }
    int gpc_of[MAXSM], ngpc = 0, root_gpc[MAXSM];
    for (int i = 0; i < MAXSM; i++) root_gpc[i] = -1;
    for (int s = 0; s < nsm; s++) {
        int r = find(s);
        if (root_gpc[r] < 0) root_gpc[r] = ngpc++;
        gpc_of[s] = root_gpc[r];
    }
    printf("smmap: %d multiprocessors in %d groups linked by clusters of %d (GPCs, if every SM was reached)\n", nsm, ngpc, csize);
    for (int g = 0; g < ngpc; g++) {
        int n = 0;
        printf("  GPC %d:", g);
        for (int s = 0; s < nsm; s++) if (gpc_of[s] == g) printf(" %d%s", s, seen[s] ? "" : "?"), n++;
        printf("  (%d)\n", n);
    }
    CUdevice dev; DK(cuDeviceGet(&dev, 0));
    for (int a = 1; a < argc; a++) {
        unsigned want = (unsigned) atoi(argv[a]);
        CUdevResource all, part[1], rest; unsigned groups = 1;
        DK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
        DK(cuDevSmResourceSplitByCount(part, &groups, &all, &rest, split_flags(), want));
        CUdevResourceDesc desc; DK(cuDevResourceGenerateDesc(&desc, &part[0], 1));
        CUgreenCtx gc; DK(cuGreenCtxCreate(&gc, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CUstream gs; DK(cuGreenCtxStreamCreate(&gs, gc, CU_STREAM_NON_BLOCKING, 0));
        int used[MAXSM] = {0};
        const int pb = 8 * nsm;
        unsigned *pd, *ph = (unsigned *) malloc(pb * sizeof *ph);
        CK(cudaMalloc(&pd, pb * sizeof *pd));
        for (int round = 0; round < 20; round++) {
            where<<<pb, 128, 0, (cudaStream_t) gs>>>(pd, 3000ULL);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize((cudaStream_t) gs));
            CK(cudaMemcpy(ph, pd, pb * sizeof *ph, cudaMemcpyDeviceToHost));
            for (int i = 0; i < pb; i++) if (ph[i] < (unsigned) nsm) used[ph[i]] = 1;
        }
        int n = 0, minfree = nsm, maxfree = 0;
        printf("smmap: a green context of %u multiprocessors (%u asked%s) ran on:", part[0].sm.smCount, want,
               split_flags() ? ", split for clusters" : "");
        for (int s = 0; s < nsm; s++) if (used[s]) printf(" %d", s), n++;
        printf("  (%d)\n  free beside it, per GPC:", n);
        for (int g = 0; g < ngpc; g++) {
            int f = 0;
            for (int s = 0; s < nsm; s++) if (gpc_of[s] == g && !used[s]) f++;
            printf(" %d", f);
            if (f < minfree) minfree = f;
            if (f > maxfree) maxfree = f;
        }
        printf("  (fewest %d, most %d: a cluster of 8 %s)\n", minfree, maxfree,
               maxfree >= 8 ? "fits in some GPC" : "fits in no GPC");
        CK(cudaFree(pd)); free(ph);
        DK(cuStreamDestroy(gs)); DK(cuGreenCtxDestroy(gc));
    }
    return 0;
}
