/**
 * Scenarios that measure XQ's own mechanics with in-process tenants (queues opened through the
 * public API from the node's JVM) under the fixed-priority policy {@code hpf} or none:
 * {@code fixed-priority} and {@code example3} (XSched's experiments), {@code preemption-latency}
 * (per preemption level), {@code overhead} (one tenant through XQ against direct use),
 * {@code scale} (1,000 queues), {@code hot-swap} (policies selected and a policy bundle updated
 * while tenants run) and the {@code xq:demo} workload. Private to the bundle.
 */
package dev.xq.bench.scenario.inprocess;
