package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The runnable queues of one device in the order they became ready, with range-maximum
 * lookups over their base priorities, so that the aging rules cost O(log n) per queue
 * instead of a scan of the device (decisions must stay fast with 1,000 queues).
 */
final class ReadyOrder {

    private final long[] readySince;
    private final int[] prefixMax;
    /** sparse[k][i] = max priority of positions i .. i + 2^k - 1. */
    private final int[][] sparse;

    ReadyOrder(List<QueueView> deviceQueues) {
        List<QueueView> runnable = new ArrayList<>(deviceQueues.size());
        for (QueueView q : deviceQueues) {
            if (Devices.runnable(q)) {
                runnable.add(q);
            }
        }
        runnable.sort(Comparator.comparingLong(QueueView::readySinceNanos));
        int n = runnable.size();
        readySince = new long[n];
        int[] priority = new int[n];
        prefixMax = new int[n];
        for (int i = 0; i < n; i++) {
            readySince[i] = runnable.get(i).readySinceNanos();
            priority[i] = runnable.get(i).priority();
            prefixMax[i] = i == 0 ? priority[i] : Math.max(prefixMax[i - 1], priority[i]);
        }
        int levels = 1;
        while ((1 << levels) <= n) {
            levels++;
        }
        sparse = new int[levels][];
        sparse[0] = priority;
        for (int k = 1; k < levels; k++) {
            int width = 1 << k;
            int[] row = new int[n - width + 1];
            int[] prev = sparse[k - 1];
            for (int i = 0; i < row.length; i++) {
                row[i] = Math.max(prev[i], prev[i + width / 2]);
            }
            sparse[k] = row;
        }
    }

    /** @return the highest priority among queues ready at or before {@code nanos}, or {@link Integer#MIN_VALUE} */
    int maxPriorityReadyBy(long nanos) {
        int end = upperBound(nanos);
        return end == 0 ? Integer.MIN_VALUE : prefixMax[end - 1];
    }

    /**
     * @return the earliest ready-since time among queues that became ready strictly after
     *         {@code afterNanos} and have a priority above {@code priority}, or {@link Long#MIN_VALUE}
     */
    long firstReadyAfterAbove(long afterNanos, int priority) {
        int from = upperBound(afterNanos);
        int n = readySince.length;
        if (from >= n || rangeMax(from, n - 1) <= priority) {
            return Long.MIN_VALUE;
        }
        int lo = from;
        int hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (rangeMax(from, mid) > priority) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return readySince[lo];
    }

    private int rangeMax(int from, int to) {
        int k = 31 - Integer.numberOfLeadingZeros(to - from + 1);
        return Math.max(sparse[k][from], sparse[k][to - (1 << k) + 1]);
    }

    /** @return the number of queues with readySince at or before {@code nanos} */
    private int upperBound(long nanos) {
        int lo = 0;
        int hi = readySince.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (readySince[mid] <= nanos) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
