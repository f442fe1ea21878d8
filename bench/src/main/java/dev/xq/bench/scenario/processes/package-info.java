/**
 * Scenarios with unmodified programs as separate processes of the node's machine, scheduled
 * through the interposer ({@code libxq-cuda.so}) and the node's process host: {@code process-pair}
 * and {@code torch-pair} (one latency-critical and one best-effort process) and {@code mix}
 * (mixes of two to four processes), with what they share: {@code Processes} (where the
 * interposer and the fake libcuda are, the environment of a tenant) and {@code TenantProcess}
 * (one child process and its figures). Private to the bundle.
 */
package dev.xq.bench.scenario.processes;
