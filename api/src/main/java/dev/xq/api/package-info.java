/**
 * The XQueue API for host applications: create preemptible command queues on an XPU, submit
 * commands, and steer how the scheduler treats each queue through hints.
 *
 * <p>Find {@link dev.xq.api.XQueueService} in the OSGi service registry. Every command
 * submitted through {@link dev.xq.api.XQueue#submit(Command)} ends in exactly one of three
 * ways: it completes, it fails with a cause, or it is cancelled by an explicit
 * {@link dev.xq.api.XQueue#close()}.
 *
 * <p>Since 1.5: device memory ({@link dev.xq.api.DeviceBuffer}), data in and out as commands
 * ({@link dev.xq.api.Command.Write}, {@link dev.xq.api.Command.Read}, {@link dev.xq.api.Command.Fill}),
 * device code loaded at run time ({@link dev.xq.api.CodeModule}, {@link dev.xq.api.KernelFunction},
 * {@link dev.xq.api.Command.Launch}, {@link dev.xq.api.Command.Arg.Buf}); {@code docs/host-api.md}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.11.0")
package dev.xq.api;
