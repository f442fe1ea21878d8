package dev.xq.hal.kfd;

/**
 * One entry of a DBG_TRAP GET_QUEUE_SNAPSHOT answer: a user-mode queue of this process. Carries
 * no priority and no suspended flag (the kernel does not report them).
 *
 * @param queueId KFD queue id, what SUSPEND/RESUME take
 * @param gpuId KFD gpu id (topology), not a HIP device ordinal
 * @param queueType 0 compute, 1 SDMA, 2 compute AQL, 3 SDMA XGMI
 * @param exceptionStatus pending exception bits (QUEUE_NEW = {@code 1L << 30})
 * @param ringBase ring buffer address in this process
 * @param writePointerAddress address of the 64-bit write index
 * @param readPointerAddress address of the 64-bit read index
 * @param ringSize ring size in bytes
 */
public record QueueSnapshot(int queueId, int gpuId, int queueType, long exceptionStatus, long ringBase,
        long writePointerAddress, long readPointerAddress, int ringSize) {

    /** @return whether this is a compute AQL queue (what HIP streams run on) */
    public boolean computeAql() {
        return queueType == KfdAbi.QUEUE_TYPE_COMPUTE_AQL;
    }

    /** @return whether the queue still carries QUEUE_NEW, so a suspend would refuse it */
    public boolean isNew() {
        return (exceptionStatus & KfdAbi.EC_QUEUE_NEW_MASK) != 0;
    }
}
