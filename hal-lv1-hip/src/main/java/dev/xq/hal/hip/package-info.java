/**
 * XQ's Lv1 adapter for AMD GPUs: the HIP runtime (libamdhip64) bound with the JDK's FFM API.
 * Private to the bundle; the runtime sees it only as an {@link dev.xq.hal.spi.XpuDriver} service.
 */
package dev.xq.hal.hip;
