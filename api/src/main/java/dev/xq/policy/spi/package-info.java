/**
 * The scheduling policy SPI. A policy bundle registers {@link dev.xq.policy.spi.Policy}
 * services with the property {@value dev.xq.policy.spi.Policy#NAME_PROPERTY}; the runtime
 * calls the selected one from one thread at a time (its scheduler thread, or for a policy
 * registered as bounded, the thread that posted the event), so a policy needs no locks for
 * its decisions. Trial decisions at registration and selection run on a thread of their own
 * and may overlap a real decision.
 *
 * <p>A policy keeps only soft state: it must reach a correct decision from the view alone,
 * because it can be swapped in at any moment, and a decision must not take longer than the
 * node's decision deadline (10 ms by default) or the watchdog sets the policy aside.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.5.0")
package dev.xq.policy.spi;
