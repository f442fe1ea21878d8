package dev.xq.bench.scenario;

import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.bench.args.ParamSpec;
import dev.xq.bench.args.Params;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code level}, {@code threshold}, {@code batch} and {@code window} overrides of the XQ
 * mode's queue configuration; a value of 0 (-1 for window) keeps the node's default.
 */
public final class QueueSettings {

    private QueueSettings() {
    }

    /** @return the four override parameters with the given defaults (0 / -1 = the node's default) */
    public static List<ParamSpec> params(long level, long threshold, long batch, long window) {
        List<ParamSpec> out = new ArrayList<>();
        out.add(ParamSpec.integer("level", level, 0, 3, "XQ mode: preemption level wish, 0 = node default"));
        out.add(ParamSpec.integer("threshold", threshold, 0, QueueConfig.MAX_THRESHOLD, "XQ mode: most commands in flight, 0 = node default"));
        out.add(ParamSpec.integer("batch", batch, 0, QueueConfig.MAX_THRESHOLD, "XQ mode: launch batch, 0 = node default (at most threshold)"));
        out.add(ParamSpec.integer("window", window, -1, QueueConfig.MAX_WINDOW_MICROS, "XQ mode: in-flight time budget in us, 0 = off, -1 = node default"));
        return out;
    }

    /** @return whether every override keeps the node's default (then XQ queues pass config null) */
    static boolean allDefault(Params p) {
        return p.longValue("level") == 0 && p.longValue("threshold") == 0 && p.longValue("batch") == 0 && p.longValue("window") == -1;
    }

    /**
     * @return the node's defaults with the overrides applied, or null when none is given
     * @throws IllegalArgumentException if batch exceeds threshold (naming both)
     */
    public static QueueConfig config(QueueConfig nodeDefaults, Params p) {
        if (allDefault(p)) {
            return null;
        }
        QueueConfig c = nodeDefaults;
        if (p.longValue("level") > 0) {
            c = c.withLevel(PreemptionLevel.of(p.intValue("level")));
        }
        if (p.longValue("threshold") > 0) {
            c = c.withThreshold(p.intValue("threshold"));
        }
        if (p.longValue("batch") > 0) {
            if (p.intValue("batch") > c.threshold()) {
                throw new IllegalArgumentException("batch=" + p.longValue("batch") + " is out of range; allowed: [1, threshold="
                        + c.threshold() + "]");
            }
            c = c.withBatch(p.intValue("batch"));
        }
        if (p.longValue("window") >= 0) {
            c = c.withWindowMicros(p.longValue("window"));
        }
        return c;
    }

    /** @return a short description for tables, e.g. {@code Lv3 thr 8/4 window 1000us} */
    public static String describe(QueueConfig c) {
        if (c == null) {
            return "node defaults";
        }
        return "Lv" + c.level().number() + " thr " + c.threshold() + "/" + c.batch() + " window "
                + (c.windowMicros() == 0 ? "off" : c.windowMicros() + "us");
    }
}
