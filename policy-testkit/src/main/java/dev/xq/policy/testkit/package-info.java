/**
 * Test support for policy bundles, kept in one place so every policy is checked against the
 * same simulated scheduler and the same safety invariants. Used only in test scope.
 */
package dev.xq.policy.testkit;
