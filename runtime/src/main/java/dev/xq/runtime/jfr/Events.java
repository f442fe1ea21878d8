package dev.xq.runtime.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** The event classes; only loaded once {@link Tracing} knows jdk.jfr is there. */
final class Events {

    private Events() {
    }

    static void suspended(long handle, String queue, int level) {
        SuspendEvent e = new SuspendEvent();
        if (e.shouldCommit()) {
            e.atNanos = System.nanoTime();
            e.handle = handle;
            e.queue = queue;
            e.level = level;
            e.commit();
        }
    }

    static void resumed(long handle, String queue) {
        ResumeEvent e = new ResumeEvent();
        if (e.shouldCommit()) {
            e.atNanos = System.nanoTime();
            e.handle = handle;
            e.queue = queue;
            e.commit();
        }
    }

    /** Creates one of each event without committing it: the JDK builds its event metadata on first use. */
    static void warmUp() {
        new DecisionEvent().isEnabled();
        new SuspendEvent().isEnabled();
        new ResumeEvent().isEnabled();
        new WatchdogEvent().isEnabled();
        new CommandEvent().isEnabled();
    }

    static void decision(String policy, int queues, int suspends, int resumes, long decisionNanos, long totalNanos) {
        DecisionEvent e = new DecisionEvent();
        if (e.shouldCommit()) {
            e.policy = policy;
            e.queues = queues;
            e.suspends = suspends;
            e.resumes = resumes;
            e.decisionTime = decisionNanos;
            e.totalTime = totalNanos;
            e.commit();
        }
    }

    /** The command event's type, read by {@link #commandEnabled()} (a field read when no recording wants it). */
    private static volatile jdk.jfr.EventType commandType;

    static boolean commandEnabled() {
        jdk.jfr.EventType t = commandType;
        if (t == null) {
            t = jdk.jfr.EventType.getEventType(CommandEvent.class);
            commandType = t;
        }
        return t.isEnabled();
    }

    static void command(long handle, String queue, long sequence, long[] t, long submitThread, long launchThread) {
        CommandEvent e = new CommandEvent();
        if (e.shouldCommit()) {
            e.handle = handle;
            e.queue = queue;
            e.sequence = sequence;
            e.enterNanos = t[0];
            e.submitNanos = t[1];
            e.launchBeginNanos = t[2];
            e.launchEndNanos = t[3];
            e.pumpEndNanos = t[4];
            e.returnNanos = t[5];
            e.startNanos = t[6];
            e.endNanos = t[7];
            e.unheld = t.length > 8 && t[8] != 0;
            e.submitThread = submitThread;
            e.launchThread = launchThread;
            e.commit();
        }
    }

    static void watchdog(String policy, String reason) {
        WatchdogEvent e = new WatchdogEvent();
        if (e.shouldCommit()) {
            e.policy = policy;
            e.reason = reason;
            e.commit();
        }
    }

    @Name("dev.xq.Suspend")
    @Label("XQueue suspended")
    @Category("XQ")
    @StackTrace(false)
    static final class SuspendEvent extends Event {
        @Label("Host time")
        @Description("System.nanoTime() when the hardware queue had been told (as the dev.xq.Command event's times)")
        long atNanos;
        @Label("Handle")
        long handle;
        @Label("Queue")
        String queue;
        @Label("Level")
        int level;
    }

    @Name("dev.xq.Resume")
    @Label("XQueue resumed")
    @Category("XQ")
    @StackTrace(false)
    static final class ResumeEvent extends Event {
        @Label("Host time")
        @Description("System.nanoTime() when the hardware queue had been told (as the dev.xq.Command event's times)")
        long atNanos;
        @Label("Handle")
        long handle;
        @Label("Queue")
        String queue;
    }

    @Name("dev.xq.Decision")
    @Label("Scheduling decision")
    @Description("One call of the active policy and the actions it took")
    @Category("XQ")
    @StackTrace(false)
    static final class DecisionEvent extends Event {
        @Label("Policy")
        String policy;
        @Label("Queues")
        int queues;
        @Label("Suspends")
        int suspends;
        @Label("Resumes")
        int resumes;
        @Label("Decision time")
        @Timespan(Timespan.NANOSECONDS)
        long decisionTime;
        @Label("Total time")
        @Description("Views, the policy and applying its actions")
        @Timespan(Timespan.NANOSECONDS)
        long totalTime;
    }

    @Name("dev.xq.Watchdog")
    @Label("Policy set aside")
    @Category("XQ")
    @StackTrace(false)
    static final class WatchdogEvent extends Event {
        @Label("Policy")
        String policy;
        @Label("Reason")
        String reason;
    }

    @Name("dev.xq.Command")
    @Label("Command completed")
    @Description("A command's host times (System.nanoTime): submitted, launch call begin and end, device start and end;"
            + " off by default (one event per command)")
    @Category("XQ")
    @StackTrace(false)
    @jdk.jfr.Enabled(false)
    static final class CommandEvent extends Event {
        @Label("Handle")
        long handle;
        @Label("Queue")
        String queue;
        @Label("Sequence")
        long sequence;
        @Label("submit() entered")
        long enterNanos;
        @Label("Submitted")
        long submitNanos;
        @Label("Submitting thread id")
        long submitThread;
        @Label("Launch call begin")
        long launchBeginNanos;
        @Label("Launch call end")
        long launchEndNanos;
        @Label("Launching thread id")
        long launchThread;
        @Label("Submitter's pump returned")
        long pumpEndNanos;
        @Label("submit() returned")
        long returnNanos;
        @Label("Device start")
        long startNanos;
        @Label("Device end")
        long endNanos;
        @Label("Launched unheld")
        @Description("The runtime told the hardware queue that this launch need not be held in place (an arrival guard foresaw no suspend while it runs)")
        boolean unheld;
    }
}
