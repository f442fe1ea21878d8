package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.SchedulerControl;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import dev.xq.runtime.log.RuntimeLog;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A policy name belongs to the bundle that registered it first: an impostor never decides under it. */
class PolicyNamesTest {

    private final List<String> errors = new CopyOnWriteArrayList<>();
    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final XqCore core = new XqCore(new RuntimeLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message) {
            warnings.add(message);
        }

        @Override
        public void error(String message, Throwable cause) {
            errors.add(message);
        }
    });

    static final class Counting implements Policy {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public String description() {
            return "counts its calls";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            calls.incrementAndGet();
        }
    }

    @AfterEach
    void stop() {
        core.stop();
    }

    @Test
    void aSecondBundleCannotTakeANameNorInheritIt() throws Exception {
        core.start();
        Counting real = new Counting();
        Counting impostor = new Counting();
        core.scheduler().register("hpf", real, "dev.xq.policy.fixedpriority 0.1.0", 1, true);
        core.scheduler().register("hpf", impostor, "evil.bundle 6.6.6", 2, true);
        assertTrue(errors.stream().anyMatch(e -> e.contains("'hpf' from evil.bundle 6.6.6 refused")
                && e.contains("dev.xq.policy.fixedpriority 0.1.0")), errors.toString());
        assertEquals(0, impostor.calls.get(), "not even its trial decisions ran");
        SchedulerControl.PolicyInfo hpf = core.policies().stream().filter(p -> p.name().equals("hpf")).findFirst().orElseThrow();
        assertEquals("dev.xq.policy.fixedpriority 0.1.0", hpf.bundle());
        core.scheduler().unregister(1);
        assertFalse(core.scheduler().names().contains("hpf"), "the impostor does not inherit the name: " + core.scheduler().names());
    }

    @Test
    void anotherVersionOfTheSameBundleMayOverlapDuringAnUpdate() {
        core.start();
        core.scheduler().register("edf", new Counting(), "dev.xq.policy.edf 0.1.0", 1, true);
        core.scheduler().register("edf", new Counting(), "dev.xq.policy.edf 0.2.0", 2, true);
        assertTrue(errors.isEmpty(), errors.toString());
        core.scheduler().unregister(1);
        assertTrue(core.scheduler().names().contains("edf"));
    }

    @Test
    void aNameThatCouldNeverBeTypedIsRefusedWithTheReason() {
        core.start();
        core.scheduler().register("my policy", new Counting(), "some.bundle 1.0.0", 7, false);
        assertFalse(core.policies().stream().anyMatch(p -> p.name().equals("my policy")));
        assertTrue(errors.stream().anyMatch(e -> e.contains("'my policy'") && e.contains("letters, digits")), errors.toString());
    }

    @Test
    void aPolicyWhoseTrialThrowsIsNotReportedSelectedAndAnErrorInATrialIsOneLine() throws Exception {
        core.start();
        Policy throwing = new Policy() {
            @Override
            public String description() {
                return "throws an Error in every decision";
            }

            @Override
            public void schedule(SchedulerView view, SchedulerActions actions) {
                throw new AssertionError("broken on purpose");
            }
        };
        java.io.ByteArrayOutputStream stderr = new java.io.ByteArrayOutputStream();
        java.io.PrintStream was = System.err;
        System.setErr(new java.io.PrintStream(stderr, true));
        try {
            core.scheduler().register("broken", throwing, "some.bundle 1.0.0", 8, false);
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> core.selectPolicy("broken"));
            assertTrue(e.getMessage().contains("'broken'") && e.getMessage().contains("broken on purpose")
                    && e.getMessage().contains("not selected"), e.getMessage());
        } finally {
            System.setErr(was);
        }
        assertEquals(SchedulerControl.NATIVE, core.scheduler().selected(), "the selection did not move");
        assertFalse(stderr.toString().contains("\tat "), "no raw stack trace: " + stderr);
        assertTrue(warnings.stream().anyMatch(w -> w.contains("'broken' failed a trial decision") && w.contains("AssertionError")),
                warnings.toString());
    }
}
