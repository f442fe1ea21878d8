package dev.xq.api;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Operator view of the node's scheduler: which policy decides, which can, and how it went.
 */
@ProviderType
public interface SchedulerControl {

    /** Name of the built-in policy: every ready queue runs. It is also the fallback. */
    String NATIVE = "native";

    /** @return the policy name selected by configuration */
    String selectedPolicy();

    /** @return the policy deciding now: the selected one, or {@link #NATIVE} when it is missing or set aside */
    String activePolicy();

    /**
     * Selects the policy by name. Takes effect at the next scheduling event; the previous
     * policy's decisions stay until the new one decides.
     * @throws IllegalArgumentException if no policy of that name is registered (the message lists them)
     */
    void selectPolicy(String name);

    /** @return the policies that can be selected */
    List<PolicyInfo> policies();

    /** @return counters since the node started; the timing figures since the last {@link #resetStats()} */
    SchedulerStats stats();

    /**
     * Starts a new measuring window for the timing figures (decision percentiles, longest
     * event-to-decision gap); the counters keep counting.
     */
    void resetStats();

    /**
     * How long the policies took to decide, every decision since the node started (the
     * histogram a metrics scraper wants; {@link #stats()} has the recent percentiles).
     */
    default DecisionHistogram decisionHistogram() {
        return DecisionHistogram.EMPTY;
    }

    /**
     * Decision times in fixed buckets.
     * @param upperBoundsMicros each bucket's upper bound, ascending (the last bucket, beyond them, is unbounded)
     * @param counts decisions per bucket, not cumulative; one more entry than the bounds (the unbounded one)
     * @param sumMicros all decisions' time together
     */
    record DecisionHistogram(List<Double> upperBoundsMicros, List<Long> counts, double sumMicros) {
        public static final DecisionHistogram EMPTY = new DecisionHistogram(List.of(), List.of(0L), 0);

        public DecisionHistogram {
            upperBoundsMicros = List.copyOf(upperBoundsMicros);
            counts = List.copyOf(counts);
            if (counts.size() != upperBoundsMicros.size() + 1) {
                throw new IllegalArgumentException(counts.size() + " counts for " + upperBoundsMicros.size()
                        + " bounds; allowed: one more count than bounds");
            }
        }

        /** @return the decisions counted */
        public long count() {
            return counts.stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * A selectable policy.
     * @param setAside why the watchdog set it aside, or empty
     */
    record PolicyInfo(String name, String description, String bundle, boolean active, String setAside) {
    }

    /**
     * Scheduler counters.
     * @param decisions policy invocations
     * @param swaps times the deciding policy changed
     * @param watchdogTrips times a policy was set aside for throwing or overrunning its deadline
     * @param decisionP50Micros median decision time (recent decisions)
     * @param decisionP99Micros 99th percentile decision time (recent decisions)
     * @param maxDecisionGapMicros longest time from an event to the decision that handled it
     */
    record SchedulerStats(long decisions, long swaps, long watchdogTrips, double decisionP50Micros,
                          double decisionP99Micros, double maxDecisionGapMicros) {
    }
}
