/**
 * Scenarios that each show one scheduling policy doing what it is for, with in-process tenants:
 * {@code bandwidth}, {@code cfs}, {@code edf}, {@code drf} and {@code drf-flood}, {@code mlfq},
 * {@code chpf} (CPU nice values; its tenants' groups are named after two idle processes),
 * {@code hhpf} (one priority across two sim devices), {@code awf} (the active window) and
 * {@code aging} (hpf with aging against starvation). Private to the bundle.
 */
package dev.xq.bench.scenario.policies;
