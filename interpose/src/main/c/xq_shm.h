/*
 * The shared-memory layout of one node session (docs/processes.md, "Shared memory"), shared by
 * the interposer and the test node. Little-endian; the node writes the header and the first 64
 * bytes of each slot, the interposer the rest.
 */
#ifndef XQ_SHM_H
#define XQ_SHM_H

#include <stddef.h>
#include <stdint.h>

#define XQ_SHM_MAGIC 0x31515158u /* "XQQ1" */
#define XQ_SHM_VERSION 1u
#define XQ_SHM_HEADER 64u
#define XQ_SLOT_SIZE 128u
#define XQ_MAX_LINE 512

typedef struct xq_shm_header {
    uint32_t magic, version, slots, slot_size;
    uint64_t node_start_ns;
    /* CLOCK_MONOTONIC ns, written by the node every 100 ms while the session lives; 0 from a node
     * that does not write it. The process watches it move (docs/processes.md, "Faults") */
    uint64_t heartbeat_ns;
    uint8_t reserved[32];
} xq_shm_header;

typedef struct xq_slot {
    /* written by the node */
    uint32_t gate;       /* 0 open, 1 held; a futex word */
    uint32_t threshold;  /* most commands in flight, 0 = no limit */
    uint32_t batch;      /* once throttled, launch again when in flight <= threshold - batch */
    uint32_t window_us;  /* time budget of the work in flight, 0 = none */
    uint32_t config_seq; /* bumped after any of the above changed */
    /* narrowing (docs/processes.md, "Space and time"): 0, the stream's launches run on the whole
     * device; N > 0, they run on the device less N multiprocessors (a green context), which the
     * queues the node prefers keep. Only for a process told "narrow" in its SPACE answer. */
    uint32_t reserve_sms;
    /* arrival guard (0 0: none): a queue preferred over this one is due at about horizon_ns
     * (CLOCK_MONOTONIC); launch only what the estimates say is done by then, until guard_until_ns.
     * The node writes horizon_ns first, so a torn read pairs a new horizon with an old, lapsed end. */
    uint64_t horizon_ns, guard_until_ns;
    /* narrowing among best-effort processes (with reserve_sms): index << 16 | count; count > 1: the
     * part of the device the stream's launches may use is split in count equal parts (multiples of
     * 8 multiprocessors), of which the process has the index-th; 0 or 1: all of it. With the top bit
     * set, a part of its own size: 1 << 31 | offset << 16 | width, offset and width in sixteenths of
     * that part of the device (each rounded down to 8 multiprocessors, so that the parts of
     * processes given adjacent sixteenths do not overlap) */
    uint32_t part;
    uint32_t node_reserved[5];
    /* written by the client */
    uint32_t pending;   /* threads held in a launch call */
    uint32_t in_flight; /* commands launched whose end is not yet seen */
    uint64_t launched, completed, failed, run_ns, estimate_ns, ready_since_ns;
    uint32_t completion_seq; /* bumped at every completion; a futex word */
    /* the multiprocessors the stream's launches could fill, and the device's count: XQ_WIDTH_WORD
     * below (0: not known) */
    uint32_t width;
} xq_slot;

/* The slot's width word, with bit 31 set: bits 0-9 the widest launch of the stream's last one to
 * two seconds of launching (threads / threads per multiprocessor, a graph the whole device: what
 * the node reserves for it), bits 10-19 the widest of its current stretch of work (its last two
 * to four milliseconds of launching; a stretch that begins after a quiet spell counts as wide as
 * the stream has been until it has launched that long: what the node holds others behind), bits
 * 20-30 the device's multiprocessors. A word without bit 31 (before session 116) has the widest
 * in bits 0-15 and the device's count in bits 16-31, and no stretch's width: read as the widest. */
#define XQ_WIDTH_WORD(widest, stretch, sms) \
    (1u << 31 | ((uint32_t)(sms) & 0x7ffu) << 20 | ((uint32_t)(stretch) & 0x3ffu) << 10 | ((uint32_t)(widest) & 0x3ffu))
#define XQ_WIDTH_WIDEST(w) ((w) >> 31 ? (w) & 0x3ffu : (w) & 0xffffu)
#define XQ_WIDTH_STRETCH(w) ((w) >> 31 ? (w) >> 10 & 0x3ffu : (w) & 0xffffu)
#define XQ_WIDTH_SMS(w) ((w) >> 31 ? (w) >> 20 & 0x7ffu : (w) >> 16)

_Static_assert(sizeof(xq_shm_header) == XQ_SHM_HEADER, "header size");
_Static_assert(sizeof(xq_slot) == XQ_SLOT_SIZE, "slot size");
_Static_assert(offsetof(xq_shm_header, heartbeat_ns) == 24, "heartbeat_ns");
_Static_assert(offsetof(xq_slot, config_seq) == 16, "config_seq");
_Static_assert(offsetof(xq_slot, reserve_sms) == 20, "reserve_sms");
_Static_assert(offsetof(xq_slot, horizon_ns) == 24, "horizon_ns");
_Static_assert(offsetof(xq_slot, guard_until_ns) == 32, "guard_until_ns");
_Static_assert(offsetof(xq_slot, part) == 40, "part");
_Static_assert(offsetof(xq_slot, pending) == 64, "pending");
_Static_assert(offsetof(xq_slot, launched) == 72, "launched");
_Static_assert(offsetof(xq_slot, ready_since_ns) == 112, "ready_since_ns");
_Static_assert(offsetof(xq_slot, completion_seq) == 120, "completion_seq");
_Static_assert(offsetof(xq_slot, width) == 124, "width");

#endif
