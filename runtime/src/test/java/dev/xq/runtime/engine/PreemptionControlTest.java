package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.Preemption;
import dev.xq.hal.spi.PreemptionProvider;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** One queue's preemption: which capability serves which level, the order of undo and apply, failures. */
class PreemptionControlTest {

    /** Records every call, in order, prefixed with its name; fails the calls named in {@code failing}. */
    static final class Recording implements Preemption {
        final String name;
        final PreemptionLevel level;
        final List<String> calls;
        final List<String> failing = new ArrayList<>();
        List<HwCommand> flush = List.of();

        Recording(String name, PreemptionLevel level, List<String> calls) {
            this.name = name;
            this.level = level;
            this.calls = calls;
        }

        private void call(String what) {
            calls.add(name + "." + what);
            if (failing.contains(what)) {
                throw new IllegalStateException(what + " refused (test)");
            }
        }

        @Override
        public PreemptionLevel level() {
            return level;
        }

        @Override
        public List<HwCommand> deactivate() {
            call("deactivate");
            return flush;
        }

        @Override
        public void reactivate() {
            call("reactivate");
        }

        @Override
        public void interrupt() {
            call("interrupt");
        }

        @Override
        public void restore() {
            call("restore");
        }

        @Override
        public void detach() {
            call("detach");
        }
    }

    private final List<String> calls = new ArrayList<>();
    private final List<String> owner = new ArrayList<>();

    private static HwQueue queue(Preemption own) {
        return new HwQueue() {
            @Override
            public String platform() {
                return "test";
            }

            @Override
            public String deviceId() {
                return "t0";
            }

            @Override
            public void check(Command command) {
            }

            @Override
            public void launch(HwCommand command) {
            }

            @Override
            public Optional<Preemption> preemption() {
                return Optional.ofNullable(own);
            }

            @Override
            public void close() {
            }
        };
    }

    private PreemptionControl control(Preemption own) {
        return new PreemptionControl(queue(own), new PreemptionControl.Owner() {
            @Override
            public void requeue(List<HwCommand> flushed) {
                owner.add("requeue " + flushed.size());
            }

            @Override
            public void broken(String what, RuntimeException cause) {
                owner.add("broken " + what);
            }
        }, RuntimeLog.NONE, "q");
    }

    private static PreemptionProvider provider(Preemption p) {
        return new PreemptionProvider() {
            @Override
            public String name() {
                return "prov";
            }

            @Override
            public String status() {
                return "";
            }

            @Override
            public Optional<Preemption> attach(HwQueue queue) {
                return Optional.ofNullable(p);
            }
        };
    }

    @Test
    void levelOneQueueDoesNothingOnSuspend() {
        PreemptionControl c = control(null);
        assertEquals(PreemptionLevel.BLOCK, c.available());
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        c.reconcile(false, PreemptionLevel.INTERRUPT);
        assertEquals(List.of(), calls);
    }

    @Test
    void suspendAppliesDeactivateThenInterruptAndResumeUndoesInReverse() {
        Recording own = new Recording("own", PreemptionLevel.INTERRUPT, calls);
        own.flush = List.of(new HwCommand(1, new Command.Spin(10, 1, 0)));
        PreemptionControl c = control(own);
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        c.reconcile(true, PreemptionLevel.INTERRUPT); // already there: nothing again
        c.reconcile(false, PreemptionLevel.INTERRUPT);
        assertEquals(List.of("own.deactivate", "own.interrupt", "own.restore", "own.reactivate"), calls);
        assertEquals(List.of("requeue 1"), owner);
    }

    @Test
    void configuredLevelLimitsWhatIsUsed() {
        Recording own = new Recording("own", PreemptionLevel.INTERRUPT, calls);
        PreemptionControl c = control(own);
        c.reconcile(true, PreemptionLevel.DEACTIVATE);
        c.reconcile(true, PreemptionLevel.INTERRUPT); // level raised while suspended: interrupt now
        c.reconcile(true, PreemptionLevel.DEACTIVATE); // lowered: restore, stay deactivated
        assertEquals(List.of("own.deactivate", "own.interrupt", "own.restore"), calls);
    }

    @Test
    void aProviderOfAHigherLevelServesItAndItsWithdrawalUndoesOnlyWhatItDid() {
        Recording own = new Recording("own", PreemptionLevel.DEACTIVATE, calls);
        Recording prov = new Recording("prov", PreemptionLevel.INTERRUPT, calls);
        PreemptionControl c = control(own);
        assertEquals(PreemptionLevel.DEACTIVATE, c.available());
        assertTrue(c.offer(provider(prov)));
        assertFalse(c.offer(provider(new Recording("second", PreemptionLevel.INTERRUPT, calls))), "the first provider is kept");
        assertEquals(PreemptionLevel.INTERRUPT, c.available());
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        assertEquals(List.of("prov.deactivate", "prov.interrupt"), calls);
        calls.clear();
        assertFalse(c.withdraw(provider(prov)), "withdraw by another provider object is ignored");
        assertEquals(List.of(), calls);
    }

    @Test
    void withdrawUndoesTheProvidersWorkAndDetaches() {
        Recording own = new Recording("own", PreemptionLevel.DEACTIVATE, calls);
        Recording prov = new Recording("prov", PreemptionLevel.INTERRUPT, calls);
        PreemptionControl c = control(own);
        PreemptionProvider p = provider(prov);
        c.offer(p);
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        calls.clear();
        assertTrue(c.withdraw(p));
        assertEquals(List.of("prov.restore", "prov.reactivate", "prov.detach"), calls);
        assertEquals(PreemptionLevel.DEACTIVATE, c.available());
        calls.clear();
        c.reconcile(true, PreemptionLevel.INTERRUPT); // the queue's own level 2 takes over
        assertEquals(List.of("own.deactivate"), calls);
    }

    @Test
    void aRefusedDeactivateStaysAtLevelOneAndNeverInterrupts() {
        Recording own = new Recording("own", PreemptionLevel.INTERRUPT, calls);
        own.failing.add("deactivate");
        PreemptionControl c = control(own);
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        assertEquals(List.of("own.deactivate"), calls);
        c.reconcile(false, PreemptionLevel.INTERRUPT);
        assertEquals(List.of("own.deactivate"), calls, "nothing to undo");
        assertEquals(List.of(), owner);
    }

    @Test
    void aFailedRestoreBreaksTheQueueAndStillReactivates() {
        Recording own = new Recording("own", PreemptionLevel.INTERRUPT, calls);
        own.failing.add("restore");
        PreemptionControl c = control(own);
        c.reconcile(true, PreemptionLevel.INTERRUPT);
        c.reconcile(false, PreemptionLevel.INTERRUPT);
        assertEquals(List.of("own.deactivate", "own.interrupt", "own.restore", "own.reactivate"), calls);
        assertEquals(List.of("broken restore"), owner);
    }
}
