/**
 * The NVIDIA CUDA Lv1 adapter: binds the CUDA driver API (libcuda) with FFM and registers an
 * {@link dev.xq.hal.spi.XpuDriver} for platform {@code cuda}. Private to the bundle.
 */
package dev.xq.hal.cuda;
