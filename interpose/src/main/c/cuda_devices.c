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
