/**
 * The XQueue API for host applications: create preemptible command queues on an XPU, submit
 * commands, and steer how the scheduler treats each queue through hints.
 *
 * <p>Find {@link dev.xq.api.XQueueService} in the OSGi service registry. Every command
 * submitted through {@link dev.xq.api.XQueue#submit(Command)} ends in exactly one of three
 * ways: it completes, it fails with a cause, or it is cancelled by an explicit
 * {@link dev.xq.api.XQueue#close()}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package dev.xq.api;
