package dev.xq.hal.kfd;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

/**
 * Struct layouts and ioctl numbers of the KFD user ABI ({@code include/uapi/linux/kfd_ioctl.h}).
 * Every layout and number here is compared with what gcc computes from the C declarations by
 * {@code KfdAbiTest}; {@code docs/kfd-abi.md} lists them. Field names follow the header.
 */
final class KfdAbi {

    private KfdAbi() {
    }

    /** The ioctl type byte of every AMDKFD_IOC_* ('K'). */
    static final int TYPE = 'K';

    // linux/ioctl.h (asm-generic): dir in bits 30-31, size 16-29, type 8-15, nr 0-7.
    private static final int WRITE = 1;
    private static final int READ = 2;

    static long ioc(int dir, int nr, long size) {
        return ((long) dir << 30 | size << 16 | (long) TYPE << 8 | nr) & 0xffffffffL;
    }

    static long ior(int nr, MemoryLayout arg) {
        return ioc(READ, nr, arg.byteSize());
    }

    static long iow(int nr, MemoryLayout arg) {
        return ioc(WRITE, nr, arg.byteSize());
    }

    static long iowr(int nr, MemoryLayout arg) {
        return ioc(READ | WRITE, nr, arg.byteSize());
    }

    /** struct kfd_ioctl_get_version_args (all KFD versions). */
    static final StructLayout GET_VERSION_ARGS = MemoryLayout.structLayout(
            JAVA_INT.withName("major_version"), JAVA_INT.withName("minor_version")).withName("kfd_ioctl_get_version_args");

    /** struct kfd_ioctl_runtime_enable_args (KFD 1.13+). */
    static final StructLayout RUNTIME_ENABLE_ARGS = MemoryLayout.structLayout(
            JAVA_LONG.withName("r_debug"), JAVA_INT.withName("mode_mask"),
            JAVA_INT.withName("capabilities_mask")).withName("kfd_ioctl_runtime_enable_args");

    /** struct kfd_runtime_info (KFD 1.13+), filled by DBG_TRAP ENABLE through rinfo_ptr. */
    static final StructLayout RUNTIME_INFO = MemoryLayout.structLayout(
            JAVA_LONG.withName("r_debug"), JAVA_INT.withName("runtime_state"),
            JAVA_INT.withName("ttmp_setup")).withName("kfd_runtime_info");

    /** struct kfd_ioctl_dbg_trap_enable_args. */
    static final StructLayout DBG_ENABLE = MemoryLayout.structLayout(
            JAVA_LONG.withName("exception_mask"), JAVA_LONG.withName("rinfo_ptr"),
            JAVA_INT.withName("rinfo_size"), JAVA_INT.withName("dbg_fd")).withName("kfd_ioctl_dbg_trap_enable_args");

    /** struct kfd_ioctl_dbg_trap_suspend_queues_args. */
    static final StructLayout DBG_SUSPEND = MemoryLayout.structLayout(
            JAVA_LONG.withName("exception_mask"), JAVA_LONG.withName("queue_array_ptr"),
            JAVA_INT.withName("num_queues"), JAVA_INT.withName("grace_period"))
            .withName("kfd_ioctl_dbg_trap_suspend_queues_args");

    /** struct kfd_ioctl_dbg_trap_resume_queues_args. */
    static final StructLayout DBG_RESUME = MemoryLayout.structLayout(
            JAVA_LONG.withName("queue_array_ptr"), JAVA_INT.withName("num_queues"), JAVA_INT.withName("pad"))
            .withName("kfd_ioctl_dbg_trap_resume_queues_args");

    /** struct kfd_ioctl_dbg_trap_queue_snapshot_args. */
    static final StructLayout DBG_QUEUE_SNAPSHOT = MemoryLayout.structLayout(
            JAVA_LONG.withName("exception_mask"), JAVA_LONG.withName("snapshot_buf_ptr"),
            JAVA_INT.withName("num_queues"), JAVA_INT.withName("entry_size"))
            .withName("kfd_ioctl_dbg_trap_queue_snapshot_args");

    /** The part of the DBG_TRAP union this bundle uses (the header's union has more members, none larger). */
    static final UnionLayout DBG_UNION = MemoryLayout.unionLayout(
            DBG_ENABLE.withName("enable"), DBG_SUSPEND.withName("suspend_queues"),
            DBG_RESUME.withName("resume_queues"), DBG_QUEUE_SNAPSHOT.withName("queue_snapshot"));

    /** struct kfd_ioctl_dbg_trap_args (KFD 1.13+). */
    static final StructLayout DBG_TRAP_ARGS = MemoryLayout.structLayout(
            JAVA_INT.withName("pid"), JAVA_INT.withName("op"), DBG_UNION.withName("u"))
            .withName("kfd_ioctl_dbg_trap_args");

    /** struct kfd_queue_snapshot_entry (KFD 1.13+). */
    static final StructLayout QUEUE_SNAPSHOT_ENTRY = MemoryLayout.structLayout(
            JAVA_LONG.withName("exception_status"), JAVA_LONG.withName("ring_base_address"),
            JAVA_LONG.withName("write_pointer_address"), JAVA_LONG.withName("read_pointer_address"),
            JAVA_LONG.withName("ctx_save_restore_address"), JAVA_INT.withName("queue_id"),
            JAVA_INT.withName("gpu_id"), JAVA_INT.withName("ring_size"), JAVA_INT.withName("queue_type"),
            JAVA_INT.withName("ctx_save_restore_area_size"), JAVA_INT.withName("reserved"))
            .withName("kfd_queue_snapshot_entry");

    /**
     * The patched-driver preempt/resume argument (16 bytes, documented by one engineer, found in
     * no driver source): {u32 queue_id, u32 preempt_type, u32 timeout_ms, u32 pad}. Probe only.
     */
    static final StructLayout PATCHED_PREEMPT_ARGS = MemoryLayout.structLayout(
            JAVA_INT.withName("queue_id"), JAVA_INT.withName("preempt_type"),
            JAVA_INT.withName("timeout_ms"), JAVA_INT.withName("pad")).withName("xq_patched_preempt_queue_args");

    /** AMDKFD_IOC_GET_VERSION = AMDKFD_IOR(0x01, struct kfd_ioctl_get_version_args). */
    static final long IOC_GET_VERSION = ior(0x01, GET_VERSION_ARGS);
    /** AMDKFD_IOC_RUNTIME_ENABLE = AMDKFD_IOWR(0x25, struct kfd_ioctl_runtime_enable_args), KFD 1.13+. */
    static final long IOC_RUNTIME_ENABLE = iowr(0x25, RUNTIME_ENABLE_ARGS);
    /** AMDKFD_IOC_DBG_TRAP = AMDKFD_IOWR(0x26, struct kfd_ioctl_dbg_trap_args), KFD 1.13+. */
    static final long IOC_DBG_TRAP = iowr(0x26, DBG_TRAP_ARGS);
    /** Patched driver, _IOWR variant (0xc0104b87 printed by one document). Unverified. */
    static final long IOC_PATCHED_PREEMPT = iowr(0x87, PATCHED_PREEMPT_ARGS);
    /** Patched driver, _IOWR variant (0xc0104b88). Unverified. */
    static final long IOC_PATCHED_RESUME = iowr(0x88, PATCHED_PREEMPT_ARGS);
    /** Patched driver, _IOW variant (0x40104b87 defined by the other document). Unverified. */
    static final long IOC_PATCHED_PREEMPT_W = iow(0x87, PATCHED_PREEMPT_ARGS);
    /** Patched driver, _IOW variant (0x40104b88). Unverified. */
    static final long IOC_PATCHED_RESUME_W = iow(0x88, PATCHED_PREEMPT_ARGS);

    /** enum kfd_dbg_trap_operations (KFD 1.13+). */
    static final int OP_ENABLE = 0;
    static final int OP_DISABLE = 1;
    static final int OP_SUSPEND_QUEUES = 6;
    static final int OP_RESUME_QUEUES = 7;
    static final int OP_GET_QUEUE_SNAPSHOT = 13;

    /** KFD_DBG_QUEUE_ERROR_MASK: written into a queue id when the queue had a hardware error. */
    static final int QUEUE_ERROR_BIT = 0x40000000;
    /** KFD_DBG_QUEUE_INVALID_MASK: no such queue, new, or being destroyed. */
    static final int QUEUE_INVALID_BIT = 0x80000000;
    /** KFD_EC_MASK(EC_QUEUE_NEW): a new queue refuses suspension until this is cleared. */
    static final long EC_QUEUE_NEW_MASK = 1L << (31 - 1);

    /** KFD_IOC_QUEUE_TYPE_COMPUTE_AQL. */
    static final int QUEUE_TYPE_COMPUTE_AQL = 2;

    /** Byte offset of a named field of {@link #DBG_TRAP_ARGS}'s union member. */
    static long unionOffset(String member, String field) {
        return DBG_TRAP_ARGS.byteOffset(groupElement("u"), groupElement(member), groupElement(field));
    }
}
