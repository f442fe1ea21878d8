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
 * Policy {@code kedf} (XSched's K-EDF): on each device the {@code kedf.k} ready queues with the
 * earliest absolute deadlines run together, the rest wait. Ranking and idle queues as described
 * in {@link DeadlineOrder}. Stateless apart from K.
 */
@Component(configurationPid = KEarliestDeadlineFirst.PID, immediate = true,
        property = {Policy.NAME_PROPERTY + "=" + KEarliestDeadlineFirst.NAME, Policy.BOUNDED_PROPERTY + ":Boolean=true"})
@Designate(ocd = KedfConfig.class)
public final class KEarliestDeadlineFirst implements Policy {

    /** The policy's name on the node. */
    public static final String NAME = "kedf";
    /** Its configuration PID. */
    public static final String PID = "dev.xq.policy.kedf";
    static final int DEFAULT_K = 4;
    static final int MAX_K = 4096;

    @Reference(service = LoggerFactory.class)
    private Logger log;

    // Written by Config Admin's thread, read by the scheduler's.
    private volatile int k;
    private volatile boolean demoteHopeless = true;

    /** For Declarative Services. */
    public KEarliestDeadlineFirst() {
        this.k = DEFAULT_K;
    }

    KEarliestDeadlineFirst(int k, Logger log) {
        this(k, true, log);
    }

    KEarliestDeadlineFirst(int k, boolean demoteHopeless, Logger log) {
        this.k = checkK(k);
        this.demoteHopeless = demoteHopeless;
        this.log = log;
    }

    /**
     * @throws IllegalArgumentException naming the value and the allowed range
     */
    static int checkK(int k) {
        if (k < 1 || k > MAX_K) {
            throw new IllegalArgumentException("kedf.k " + k + " is out of range [1, " + MAX_K + "]");
        }
        return k;
    }

    /** A bad configuration at start fails activation, so no policy runs with values nobody asked for. */
    @Activate
    void activate(KedfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(KedfConfig.class, raw); // 'yes' would be read as false without a word
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, KedfConfig.class, raw, log::warn);
            k = checkK(config.kedf_k());
        } catch (IllegalArgumentException e) {
            log.error("policy {} not started: {}", NAME, e.getMessage());
            throw e;
        }
        demoteHopeless = config.kedf_demote_hopeless();
        log.info("policy {} configured: kedf.k={} kedf.demote.hopeless={}", NAME, k, demoteHopeless);
    }

    /** A bad update is refused and the running value stays. */
    @Modified
    void modified(KedfConfig config, java.util.Map<String, Object> raw) {
        try {
            dev.xq.runtime.config.ConfigCheck.require(KedfConfig.class, raw);
            dev.xq.runtime.config.ConfigCheck.warnUnknown(PID, KedfConfig.class, raw, log::warn);
            int newK = checkK(config.kedf_k());
            k = newK;
            demoteHopeless = config.kedf_demote_hopeless();
            log.info("policy {} configured: kedf.k={} kedf.demote.hopeless={}", NAME, k, demoteHopeless);
        } catch (IllegalArgumentException e) {
            log.error("policy {} configuration refused, keeping kedf.k={} kedf.demote.hopeless={}: {}", NAME, k, demoteHopeless,
                    e.getMessage());
        }
    }

    int k() {
        return k;
    }

    @Override
    public String description() {
        return "K earliest deadlines first: per device, the kedf.k ready queues with the earliest deadlines run together (K=" + k + ")"
                + (demoteHopeless ? "; queues that can only miss go last" : "");
    }

    @Override
    public void schedule(SchedulerView view, SchedulerActions actions) {
        Decision decision = new Decision(view);
        DeadlineOrder.schedule(view, k, demoteHopeless, decision);
        decision.applyTo(view, actions);
    }
}
