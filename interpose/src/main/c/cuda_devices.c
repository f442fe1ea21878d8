/*
 * cuda_devices.c: devices as the node names them: the physical ordinal behind a numeric
 * CUDA_VISIBLE_DEVICES, the PCI bus id, multiprocessor counts and the width of recent launches.
 */
#include "cuda_int.h"

/* A numeric CUDA_VISIBLE_DEVICES renumbers devices; the node wants physical ordinals. */
int xqc_physical_device(int dev)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v || !*v) return dev;
    int i = 0;
    for (const char *p = v; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || (*end && *end != ',')) {
            static int said;
            if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
                xlog(1, "xq: CUDA_VISIBLE_DEVICES=%s is not a list of device ordinals (allowed: e.g. 2,0,3; UUIDs are "
                        "not mapped here: the node finds the device by the PCI bus id sent with it); device %d reported as the "
                        "process sees it",
                     v, dev);
            return dev;
        }
        if (i++ == dev) return (int)x;
        p = *end ? end + 1 : end;
    }
    return dev;
}

/* The device's PCI bus id, for the node to find its own device by whatever ordinal the process
 * sees (UUID lists, containers); "" when the driver does not answer. */
void xqc_pci_bus_id(CUdevice dev, char *out, size_t n)
{
    int dom = 0, bus = 0, d = 0;
    out[0] = 0;
    if (!xqc_cu.DeviceGetAttribute || xqc_cu.DeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) ||
        xqc_cu.DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) ||
        xqc_cu.DeviceGetAttribute(&d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) || bus < 0 || bus > 255 || d < 0 || d > 255)
        return;
    snprintf(out, n, "%04x:%02x:%02x.0", (unsigned)dom, (unsigned)bus, (unsigned)d);
}

/* The devices' multiprocessor counts and threads per multiprocessor, read once each (NDEV,
 * xqc_dev_sms_known: cuda_int.h). */
struct xqc_devinfo xqc_devinfo[NDEV];

int xqc_dev_sms(CUdevice d, int *tps)
{
    *tps = 0;
    if (d < 0 || d >= NDEV || !xqc_cu.DeviceGetAttribute) return 0;
    if (!LD(&xqc_devinfo[d].sms)) {
        int a = 0, b = 0; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, _MAX_THREADS_PER_MULTIPROCESSOR */
        if (xqc_cu.DeviceGetAttribute(&a, 16, d) || xqc_cu.DeviceGetAttribute(&b, 39, d) || a <= 0 || a > 65535 || b <= 0) return 0;
        ST(&xqc_devinfo[d].tps, b);
        ST(&xqc_devinfo[d].sms, a);
    }
    *tps = LD(&xqc_devinfo[d].tps);
    return LD(&xqc_devinfo[d].sms);
}

int xqc_width_occ; /* XQ_WIDTH=occupancy (cuda_driver.c) */

/* One word per entry: the top 48 bits a hash of (function, block size, shared memory), the low 16
 * the threads' worth of a multiprocessor one of its blocks holds; 0: empty. One load reads both, so
 * an entry another thread replaces meanwhile is read whole, its own or the other's. */
#define OCC_SLOTS 1024u
static uint64_t g_occ[OCC_SLOTS];

static uint64_t occ_footprint(CUfunction f, uint64_t bthreads, size_t shmem)
{
    int n = 0, tps = 0;
    CUdevice d = 0;
    if (!xqc_cu.OccupancyBlocks || !xqc_cu.CtxGetDevice || bthreads == 0 || bthreads > 0xFFFF) return bthreads;
    if (xqc_cu.OccupancyBlocks(&n, f, (int)bthreads, shmem) || n <= 0) return bthreads;
    if (xqc_cu.CtxGetDevice(&d) || !xqc_dev_sms(d, &tps) || tps <= 0) return bthreads;
    uint64_t foot = ((uint64_t)tps + (uint64_t)n - 1) / (uint64_t)n;
    return foot < bthreads ? bthreads : foot > 0xFFFF ? 0xFFFF : foot;
}

uint64_t xqc_occ_threads(CUfunction f, uint64_t blocks, uint64_t bthreads, size_t shmem)
{
    uint64_t k = (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull ^ ((bthreads << 32) | (uint64_t)shmem) * 0xC2B2AE3D27D4EB4Full;
    k ^= k >> 31;
    uint64_t tag = k & ~0xFFFFull;
    if (!tag) tag = 1ull << 16;
    uint64_t *slot = &g_occ[(k >> 16) & (OCC_SLOTS - 1)];
    uint64_t e = LD(slot), foot;
    if ((e & ~0xFFFFull) == tag && (e & 0xFFFF)) {
        foot = e & 0xFFFF;
    } else {
        foot = occ_footprint(f, bthreads, shmem);
        if (foot && foot <= 0xFFFF) ST(slot, tag | foot);
    }
    return blocks * (foot ? foot : bthreads);
}
