/**
 * What an operator does to a running node, one code path for every front end: the Gogo
 * commands ({@code xq:hint}, {@code xq:config}, ...) and the HTTP API call the same methods, so
 * a value the shell refuses is refused over HTTP with the same words, and nothing changes.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package dev.xq.operator;
