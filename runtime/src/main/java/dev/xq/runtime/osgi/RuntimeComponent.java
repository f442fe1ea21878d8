package dev.xq.runtime.osgi;

import dev.xq.api.DeviceInfo;
import dev.xq.api.DriverInfo;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueControl;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.external.spi.ExternalQueues;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.policy.spi.Policy;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.OsgiLog;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.log.LoggerFactory;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Publishes the node's XQ core as {@link SchedulerControl} and {@link ExternalQueues} (for the
 * bundle that serves processes; {@link XQueueService} is published per bundle by
 * {@link HostServiceComponent}), feeds it
 * the drivers, preemption providers and policies found in the service registry, and applies
 * the configuration of PIDs {@code dev.xq.scheduler} and {@code dev.xq.queue.defaults}.
 */
@Component(service = {SchedulerControl.class, ExternalQueues.class}, immediate = true,
        configurationPid = "dev.xq.scheduler", configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = SchedulerConfig.class)
public class RuntimeComponent implements XQueueService, SchedulerControl, ExternalQueues {

    private final OsgiLog log = new OsgiLog(RuntimeComponent.class);
    private final XqCore core = new XqCore(log);
    private String configuredPolicy;

    @Reference(service = LoggerFactory.class, cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
    void bindLoggerFactory(LoggerFactory factory) {
        log.bind(factory);
    }

    void unbindLoggerFactory(LoggerFactory factory) {
        log.unbind();
    }

    @Activate
    void activate(SchedulerConfig scheduler, Map<String, Object> raw) {
        apply(scheduler, raw);
        core.start();
    }

    @Modified
    void modified(SchedulerConfig scheduler, Map<String, Object> raw) {
        apply(scheduler, raw);
    }

    /** The values of the configuration being applied that DS would not read as written, by key ({@link #read}). */
    private Map<String, String> badValues = Map.of();

    /** The keys of {@code dev.xq.scheduler}; others are named in a warning (a misspelt key must not go unnoticed). */
    private static final java.util.Set<String> KEYS = java.util.Set.of("policy", "decisionDeadlineMicros", "inlineDecisions", "inlinePolicyBundles",
            "arrivalGuards", "wideBeats", "narrowedGuards", "fruitlessSpells", "wholeBesideReserve", "narrowBeatsKeepReserve", "holdBesideSlowed", "randomReturns", "bestEffortParts", "bestEffortWeights", "bestEffortWidths", "bestEffortTurnsWithoutGap", "bestEffortShares", "holdBesideNarrow", "bestEffortBalance", "bestEffortBalanceMemory", "bestEffortBalanceQuick", "bestEffortBalanceEarly", "bestEffortBalanceCarry", "bestEffortBalanceLongCommands", "bestEffortBalanceRegion", "bestEffortBalanceRegionShort", "bestEffortOneFrame", "bestEffortDeviceFrame", "bestEffortBalanceSliceMicros", "bestEffortUnbounded", "offTurnAlwaysHeld", "arrivalLingerMicros", "arrivalGraceMicros", "arrivalReactionGraceMicros", "aloneWindowMicros", "guardedWindowMicros", "narrowedWindowMicros", "onTop",
            "awaitSpinMicros");

    @Deactivate
    void deactivate() {
        core.stop();
    }

    /**
     * Applies each key on its own: a bad value (out of range, or not a value of its type at all,
     * which DS reports only when the key is read) is logged naming the key, the value and what is
     * allowed, and changes nothing, while the other keys of the same configuration still apply.
     */
    private void apply(SchedulerConfig s, Map<String, Object> raw) {
        badValues = dev.xq.runtime.config.ConfigCheck.problemsByKey(SchedulerConfig.class, raw);
        for (String k : raw.keySet()) {
            if (!KEYS.contains(k) && !k.startsWith("component.") && !k.startsWith("service.") && !k.startsWith("felix.")
                    && !k.startsWith("osgi.") && !k.startsWith(".")) {
                log.warn("dev.xq.scheduler: unknown key '" + k + "' ignored; known keys: " + String.join(", ", new java.util.TreeSet<>(KEYS)));
            }
        }
        Long micros = read("decisionDeadlineMicros", "a whole number of microseconds in [100, 10000000]", s::decisionDeadlineMicros);
        if (micros != null) {
            // checked before it is multiplied: a huge value must not wrap around into a tiny deadline
            if (micros < 100 || micros > 10_000_000L) {
                log.error("dev.xq.scheduler: decisionDeadlineMicros " + micros + " is out of range [100, 10000000] us; keeping "
                        + core.scheduler().deadlineNanos() / 1000 + " us", null);
            } else {
                core.scheduler().deadline(micros * 1000L);
            }
        }
        Boolean inline = read("inlineDecisions", "true or false", s::inlineDecisions);
        // DS reads any text but "true" as false: "maybe" must not silently switch inline decisions off
        if (inline != null && inline != core.scheduler().inlineDecisions()) {
            core.scheduler().inlineDecisions(inline);
        }
        String trusted = read("inlinePolicyBundles", "a comma-separated list of bundle symbolic names or '*'",
                s::inlinePolicyBundles);
        if (trusted != null) {
            try {
                core.scheduler().inlinePolicyBundles(java.util.Arrays.stream(trusted.split(",")).map(String::trim)
                        .filter(t -> !t.isEmpty()).toList());
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: inlinePolicyBundles: " + e.getMessage() + "; keeping "
                        + String.join(",", core.scheduler().inlinePolicyBundles()), null);
            }
        }
        Boolean guards = read("arrivalGuards", "true or false", s::arrivalGuards);
        if (guards != null && guards != core.scheduler().arrivalGuards()) {
            core.scheduler().arrivalGuards(guards);
        }
        Boolean wide = read("wideBeats", "true or false", s::wideBeats);
        if (wide != null && wide != core.scheduler().wideBeats()) {
            core.scheduler().wideBeats(wide);
        }
        Boolean narrowedGuards = read("narrowedGuards", "true or false", s::narrowedGuards);
        if (narrowedGuards != null && narrowedGuards != core.scheduler().narrowedGuards()) {
            core.scheduler().narrowedGuards(narrowedGuards);
        }
        Boolean fruitless = read("fruitlessSpells", "true or false", s::fruitlessSpells);
        if (fruitless != null && fruitless != core.scheduler().fruitlessSpells()) {
            core.scheduler().fruitlessSpells(fruitless);
        }
        Boolean wholeBeside = read("wholeBesideReserve", "true or false", s::wholeBesideReserve);
        if (wholeBeside != null && wholeBeside != core.scheduler().wholeBesideReserve()) {
            core.scheduler().wholeBesideReserve(wholeBeside);
        }
        Boolean narrowBeats = read("narrowBeatsKeepReserve", "true or false", s::narrowBeatsKeepReserve);
        if (narrowBeats != null && narrowBeats != core.scheduler().narrowBeatsKeepReserve()) {
            core.scheduler().narrowBeatsKeepReserve(narrowBeats);
        }
        Boolean slowedOn = read("holdBesideSlowed", "true or false", s::holdBesideSlowed);
        if (slowedOn != null && slowedOn != core.scheduler().holdBesideSlowed()) {
            core.scheduler().holdBesideSlowed(slowedOn);
        }
        Boolean random = read("randomReturns", "true or false", s::randomReturns);
        if (random != null && random != core.scheduler().randomReturns()) {
            core.scheduler().randomReturns(random);
        }
        Boolean weighed = read("bestEffortWeights", "true or false", s::bestEffortWeights);
        if (weighed != null && weighed != core.bestEffortWeights()) {
            core.bestEffortWeights(weighed);
        }
        Boolean widths = read("bestEffortWidths", "true or false", s::bestEffortWidths);
        if (widths != null && widths != core.bestEffortWidths()) {
            core.bestEffortWidths(widths);
        }
        Boolean ungapped = read("bestEffortTurnsWithoutGap", "true or false", s::bestEffortTurnsWithoutGap);
        if (ungapped != null && ungapped != core.bestEffortTurnsWithoutGap()) {
            core.bestEffortTurnsWithoutGap(ungapped);
        }
        Boolean balance = read("bestEffortBalance", "true or false", s::bestEffortBalance);
        if (balance != null && balance != core.bestEffortBalance()) {
            core.bestEffortBalance(balance);
        }
        Boolean memory = read("bestEffortBalanceMemory", "true or false", s::bestEffortBalanceMemory);
        if (memory != null && memory != core.bestEffortBalanceMemory()) {
            core.bestEffortBalanceMemory(memory);
        }
        Boolean quick = read("bestEffortBalanceQuick", "true or false", s::bestEffortBalanceQuick);
        if (quick != null && quick != core.bestEffortBalanceQuick()) {
            core.bestEffortBalanceQuick(quick);
        }
        Boolean early = read("bestEffortBalanceEarly", "true or false", s::bestEffortBalanceEarly);
        if (early != null && early != core.bestEffortBalanceEarly()) {
            core.bestEffortBalanceEarly(early);
        }
        Boolean carry = read("bestEffortBalanceCarry", "true or false", s::bestEffortBalanceCarry);
        if (carry != null && carry != core.bestEffortBalanceCarry()) {
            core.bestEffortBalanceCarry(carry);
        }
        Boolean longCommands = read("bestEffortBalanceLongCommands", "true or false", s::bestEffortBalanceLongCommands);
        if (longCommands != null && longCommands != core.bestEffortBalanceLongCommands()) {
            core.bestEffortBalanceLongCommands(longCommands);
        }
        Boolean region = read("bestEffortBalanceRegion", "true or false", s::bestEffortBalanceRegion);
        if (region != null && region != core.bestEffortBalanceRegion()) {
            core.bestEffortBalanceRegion(region);
        }
        Boolean regionShort = read("bestEffortBalanceRegionShort", "true or false", s::bestEffortBalanceRegionShort);
        if (regionShort != null && regionShort != core.bestEffortBalanceRegionShort()) {
            core.bestEffortBalanceRegionShort(regionShort);
        }
        Boolean oneFrame = read("bestEffortOneFrame", "true or false", s::bestEffortOneFrame);
        if (oneFrame != null && oneFrame != core.bestEffortOneFrame()) {
            core.bestEffortOneFrame(oneFrame);
        }
        Boolean deviceFrame = read("bestEffortDeviceFrame", "true or false", s::bestEffortDeviceFrame);
        if (deviceFrame != null && deviceFrame != core.bestEffortDeviceFrame()) {
            core.bestEffortDeviceFrame(deviceFrame);
        }
        Long slice = read("bestEffortBalanceSliceMicros", "a whole number of microseconds, 0 (off) or in [100, 100000]",
                s::bestEffortBalanceSliceMicros);
        if (slice != null && slice != core.bestEffortBalanceSliceMicros()) {
            try {
                core.bestEffortBalanceSliceMicros(slice);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: " + e.getMessage() + "; keeping " + core.bestEffortBalanceSliceMicros() + " us", null);
            }
        }
        Boolean unbounded = read("bestEffortUnbounded", "true or false", s::bestEffortUnbounded);
        if (unbounded != null && unbounded != core.bestEffortUnbounded()) {
            core.bestEffortUnbounded(unbounded);
        }
        Boolean always = read("offTurnAlwaysHeld", "true or false", s::offTurnAlwaysHeld);
        if (always != null && always != core.offTurnAlwaysHeld()) {
            core.offTurnAlwaysHeld(always);
        }
        String shares = read("bestEffortShares", "NAME=WEIGHT[,NAME=WEIGHT...]", s::bestEffortShares);
        if (shares != null && !shares.trim().equals(core.bestEffortShares())) {
            try {
                core.bestEffortShares(shares);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: bestEffortShares '" + shares + "': " + e.getMessage() + "; keeping '"
                        + core.bestEffortShares() + "'", null);
            }
        }
        String beside = read("holdBesideNarrow", "NAME[,NAME...]", s::holdBesideNarrow);
        if (beside != null) {
            try {
                core.scheduler().holdBesideNarrow(beside);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: holdBesideNarrow '" + beside + "': " + e.getMessage() + "; keeping '"
                        + core.scheduler().holdBesideNarrow() + "'", null);
            }
        }
        Boolean parts = read("bestEffortParts", "true or false", s::bestEffortParts);
        if (parts != null && parts != core.bestEffortParts()) {
            core.bestEffortParts(parts);
        }
        Long linger = read("arrivalLingerMicros", "a whole number of microseconds in [0, 100000] (0: off)",
                s::arrivalLingerMicros);
        if (linger != null && linger != core.scheduler().arrivalLingerMicros()) {
            try {
                core.scheduler().arrivalLingerMicros(linger);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: arrivalLingerMicros: " + e.getMessage() + "; keeping "
                        + core.scheduler().arrivalLingerMicros() + " us", null);
            }
        }
        Long grace = read("arrivalGraceMicros", "a whole number of microseconds in [0, 100000]", s::arrivalGraceMicros);
        if (grace != null && grace != core.scheduler().arrivalGraceMicros()) {
            try {
                core.scheduler().arrivalGraceMicros(grace);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: arrivalGraceMicros: " + e.getMessage() + "; keeping "
                        + core.scheduler().arrivalGraceMicros() + " us", null);
            }
        }
        Long reaction = read("arrivalReactionGraceMicros", "a whole number of microseconds in [0, 100000] (0: off)",
                s::arrivalReactionGraceMicros);
        if (reaction != null && reaction != core.scheduler().arrivalReactionGraceMicros()) {
            try {
                core.scheduler().arrivalReactionGraceMicros(reaction);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: arrivalReactionGraceMicros: " + e.getMessage() + "; keeping "
                        + core.scheduler().arrivalReactionGraceMicros() + " us", null);
            }
        }
        Long alone = read("aloneWindowMicros", "a whole number of microseconds in [0, 1000000] (0: off)", s::aloneWindowMicros);
        if (alone != null && alone != core.aloneWindowMicros()) {
            try {
                core.aloneWindowMicros(alone);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: aloneWindowMicros: " + e.getMessage() + "; keeping " + core.aloneWindowMicros() + " us",
                        null);
            }
        }
        Long guarded = read("guardedWindowMicros", "a whole number of microseconds in [0, 100000] (0: off)", s::guardedWindowMicros);
        if (guarded != null && guarded != core.guardedWindowMicros()) {
            try {
                core.guardedWindowMicros(guarded);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: guardedWindowMicros: " + e.getMessage() + "; keeping " + core.guardedWindowMicros()
                        + " us", null);
            }
        }
        Long narrowedW = read("narrowedWindowMicros", "a whole number of microseconds in [0, 100000] (0: unbounded)",
                s::narrowedWindowMicros);
        if (narrowedW != null && narrowedW != core.narrowedWindowMicros()) {
            try {
                core.narrowedWindowMicros(narrowedW);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: narrowedWindowMicros: " + e.getMessage() + "; keeping " + core.narrowedWindowMicros()
                        + " us", null);
            }
        }
        Boolean onTop = read("onTop", "true or false", s::onTop);
        if (onTop != null && onTop != core.onTop()) {
            core.onTop(onTop);
        }
        Long spin = read("awaitSpinMicros", "a whole number of microseconds in [-1, 100000] (-1: automatic, 0: off)",
                s::awaitSpinMicros);
        if (spin != null && spin != core.awaitSpinMicros()) {
            try {
                core.awaitSpinMicros(spin);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: awaitSpinMicros: " + e.getMessage() + "; keeping " + core.awaitSpinMicros() + " us",
                        null);
            }
        }
        String policy = read("policy", "a policy name (xq:policies lists them)", s::policy);
        // Only a change of the configured value moves the selection, so that a selection made in
        // the shell survives unrelated configuration updates.
        if (policy != null && !policy.equals(configuredPolicy)) {
            configuredPolicy = policy;
            try {
                core.scheduler().select(policy, false);
            } catch (IllegalArgumentException e) {
                log.error("dev.xq.scheduler: " + e.getMessage(), null);
            }
        }
    }

    /** Reads one key of a configuration; null (and logged) when its value cannot be read as its type. */
    private <T> T read(String key, String allowed, java.util.function.Supplier<T> value) {
        String bad = badValues.get(key);
        if (bad != null) {
            // a value DS would read otherwise than written (a boolean 'yes' as false) or not at all
            log.error("dev.xq.scheduler: " + bad + "; allowed: " + allowed + "; ignored", null);
            return null;
        }
        try {
            return value.get();
        } catch (RuntimeException e) {
            log.error("dev.xq.scheduler: " + key + " has a value that is not " + allowed + " (" + e.getMessage() + "); ignored", null);
            return null;
        }
    }

    @Override
    public ExternalQueue open(ExternalQueueSpec spec, ExternalQueueControl control) {
        return core.open(spec, control);
    }

    void logError(String message) {
        log.error(message, null);
    }

    // ------------------------------------------------------------------ services found in the registry

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addDriver(XpuDriver driver) {
        core.addDriver(driver);
    }

    void removeDriver(XpuDriver driver) {
        core.removeDriver(driver);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addProvider(PreemptionProvider provider) {
        core.addProvider(provider);
    }

    void removeProvider(PreemptionProvider provider) {
        core.removeProvider(provider);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addPolicy(Policy policy, ServiceReference<Policy> ref) {
        Object name = ref.getProperty(Policy.NAME_PROPERTY);
        Bundle b = ref.getBundle();
        String bundle = b == null ? "?" : b.getSymbolicName() + " " + b.getVersion();
        Object bounded = ref.getProperty(Policy.BOUNDED_PROPERTY);
        core.scheduler().register(name == null ? null : name.toString(), policy, bundle, (Long) ref.getProperty(Constants.SERVICE_ID),
                bounded != null && Boolean.parseBoolean(bounded.toString().trim()));
    }

    void removePolicy(Policy policy, ServiceReference<Policy> ref) {
        core.scheduler().unregister((Long) ref.getProperty(Constants.SERVICE_ID));
    }

    // ------------------------------------------------------------------ XQueueService

    @Override
    public XQueue create(QueueOptions options) {
        return core.create(options);
    }

    @Override
    public List<XQueue> queues() {
        return core.queues();
    }

    @Override
    public Optional<XQueue> find(long handle) {
        return core.find(handle);
    }

    @Override
    public List<DeviceInfo> devices() {
        return core.devices();
    }

    @Override
    public List<DriverInfo> drivers() {
        return core.drivers();
    }

    @Override
    public QueueConfig defaults() {
        return core.defaults();
    }

    // ------------------------------------------------------------------ SchedulerControl

    @Override
    public String selectedPolicy() {
        return core.selectedPolicy();
    }

    @Override
    public String activePolicy() {
        return core.activePolicy();
    }

    @Override
    public void selectPolicy(String name) {
        core.selectPolicy(name);
    }

    @Override
    public List<PolicyInfo> policies() {
        return core.policies();
    }

    @Override
    public SchedulerStats stats() {
        return core.stats();
    }

    @Override
    public DecisionHistogram decisionHistogram() {
        return core.decisionHistogram();
    }

    @Override
    public void resetStats() {
        core.resetStats();
    }

    /** @return the core, for the components of this bundle */
    XqCore core() {
        return core;
    }
}
