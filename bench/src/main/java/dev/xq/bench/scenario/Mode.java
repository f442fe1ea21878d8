package dev.xq.bench.scenario;

import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import java.util.List;

/**
 * How one mode of a scenario runs its queues: which policy decides and how queues launch.
 *
 * @param label the name in tables and JSON: {@code standalone}, {@code native}, {@code prio}, {@code xq:hpf}, ...
 * @param policy the policy to select
 * @param config the queue configuration, or null for the node's defaults
 * @param nativePriorities whether queues get hardware (stream) priorities
 */
public record Mode(String label, String policy, QueueConfig config, boolean nativePriorities) {

    /** The measured tenant alone, no scheduler, every command straight to the hardware queue. */
    public static Mode standalone() {
        return new Mode("standalone", SchedulerControl.NATIVE, QueueConfig.unthrottled(), false);
    }

    /** Every tenant, no scheduler: what the hardware does on its own. */
    public static Mode nativeMode() {
        return new Mode("native", SchedulerControl.NATIVE, QueueConfig.unthrottled(), false);
    }

    /** No scheduler, but hardware queue priorities (CUDA stream priorities). */
    public static Mode prio() {
        return new Mode("prio", SchedulerControl.NATIVE, QueueConfig.unthrottled(), true);
    }

    /** XQ with {@code policy} and the node's default queue configuration. */
    public static Mode xq(String policy) {
        return new Mode("xq:" + policy, policy, null, false);
    }

    /** XQ with {@code policy} and the given queue configuration. */
    public static Mode xq(String policy, QueueConfig config) {
        return new Mode("xq:" + policy, policy, config, false);
    }

    /** @return this mode under another label */
    public Mode labelled(String l) {
        return new Mode(l, policy, config, nativePriorities);
    }

    /**
     * @param nativePriority the stream priority to use in {@code prio} mode (ignored otherwise)
     * @return options for a queue of this mode
     */
    public QueueOptions options(String device, String name, String group, int nativePriority, List<Hint> hints) {
        QueueOptions o = new QueueOptions(device, name, group, config, hints);
        return nativePriorities ? o.withNativePriority(nativePriority) : o;
    }
}
