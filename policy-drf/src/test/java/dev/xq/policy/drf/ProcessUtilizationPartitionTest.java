package dev.xq.policy.drf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.policy.spi.DeviceView;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RandomViews;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import dev.xq.policy.testkit.Simulation;
import dev.xq.policy.testkit.Views;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** {@code pup} is {@code bandwidth-group} under XSched's name: same decisions, same knobs. */
class ProcessUtilizationPartitionTest {

    static final long MS = 1_000_000;

    private final RecordingLogger log = new RecordingLogger();

    private ProcessUtilizationPartition pup(BandwidthSettings s) {
        return new ProcessUtilizationPartition(new GroupBandwidthPartition(s, log.logger));
    }

    private static RecordingActions decide(Policy p, SchedulerView view) {
        RecordingActions a = new RecordingActions();
        p.schedule(view, a);
        return a;
    }

    @Provide
    Arbitrary<SchedulerView> views() {
        return RandomViews.views();
    }

    @Provide
    Arbitrary<BandwidthSettings> bandwidthSettings() {
        return Arbitraries.longs().between(100, 100_000).flatMap(t ->
                Arbitraries.integers().between(1, 100).map(u -> BandwidthSettings.of(t, u)));
    }

    @Property(tries = 300)
    void decidesExactlyAsBandwidthGroup(@ForAll("views") SchedulerView view, @ForAll("bandwidthSettings") BandwidthSettings s) {
        RecordingActions byPup = decide(pup(s), view);
        PolicyChecks.assertSafe(view, byPup);
        RecordingActions byGroup = decide(new GroupBandwidthPartition(s, log.logger), view);
        assertEquals(byGroup.log, byPup.log, "same view and settings, same actions (suspends, resumes, timer)");
    }

    @Test
    void aProcessGetsItsUtilizationWhateverNumberOfQueuesItOpens() {
        // Process 100 opens four streams, process 200 one; 50/50 by utilization hint, not 4:1 by queue count.
        Simulation sim = new Simulation(0, new DeviceView("d0", "sim", 1, Views.GB));
        for (long h = 1; h <= 4; h++) {
            sim.add(h, "d0", "100:many", new Hint.Utilization(50));
            sim.ready(h);
        }
        sim.add(5, "d0", "200:one", new Hint.Utilization(50));
        sim.ready(5);
        Policy p = pup(BandwidthSettings.DEFAULTS);
        sim.decide(p);
        sim.run(p, 2_000 * MS, 500_000);
        long many = 0;
        for (long h = 1; h <= 4; h++) {
            many += sim.queue(h).runNanos;
        }
        long one = sim.queue(5).runNanos;
        assertEquals(0.5, (double) one / (many + one), 0.02, "process 200's share: " + one + " of " + (many + one) + " ns");
    }

    @Test
    void badConfigIsRefusedWithItsValueAndTheRangeAndTheRunningValuesStay() {
        ProcessUtilizationPartition p = pup(BandwidthSettings.DEFAULTS);
        p.modified(new BandwidthTest.Config(50, 100), java.util.Map.of());
        assertSame(BandwidthSettings.DEFAULTS, p.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("bandwidth.timeslice 50 us is out of range [100, 10000000] us"),
                log.all());
        p.modified(new BandwidthTest.Config(2_000, 40), java.util.Map.of());
        assertEquals(BandwidthSettings.of(2_000, 40), p.settings());
    }

    @Test
    void aBadConfigAtActivationFailsItNamingTheValue() throws Exception {
        ProcessUtilizationPartition p = new ProcessUtilizationPartition();
        var f = ProcessUtilizationPartition.class.getDeclaredField("log");
        f.setAccessible(true);
        f.set(p, log.logger);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.activate(new BandwidthTest.Config(5_000, 0), java.util.Map.of()));
        assertEquals("bandwidth.default.utilization 0% is out of range [1, 100]%", e.getMessage());
        p.activate(new BandwidthTest.Config(3_000, 30), java.util.Map.of());
        assertEquals(BandwidthSettings.of(3_000, 30), p.settings());
    }

    /** The component bnd generated: named pup, configured through bandwidth-group's PID, bounded. */
    @Test
    void theComponentIsNamedPupAndReadsBandwidthGroupsConfiguration() throws IOException {
        String xml;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("OSGI-INF/dev.xq.policy.drf.ProcessUtilizationPartition.xml")) {
            assertNotNull(in, "bnd writes the component description into target/classes before the tests run");
            xml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(xml.contains("configuration-pid=\"" + GroupBandwidthPartition.PID + "\""), xml);
        assertTrue(xml.matches("(?s).*name=\"" + Policy.NAME_PROPERTY.replace(".", "\\.") + "\"[^>]*value=\"pup\".*"), xml);
        assertTrue(xml.contains("name=\"" + Policy.BOUNDED_PROPERTY + "\""), xml);
    }

    @Test
    void itsDescriptionSaysItIsBandwidthGroup() {
        String d = pup(BandwidthSettings.DEFAULTS).description();
        assertTrue(d.contains("bandwidth-group") && d.contains(GroupBandwidthPartition.PID), d);
    }
}
