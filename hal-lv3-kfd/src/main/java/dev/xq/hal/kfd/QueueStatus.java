package dev.xq.hal.kfd;

/** What KFD wrote back into one queue id of a SUSPEND_QUEUES / RESUME_QUEUES array. */
public enum QueueStatus {
    /** No status bit: the queue was suspended (or resumed) as asked. */
    DONE,
    /** 0x80000000: no such queue, a new queue (QUEUE_NEW not yet cleared), or one being destroyed. */
    INVALID,
    /** 0x40000000: the queue had a hardware error. */
    HW_ERROR;

    static QueueStatus of(int written) {
        if ((written & KfdAbi.QUEUE_INVALID_BIT) != 0) {
            return INVALID;
        }
        if ((written & KfdAbi.QUEUE_ERROR_BIT) != 0) {
            return HW_ERROR;
        }
        return DONE;
    }

    /** @return one line saying what this status means for the queue */
    public String meaning() {
        return switch (this) {
            case DONE -> "done";
            case INVALID -> "invalid bit 0x80000000: no such queue, a new queue whose QUEUE_NEW exception was not"
                    + " cleared by a snapshot, or a queue being destroyed; the queue was left as it was";
            case HW_ERROR -> "error bit 0x40000000: the queue had a hardware error";
        };
    }
}
