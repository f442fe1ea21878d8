package dev.xq.host;

import java.util.List;

/**
 * How one process shares its device (docs/processes.md, "Space and time" and "Narrowing"): in
 * time only, or as a client of the node's MPS server on a share of the device, held in time or
 * not, or on the whole device and narrowed at times. Set by the process's HELLO; narrowing may
 * stop later (its {@code NARROW off}). Written by the session thread, read by the shell and by
 * the threads that open its streams' slots.
 */
final class ProcessSpace {

    /** The process is a client of the node's MPS server, on this share of the device (100: not shared in space, or all of it) */
    private volatile int smShare = 100;
    private volatile boolean spatial;
    private volatile boolean heldInTime = true;
    /** On the whole device and narrowed at times (see {@link SlotControl#narrows()}) */
    private volatile boolean narrowed;
    /** Not a client of the node's server while it runs: a context the GPU time-slices against the server's */
    private volatile boolean ownContext;
    /** Narrowed on green contexts split plainly: its driver refused the split for thread clusters ({@code NARROW plain}) */
    private volatile boolean splitPlain;
    /** Told to join the server at MPS's lower client priority ({@code SPACE ... low}; the process may have kept its own) */
    private volatile boolean lowPriority;

    /** At HELLO: what {@code plan} gives a process of priority {@code prio} that offered {@code caps}. */
    void hello(SpacePlan plan, Integer prio, List<String> caps) {
        // a client of the node's MPS server (it asked with SPACE before its context existed):
        // its share follows from its priority, as the SPACE answer did
        spatial = caps.contains("mps") && plan.on();
        // a process that can be narrowed was told so in the answer to its SPACE (the whole device)
        narrowed = spatial && plan.narrowed(prio, caps.contains("narrow"));
        smShare = spatial ? narrowed ? 100 : plan.share(prio) : 100;
        ownContext = plan.on() && !spatial;
        // a latency-critical process the plan keeps out of the server is never held, as one on the whole device in it
        // (narrowed below a latency-critical one of a higher priority, a latency-critical process
        // is still never held: its holds become narrowings or nothing)
        heldInTime = spatial ? narrowed ? !plan.untimedWhenNarrowed(prio) : plan.heldInTime(smShare) : !plan.ownContext(prio);
        lowPriority = spatial && plan.lowBestEffort() && plan.share(prio) < 100;
    }

    boolean lowPriority() {
        return lowPriority;
    }

    boolean ownContext() {
        return ownContext;
    }

    int smShare() {
        return smShare;
    }

    boolean spatial() {
        return spatial;
    }

    boolean heldInTime() {
        return heldInTime;
    }

    boolean narrowed() {
        return narrowed;
    }

    /** The process's narrowing stopped; @return whether it was narrowed until now */
    boolean narrowingStopped() {
        if (!narrowed) {
            return false; // never narrowed: nothing to stop
        }
        narrowed = false;
        return true;
    }

    /** Its green contexts are split plainly; @return whether it is narrowed and was not known to be until now */
    boolean splitPlainly() {
        if (!narrowed || splitPlain) {
            return false; // not narrowed, or said before
        }
        splitPlain = true;
        return true;
    }

    boolean splitPlain() {
        return splitPlain;
    }

    /** @return the part of the registration's log line that tells the share ("" in time only) */
    String registered() {
        return spatial ? ", MPS client on " + smShare + " % of the device" + (narrowed ? heldInTime ? ", narrowed at times"
                : ", narrowed behind wider latency-critical processes of a higher priority, never held" : "")
                + (lowPriority ? ", told MPS's lower client priority" : "")
                : ownContext && !heldInTime ? ", a context of its own beside the MPS server, never held" : "";
    }

    /** @return the operator's column: {@code time}, {@code own context}, or {@code mps <share>%} and how it is held */
    String display() {
        return spatial ? "mps " + smShare + "%" + (narrowed ? (splitPlain ? " narrowed (plain split)" : " narrowed") + (heldInTime ? "" : ", untimed")
                : heldInTime ? "" : " untimed") + (lowPriority ? ", low" : "")
                : ownContext && !heldInTime
                ? "own context" : "time";
    }
}
