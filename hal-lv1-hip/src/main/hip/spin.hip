// The "spin T" command's kernel for AMD GPUs, as source: XQ ships no code object because no
// ROCm compiler is available where XQ is built. Build it on the GPU machine:
//
//   hipcc --genco --offload-arch=gfx942 -O2 -o spin.hsaco hal-lv1-hip/src/main/hip/spin.hip
//
// (gfx942 = MI300X/MI300A/MI308X; gfx90a = MI200; see `rocminfo | grep gfx`), then point the
// adapter at it: XQ_HIP_SPIN_MODULE=$PWD/spin.hsaco, or spinModule in PID dev.xq.hal.hip.
//
// Every thread of every block busy-waits until `micros` have passed on the constant-rate wall
// clock. WALL_CLOCK_KHZ is that clock's rate; 100000 (100 MHz) on gfx9 parts such as the MI300.
// Check it with hipDeviceGetAttribute(hipDeviceAttributeWallClockRate) and rebuild with
// -DWALL_CLOCK_KHZ=<rate> if it differs.
#include <hip/hip_runtime.h>

#ifndef WALL_CLOCK_KHZ
#define WALL_CLOCK_KHZ 100000ULL
#endif

extern "C" __global__ void spin(unsigned long long micros) {
    const unsigned long long ticks = micros * WALL_CLOCK_KHZ / 1000ULL;
    const unsigned long long start = wall_clock64();
    while (wall_clock64() - start < ticks) {
        __builtin_amdgcn_s_sleep(1);
    }
}
