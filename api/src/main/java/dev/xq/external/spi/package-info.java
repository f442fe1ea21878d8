/**
 * Queues whose commands another party launches: a process that the node schedules through
 * the interposer library ({@code dev.xq.host} is the bundle that uses this). The runtime
 * publishes {@link dev.xq.external.spi.ExternalQueues}; the owning bundle opens one
 * {@link dev.xq.external.spi.ExternalQueue} per stream, reports its counters through
 * {@link dev.xq.external.spi.ExternalQueueControl} and enforces what the node decides. To
 * policies, the shell and host applications such a queue is an XQueue like any other, except
 * that it takes no commands through {@code submit}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.7.0")
package dev.xq.external.spi;
