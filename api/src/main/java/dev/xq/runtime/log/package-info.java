/**
 * The logging port XQ's bundles share: {@link dev.xq.runtime.log.RuntimeLog} (what code logs
 * to; a plain sink in unit tests) and {@link dev.xq.runtime.log.OsgiLog} (the OSGi Log Service
 * behind it in a node, bound and unbound by a DS component).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package dev.xq.runtime.log;
