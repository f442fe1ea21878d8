package dev.xq.policy.edf;

import dev.xq.policy.spi.Decision;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.log.Logger;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Policy {@code edf}: on each device the ready queue with the earliest absolute deadline runs
 * alone; the ranking (deadline = ready-since + {@code Deadline} hint, queues without a deadline
 * after all that have one, ties by ready-since then handle, and with {@code edf.demote.hopeless}
 * queues that can only miss behind those that can still make it) is described in
 * {@link DeadlineOrder}. Equal to {@code kedf} with K = 1 and the same demotion setting.
 * Stateless apart from that setting.
 */
@Component(configurationPid = EarliestDeadlineFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + EarliestDeadlineFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = EdfConfig.class)
public final class EarliestDeadlineFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "edf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.edf";

    @Reference(service = LoggerFactory.class)
    Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile boolean demoteHopeless;

    /** For Declarative Services. */
    public EarliestDeadlineFirst() {
        this.demoteHopeless = true;
    }

    EarliestDeadlineFirst(boolean demoteHopeless) {
        this.demoteHopeless = demoteHopeless;
    }

    @Activate
    @Modified
    void configure(EdfConfig config, java.util.Map<String, Object> raw) {
        try {
            // 'yes' would be read as false without a word
            dev.xq.runtime.config.ConfigCheck.require(EdfConfig.class, raw);
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, EdfConfig.class, raw, log::warn);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping edf.demote.hopeless={}: {}", NAME, demoteHopeless, e.getMessage());
            return;
        }
        demoteHopeless = config.edf_demote_hopeless();
        log.info("policy {} configured: edf.demote.hopeless={}", NAME, demoteHopeless);
    }

    boolean demoteHopeless() {
        return demoteHopeless;
    }

    @Override
    public String description() {
        return "earliest deadline first: per device, the ready queue whose deadline (ready-since + deadline hint) comes first runs"
                + (demoteHopeless ? "; queues that can only miss go last" : "");
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Decision decision = new Decision(view);
        DeadlineOrder.schedule(view, 1, demoteHopeless, decision);
        decision.applyTo(view, actions);
    }
}
