/**
 * The hardware adapter SPI. A HAL bundle registers one {@link dev.xq.hal.spi.XpuDriver}
 * service per platform; the runtime opens one {@link dev.xq.hal.spi.HwQueue} per XQueue.
 * A bundle that can preempt queues another driver opened registers a
 * {@link dev.xq.hal.spi.PreemptionProvider}. Since 1.1: {@link dev.xq.hal.spi.StreamPriorities}, the one
 * mapping of XQ priorities onto a device's stream priorities. 2.0: one capability for levels 2
 * and 3, {@link dev.xq.hal.spi.Preemption}, offered by a queue itself ({@code HwQueue.preemption()})
 * or by a provider (replaces {@code HwQueue}'s throwing level-2/3 methods, {@code maxLevel()} and
 * {@code Preemptor}); {@code nativeHandle(Class)} with {@link dev.xq.hal.spi.StreamHandle} replaces
 * the untyped {@code Object nativeHandle()}. 2.1: device memory and code loaded at run time,
 * {@link dev.xq.hal.spi.XpuMemory} ({@code XpuDriver.memory()}) with {@link dev.xq.hal.spi.HwBuffer},
 * {@link dev.xq.hal.spi.HwModule}, {@link dev.xq.hal.spi.HwFunction}, and {@link dev.xq.hal.spi.DeviceOp}
 * on {@link dev.xq.hal.spi.HwCommand}.
 *
 * <p>Threading: the runtime calls {@code launch} from any thread, but never concurrently on
 * one HwQueue; it calls the preemption methods under its own per-queue control lock.
 * Listener callbacks may come from any driver thread and must not be made while the driver
 * holds a lock that any {@code HwQueue} method takes: the runtime may launch, and may decide
 * and so deactivate, interrupt or restore other queues, from inside a callback (a scheduling
 * decision runs on the thread that reported the event). All of XQ's drivers deliver their
 * callbacks with no lock held.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.3.0")
package dev.xq.hal.spi;
