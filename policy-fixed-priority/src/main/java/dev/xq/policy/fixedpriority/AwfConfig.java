package dev.xq.policy.fixedpriority;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.service.metatype.annotations.Option;

/**
 * Knobs of policy {@code awf} (PID {@value ActiveWindowFirst#PID}).
 *
 * <p>Waiting bound with the guard on: no ready queue is held back longer than
 * {@code awf.guard.wait} at a stretch (plus the time to the next decision's timer and, at
 * preemption level 1, the work already in flight); it then runs beside the others for
 * {@code awf.guard.run} and may be held again. So a held queue may run at least
 * {@code run / (wait + run)} of the time. With the guard off (the default, XSched's rule), queues
 * outside the active window's group run on a device only while that group has no ready work there.
 */
@ObjectClassDefinition(id = ActiveWindowFirst.PID, name = "XQ policy awf",
        description = "Active window first: per display, the group (process, tenant) whose queues carry the highest window-active "
                + "mark owns the active window, and its queues go first on every device; the others by priority hint (awf.order). "
                + "Optional guard: a ready queue held back for awf.guard.wait runs beside the others for awf.guard.run.")
public @interface AwfConfig {

    /** @return how queues are ordered besides active-window-first */
    @AttributeDefinition(name = "Order besides the active window",
            description = "priority: within the active window's groups and among the other queues, priority hints order the "
                    + "queues as under hpf; together: hints are not read, the active window's ready queues run together and the "
                    + "others together whenever it has no ready queue on their device (XSched's AWF). One of priority, together.",
            options = {@Option(label = "priority: by priority hint (as hpf)", value = "priority"),
                       @Option(label = "together: hints not read (XSched's AWF)", value = "together")})
    String awf_order() default AwfSettings.DEFAULT_ORDER;

    /** @return microseconds a ready queue may be held back at a stretch, 0 = no guard */
    @AttributeDefinition(name = "Guard: longest hold (us)", min = "0", max = "3600000000",
            description = "0: no guard (XSched's rule: the others run only while the active window's group has no ready work on "
                    + "their device). Otherwise a ready queue held back this many microseconds at a stretch is let run for "
                    + "awf.guard.run; 100 to 3600000000.")
    long awf_guard_wait() default AwfSettings.DEFAULT_GUARD_WAIT_MICROS;

    /** @return microseconds the guard lets a held queue run */
    @AttributeDefinition(name = "Guard: run (us)", min = "100", max = "3600000000",
            description = "How long a queue that the guard lets run keeps running beside the others before it may be held again; "
                    + "100 to 3600000000 (used only when awf.guard.wait is not 0).")
    long awf_guard_run() default AwfSettings.DEFAULT_GUARD_RUN_MICROS;
}
