/*
 * Prints sizeof/offsetof/ioctl numbers of the KFD ABI as gcc lays it out, one "key value" line
 * each, for KfdAbiTest to compare with the Java layouts. The KFD 1.13+ declarations below are
 * restated as test data from the upstream include/uapi/linux/kfd_ioctl.h (they are not in
 * Debian bookworm's KFD 1.11 header); GET_VERSION comes from the system header when present.
 */
#include <stdio.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/ioctl.h>

#if __has_include(<linux/kfd_ioctl.h>)
#include <linux/kfd_ioctl.h>
#define XQ_SYSTEM_HEADER 1
#else
#define XQ_SYSTEM_HEADER 0
struct kfd_ioctl_get_version_args { __u32 major_version; __u32 minor_version; };
#define AMDKFD_IOCTL_BASE 'K'
#define AMDKFD_IOR(nr, type) _IOR(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOW(nr, type) _IOW(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOWR(nr, type) _IOWR(AMDKFD_IOCTL_BASE, nr, type)
#define AMDKFD_IOC_GET_VERSION AMDKFD_IOR(0x01, struct kfd_ioctl_get_version_args)
#endif

#ifndef AMDKFD_IOC_DBG_TRAP
struct kfd_runtime_info { __u64 r_debug; __u32 runtime_state; __u32 ttmp_setup; };
struct kfd_ioctl_runtime_enable_args { __u64 r_debug; __u32 mode_mask; __u32 capabilities_mask; };
struct kfd_queue_snapshot_entry {
	__u64 exception_status; __u64 ring_base_address; __u64 write_pointer_address;
	__u64 read_pointer_address; __u64 ctx_save_restore_address; __u32 queue_id; __u32 gpu_id;
	__u32 ring_size; __u32 queue_type; __u32 ctx_save_restore_area_size; __u32 reserved;
};
struct kfd_ioctl_dbg_trap_enable_args { __u64 exception_mask; __u64 rinfo_ptr; __u32 rinfo_size; __u32 dbg_fd; };
struct kfd_ioctl_dbg_trap_send_runtime_event_args { __u64 exception_mask; __u32 gpu_id; __u32 queue_id; };
struct kfd_ioctl_dbg_trap_set_exceptions_enabled_args { __u64 exception_mask; };
struct kfd_ioctl_dbg_trap_set_wave_launch_override_args {
	__u32 override_mode; __u32 enable_mask; __u32 support_request_mask; __u32 pad; };
struct kfd_ioctl_dbg_trap_set_wave_launch_mode_args { __u32 launch_mode; __u32 pad; };
struct kfd_ioctl_dbg_trap_suspend_queues_args {
	__u64 exception_mask; __u64 queue_array_ptr; __u32 num_queues; __u32 grace_period; };
struct kfd_ioctl_dbg_trap_resume_queues_args { __u64 queue_array_ptr; __u32 num_queues; __u32 pad; };
struct kfd_ioctl_dbg_trap_set_node_address_watch_args {
	__u64 address; __u32 mode; __u32 mask; __u32 gpu_id; __u32 id; };
struct kfd_ioctl_dbg_trap_clear_node_address_watch_args { __u32 gpu_id; __u32 id; };
struct kfd_ioctl_dbg_trap_set_flags_args { __u32 flags; __u32 pad; };
struct kfd_ioctl_dbg_trap_query_debug_event_args { __u64 exception_mask; __u32 gpu_id; __u32 queue_id; };
struct kfd_ioctl_dbg_trap_query_exception_info_args {
	__u64 info_ptr; __u32 info_size; __u32 source_id; __u32 exception_code; __u32 clear_exception; };
struct kfd_ioctl_dbg_trap_queue_snapshot_args {
	__u64 exception_mask; __u64 snapshot_buf_ptr; __u32 num_queues; __u32 entry_size; };
struct kfd_ioctl_dbg_trap_device_snapshot_args {
	__u64 exception_mask; __u64 snapshot_buf_ptr; __u32 num_devices; __u32 entry_size; };
struct kfd_ioctl_dbg_trap_args {
	__u32 pid; __u32 op;
	union {
		struct kfd_ioctl_dbg_trap_enable_args enable;
		struct kfd_ioctl_dbg_trap_send_runtime_event_args send_runtime_event;
		struct kfd_ioctl_dbg_trap_set_exceptions_enabled_args set_exceptions_enabled;
		struct kfd_ioctl_dbg_trap_set_wave_launch_override_args launch_override;
		struct kfd_ioctl_dbg_trap_set_wave_launch_mode_args launch_mode;
		struct kfd_ioctl_dbg_trap_suspend_queues_args suspend_queues;
		struct kfd_ioctl_dbg_trap_resume_queues_args resume_queues;
		struct kfd_ioctl_dbg_trap_set_node_address_watch_args set_node_address_watch;
		struct kfd_ioctl_dbg_trap_clear_node_address_watch_args clear_node_address_watch;
		struct kfd_ioctl_dbg_trap_set_flags_args set_flags;
		struct kfd_ioctl_dbg_trap_query_debug_event_args query_debug_event;
		struct kfd_ioctl_dbg_trap_query_exception_info_args query_exception_info;
		struct kfd_ioctl_dbg_trap_queue_snapshot_args queue_snapshot;
		struct kfd_ioctl_dbg_trap_device_snapshot_args device_snapshot;
	};
};
#define AMDKFD_IOC_RUNTIME_ENABLE AMDKFD_IOWR(0x25, struct kfd_ioctl_runtime_enable_args)
#define AMDKFD_IOC_DBG_TRAP AMDKFD_IOWR(0x26, struct kfd_ioctl_dbg_trap_args)
#define KFD_DBG_QUEUE_ERROR_MASK (1u << 30)
#define KFD_DBG_QUEUE_INVALID_MASK (1u << 31)
#define EC_QUEUE_NEW 31
#define KFD_EC_MASK(ecode) (1ULL << (ecode - 1))
#endif

/* The patched driver's argument as documented (never found in a driver source). */
struct xq_patched_preempt_queue_args { __u32 queue_id; __u32 preempt_type; __u32 timeout_ms; __u32 pad; };

#define SIZE(t) printf("sizeof.%s %zu\n", #t, sizeof(struct t))
#define OFF(t, f) printf("offsetof.%s.%s %zu\n", #t, #f, offsetof(struct t, f))
#define UOFF(m, f) printf("offsetof.kfd_ioctl_dbg_trap_args.%s.%s %zu\n", #m, #f, offsetof(struct kfd_ioctl_dbg_trap_args, m.f))
#define NUM(n, v) printf("ioctl.%s 0x%lx\n", n, (unsigned long) (v))

int main(void) {
	printf("header.system %d\n", XQ_SYSTEM_HEADER);
#ifdef KFD_IOCTL_MINOR_VERSION
	printf("header.minor %d\n", KFD_IOCTL_MINOR_VERSION);
#endif
	SIZE(kfd_ioctl_get_version_args);
	OFF(kfd_ioctl_get_version_args, major_version);
	OFF(kfd_ioctl_get_version_args, minor_version);
	SIZE(kfd_ioctl_runtime_enable_args);
	OFF(kfd_ioctl_runtime_enable_args, r_debug);
	OFF(kfd_ioctl_runtime_enable_args, mode_mask);
	OFF(kfd_ioctl_runtime_enable_args, capabilities_mask);
	SIZE(kfd_runtime_info);
	OFF(kfd_runtime_info, r_debug);
	OFF(kfd_runtime_info, runtime_state);
	OFF(kfd_runtime_info, ttmp_setup);
	SIZE(kfd_ioctl_dbg_trap_args);
	OFF(kfd_ioctl_dbg_trap_args, pid);
	OFF(kfd_ioctl_dbg_trap_args, op);
	UOFF(enable, exception_mask);
	UOFF(enable, rinfo_ptr);
	UOFF(enable, rinfo_size);
	UOFF(enable, dbg_fd);
	UOFF(suspend_queues, exception_mask);
	UOFF(suspend_queues, queue_array_ptr);
	UOFF(suspend_queues, num_queues);
	UOFF(suspend_queues, grace_period);
	UOFF(resume_queues, queue_array_ptr);
	UOFF(resume_queues, num_queues);
	UOFF(resume_queues, pad);
	UOFF(queue_snapshot, exception_mask);
	UOFF(queue_snapshot, snapshot_buf_ptr);
	UOFF(queue_snapshot, num_queues);
	UOFF(queue_snapshot, entry_size);
	SIZE(kfd_ioctl_dbg_trap_enable_args);
	SIZE(kfd_ioctl_dbg_trap_suspend_queues_args);
	SIZE(kfd_ioctl_dbg_trap_resume_queues_args);
	SIZE(kfd_ioctl_dbg_trap_queue_snapshot_args);
	SIZE(kfd_queue_snapshot_entry);
	OFF(kfd_queue_snapshot_entry, exception_status);
	OFF(kfd_queue_snapshot_entry, ring_base_address);
	OFF(kfd_queue_snapshot_entry, write_pointer_address);
	OFF(kfd_queue_snapshot_entry, read_pointer_address);
	OFF(kfd_queue_snapshot_entry, ctx_save_restore_address);
	OFF(kfd_queue_snapshot_entry, queue_id);
	OFF(kfd_queue_snapshot_entry, gpu_id);
	OFF(kfd_queue_snapshot_entry, ring_size);
	OFF(kfd_queue_snapshot_entry, queue_type);
	OFF(kfd_queue_snapshot_entry, ctx_save_restore_area_size);
	OFF(kfd_queue_snapshot_entry, reserved);
	SIZE(xq_patched_preempt_queue_args);
	OFF(xq_patched_preempt_queue_args, queue_id);
	OFF(xq_patched_preempt_queue_args, preempt_type);
	OFF(xq_patched_preempt_queue_args, timeout_ms);
	OFF(xq_patched_preempt_queue_args, pad);
	NUM("GET_VERSION", AMDKFD_IOC_GET_VERSION);
	NUM("RUNTIME_ENABLE", AMDKFD_IOC_RUNTIME_ENABLE);
	NUM("DBG_TRAP", AMDKFD_IOC_DBG_TRAP);
	NUM("PATCHED_PREEMPT", _IOWR('K', 0x87, struct xq_patched_preempt_queue_args));
	NUM("PATCHED_RESUME", _IOWR('K', 0x88, struct xq_patched_preempt_queue_args));
	NUM("PATCHED_PREEMPT_W", _IOW('K', 0x87, struct xq_patched_preempt_queue_args));
	NUM("PATCHED_RESUME_W", _IOW('K', 0x88, struct xq_patched_preempt_queue_args));
	printf("const.QUEUE_ERROR_BIT 0x%x\n", (unsigned) KFD_DBG_QUEUE_ERROR_MASK);
	printf("const.QUEUE_INVALID_BIT 0x%x\n", (unsigned) KFD_DBG_QUEUE_INVALID_MASK);
	printf("const.EC_QUEUE_NEW_MASK 0x%llx\n", (unsigned long long) KFD_EC_MASK(EC_QUEUE_NEW));
	return 0;
}
