package dev.xq.hal.kfd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.Preemption;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The {@code kfd} provider end to end against the LD_PRELOAD fake driver, with HIP-like queues. */
class KfdProviderFakeKfdTest {

    private FakeKfd fake;
    private KfdDevice hip;
    private KfdProvider provider;

    @BeforeEach
    void start() {
        assertTrue(FakeKfd.preloaded(), "run with LD_PRELOAD=target/fakekfd/libfakekfd.so");
        fake = new FakeKfd();
        // The HIP runtime's own descriptor and RUNTIME_ENABLE, done at its initialisation.
        hip = KfdDevice.open("/dev/kfd");
        hip.runtimeEnable(0, 0);
        provider = new KfdProvider();
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "auto"), java.util.Map.of());
    }

    @AfterEach
    void stop() {
        provider.deactivate();
        hip.close();
        fake.close();
    }

    private Preemption attachNewStream(long stream) {
        fake.createQueue(3);
        return provider.attach(TestQueues.queue("hip", stream)).orElseThrow();
    }

    @Test
    void statusBeforeAndAfterAttach() {
        assertTrue(provider.status().startsWith("KFD 1.17 at /dev/kfd, path not probed yet"), provider.status());
        attachNewStream(0x7000L);
        assertTrue(provider.status().contains("debugger API (CWSR), 1 queue raised"), provider.status());
    }

    @Test
    void interruptSuspendsAndRestoreResumes() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        assertEquals(PreemptionLevel.INTERRUPT, p.level());
        assertFalse(fake.suspended(id));
        p.interrupt();
        assertTrue(fake.suspended(id));
        p.restore();
        assertFalse(fake.suspended(id));
        assertEquals(1, fake.suspends(id));
        assertEquals(1, fake.resumes(id));
    }

    @Test
    void deactivateAndInterruptShareOneSuspension() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        assertTrue(p.deactivate().isEmpty(), "stalled in place");
        p.interrupt();
        assertTrue(fake.suspended(id));
        p.restore();
        assertTrue(fake.suspended(id), "still deactivated");
        p.reactivate();
        assertFalse(fake.suspended(id));
        assertEquals(1, fake.suspends(id));
    }

    @Test
    void detachResumesWhatIsStillSuspended() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        p.interrupt();
        p.detach();
        assertFalse(fake.suspended(id));
        assertTrue(provider.status().contains("0 queues raised"), provider.status());
    }

    @Test
    void providerShutdownResumesEverything() {
        int a = fake.createQueue(3);
        Preemption pa = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        int b = fake.createQueue(3);
        Preemption pb = provider.attach(TestQueues.queue("hip", 0x7100L)).orElseThrow();
        pa.interrupt();
        pb.deactivate();
        assertTrue(fake.suspended(a) && fake.suspended(b));
        provider.deactivate();
        assertFalse(fake.suspended(a));
        assertFalse(fake.suspended(b));
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "auto"), java.util.Map.of());
    }

    @Test
    void failingSuspendThrowsNamingErrnoAndLeavesQueueRunning() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        fake.inject(FakeKfd.SUSPEND, "EBUSY");
        KfdException e = assertThrows(KfdException.class, p::interrupt);
        assertEquals("EBUSY", e.errnoName());
        assertFalse(fake.suspended(id));
        fake.inject(FakeKfd.SUSPEND, null);
        p.restore(); // nothing to undo: must not resume a queue it never suspended
        assertEquals(0, fake.resumes(id));
        p.interrupt();
        assertTrue(fake.suspended(id), "works again once the driver does");
        p.restore();
    }

    @Test
    void hardwareErrorBitThrowsAndLeavesQueueRunning() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        fake.hwError(id, true);
        KfdException e = assertThrows(KfdException.class, p::interrupt);
        assertTrue(e.getMessage().contains("keeps running") && e.getMessage().contains("0x40000000"), e.getMessage());
        assertFalse(fake.suspended(id));
    }

    @Test
    void onlyHipQueuesWithAStreamHandleAttach() {
        fake.createQueue(3);
        assertTrue(provider.attach(TestQueues.queue("cuda", 0x7000L)).isEmpty());
        assertTrue(provider.attach(TestQueues.queue("hip", null)).isEmpty());
        assertTrue(provider.attach(TestQueues.queue("hip", "0x7000")).isEmpty());
    }

    @Test
    void ambiguousOrSharedQueuesAreNotRaised() {
        fake.createQueue(3);
        fake.createQueue(3);
        assertTrue(provider.attach(TestQueues.queue("hip", 0x7000L)).isEmpty(), "two new queues: which one?");
        assertTrue(provider.attach(TestQueues.queue("hip", 0x7100L)).isEmpty(), "no new queue: shared");
        assertTrue(provider.status().contains("2 HIP queue(s) left at their own level"), provider.status());
        Optional<Preemption> third = Optional.of(attachNewStream(0x7200L));
        assertTrue(third.isPresent());
    }

    @Test
    void suspendBeforeHipEnabledTheRuntimeIsEperm() {
        hip.close();
        fake.close();
        fake = new FakeKfd(); // resets: no RUNTIME_ENABLE this time
        hip = KfdDevice.open("/dev/kfd");
        provider.deactivate();
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "cwsr"), java.util.Map.of());
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        KfdException e = assertThrows(KfdException.class, p::interrupt);
        assertEquals("EPERM", e.errnoName());
        assertFalse(fake.suspended(id));
    }

    @Test
    void preemptModeWithoutPatchedDriverAttachesNothing() {
        provider.deactivate();
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "preempt"), java.util.Map.of());
        fake.createQueue(3);
        assertTrue(provider.attach(TestQueues.queue("hip", 0x7000L)).isEmpty());
        assertTrue(provider.status().contains("mode preempt but the patched preempt ioctls are not available"),
                provider.status());
    }

    @Test
    void logicalModeNeverSuspendsButReportsPendingWork() {
        provider.deactivate();
        provider.activate(TestQueues.config("/dev/kfd", 100, 0, "logical"), java.util.Map.of());
        int id = fake.createQueue(3);
        assertTrue(provider.attach(TestQueues.queue("hip", 0x7000L)).isEmpty());
        assertTrue(provider.status().contains("logical mode"), provider.status());
        assertEquals(0, provider.pendingWork(id));
        fake.submit(id, 7);
        fake.consume(id, 2);
        assertEquals(5, provider.pendingWork(id));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> provider.pendingWork(4242));
        assertTrue(e.getMessage().contains("4242"), e.getMessage());
    }

    @Test
    void suspendedQueueTakesNoPacketsUntilResumed() {
        int id = fake.createQueue(3);
        Preemption p = provider.attach(TestQueues.queue("hip", 0x7000L)).orElseThrow();
        fake.submit(id, 4);
        p.interrupt();
        assertThrows(IllegalStateException.class, () -> fake.consume(id, 1));
        assertEquals(4, provider.pendingWork(id));
        p.restore();
        fake.consume(id, 4);
        assertEquals(0, provider.pendingWork(id));
    }
}
