// Kernels of the example host bundle (example-host) for AMD GPUs: the HIP twin of
// ../cuda/matmul.cu, same names, same parameters, same results. No code object is shipped (it
// takes ROCm's compiler and is built for one GPU architecture); on a machine with ROCm build one
// for your GPU (rocminfo | grep gfx names its target), e.g. for an MI300X:
//   hipcc --genco --offload-arch=gfx942 -O3 -o matmul.co matmul.hip
// (several --offload-arch flags make one bundle for several GPUs) and give it to the example as
//   xq:example --device hip code=/path/to/matmul.co
// or put it at example-host/src/main/resources/hip/matmul.co before building the bundle.

#include <hip/hip_runtime.h>

#define TILE 16

// C[M x N] = A[M x K] * B[K x N], row-major floats. Grid ((N+15)/16, (M+15)/16), block (16, 16).
extern "C" __global__ void xq_matmul_tiled(const float *a, const float *b, float *c, int m, int n, int k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < k; t += TILE) {
        int ac = t + threadIdx.x;
        int br = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ac < k) ? a[(long) row * k + ac] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = (br < k && col < n) ? b[(long) br * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++) {
            sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < m && col < n) {
        c[(long) row * n + col] = sum;
    }
}

// y = alpha * x + y over n floats. Grid ((n+255)/256), block (256).
extern "C" __global__ void xq_saxpy(int n, float alpha, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
