/**
 * What XQ's bundles share to check their configurations before using them: {@link
 * dev.xq.runtime.config.ConfigCheck} reads a configuration's raw properties against the
 * component's configuration type, so that a value Declarative Services would take silently (a
 * boolean spelled {@code yes}, read as false) or fail on with an exception that names no key (a
 * number spelled {@code abc}) is refused with a sentence naming the key, the value and what is
 * allowed, and a key no setting has (a misspelt name) is said.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package dev.xq.runtime.config;
