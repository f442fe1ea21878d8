package dev.xq.policy.fixedpriority;

import dev.xq.policy.spi.QueueView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The runnable queues of one device in the order they became ready, with the highest base
 * priority among those ready by a given moment, so that the quantum rule of {@code hpf-aging}
 * costs O(log n) per queue instead of a scan of the device (decisions must stay fast with
 * 1,000 queues).
 */
final class ReadyOrder {

    private final long[] readySince;
    private final int[] prefixMax;

    ReadyOrder(List<QueueView> deviceQueues) {
        List<QueueView> runnable = new ArrayList<>(deviceQueues.size());
        for (QueueView q : deviceQueues) {
            if (q.runnable()) {
                runnable.add(q);
            }
        }
        runnable.sort(Comparator.comparingLong(QueueView::readySinceNanos));
        int n = runnable.size();
        readySince = new long[n];
        prefixMax = new int[n];
        for (int i = 0; i < n; i++) {
            readySince[i] = runnable.get(i).readySinceNanos();
            int p = runnable.get(i).priority();
            prefixMax[i] = i == 0 ? p : Math.max(prefixMax[i - 1], p);
        }
    }

    /** @return the highest priority among queues ready at or before {@code nanos}, or {@link Integer#MIN_VALUE} */
    int maxPriorityReadyBy(long nanos) {
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
        return lo == 0 ? Integer.MIN_VALUE : prefixMax[lo - 1];
    }
}
