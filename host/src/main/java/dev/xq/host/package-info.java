/**
 * The node side of scheduling unmodified processes: a Unix socket that the interposer library
 * ({@code libxq-cuda.so}) of each CUDA process connects to, one session and one shared-memory
 * file per process, and one external XQueue per CUDA stream (see docs/processes.md). Private
 * to the bundle.
 */
package dev.xq.host;
