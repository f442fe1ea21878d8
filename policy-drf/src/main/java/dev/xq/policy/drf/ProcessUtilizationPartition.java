package dev.xq.policy.drf;

import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;

/**
 * Policy {@code pup}: XSched's name (PUP, per-process utilization partition) for
 * {@code bandwidth-group}, which is the same idea, so XQ keeps one implementation and this
 * component only lets {@code xq:policy pup} select it. It decides exactly as
 * {@link GroupBandwidthPartition} (it holds one and hands every decision to it) and reads the
 * same configuration, PID {@value GroupBandwidthPartition#PID}: one set of knobs for both names.
 *
 * <p>Why one policy: both give each process (XQ: each group; a process's queues are group
 * {@code <pid>:<name>}) device time in proportion to its utilization hint, whatever number of
 * queues it opens, by letting the processes take turns of a slice each and suspending every
 * queue of the others. Where XSched's PUP differs, XQ's behaviour is kept on purpose:
 * <ul>
 * <li>XSched banks the unused rest of a slice, and a process that is skipped because it has no
 * work gains a slice of budget at each skip (the excess over one slice decaying by 0.9 per turn,
 * so up to about 11 slices). A process back from idleness may then hold the device for many
 * slices while the others wait. {@code bandwidth-group} banks nothing: idleness earns no credit,
 * as under {@code cfs}.</li>
 * <li>XSched runs one process at a time across all devices; {@code bandwidth-group} rotates per
 * device, so a process that has work on only one device does not keep another device idle.</li>
 * <li>XSched takes a process's utilization from a hint addressed to its pid;
 * {@code bandwidth-group} takes the largest {@code Utilization} hint among the group's queues on
 * the device (a process hints any of its streams).</li>
 * </ul>
 */
@Component(configurationPid = GroupBandwidthPartition.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + ProcessUtilizationPartition.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
public final class ProcessUtilizationPartition implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "pup";

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Replaced at activation (DS sets the logger first); decisions only read it.
    private volatile GroupBandwidthPartition same;

    /** For Declarative Services. */
    public ProcessUtilizationPartition() {
    }

    ProcessUtilizationPartition(GroupBandwidthPartition same) {
        this.same = same;
    }

    /** A bad configuration at start fails activation, as it does for {@code bandwidth-group}. */
    @Activate
    void activate(BandwidthConfig config, java.util.Map<String, Object> raw) {
        GroupBandwidthPartition g = new GroupBandwidthPartition(BandwidthSettings.DEFAULTS, log);
        g.activate(config, raw);
        same = g;
    }

    /** A bad update is refused and the running values stay, as for {@code bandwidth-group}. */
    @Modified
    void modified(BandwidthConfig config, java.util.Map<String, Object> raw) {
        same.modified(config, raw);
    }

    /** @return the settings in force (for tests) */
    BandwidthSettings settings() {
        return same.settings();
    }

    @Override
    public String description() {
        return "same policy as bandwidth-group under XSched's name (per-process utilization partition), same knobs (PID "
                + GroupBandwidthPartition.PID + ")";
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        same.schedule(view, actions);
    }
}
