package dev.xq.hal.kfd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link KfdDevice}'s FFM path against the LD_PRELOAD fake driver. */
class KfdDeviceFakeKfdTest {

    private FakeKfd fake;
    private KfdDevice dev;

    @BeforeEach
    void open() {
        assertTrue(FakeKfd.preloaded(), "run with LD_PRELOAD=target/fakekfd/libfakekfd.so");
        fake = new FakeKfd();
        dev = KfdDevice.open("/dev/kfd");
    }

    @AfterEach
    void close() {
        dev.close();
        fake.close();
    }

    /** The HIP runtime's part: RUNTIME_ENABLE, then queues appear. */
    private int[] hipWithQueues(int n) {
        dev.runtimeEnable(0, 0);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = fake.createQueue(7);
        }
        return ids;
    }

    @Test
    void versionAndProbe() {
        assertEquals(new KfdDevice.Version(1, 17), dev.version());
        assertTrue(dev.hasDebuggerApi());
        assertEquals(KfdPath.DEBUGGER, dev.probe());
    }

    @Test
    void runtimeEnableTwiceIsEbusy() {
        dev.runtimeEnable(0, 0);
        KfdException e = assertThrows(KfdException.class, () -> dev.runtimeEnable(0, 0));
        assertEquals("EBUSY", e.errnoName());
        assertTrue(e.getMessage().contains("AMDKFD_IOC_RUNTIME_ENABLE"), e.getMessage());
    }

    @Test
    void snapshotListsQueuesAndClearsQueueNew() {
        int[] ids = hipWithQueues(3);
        dev.enableDebugTrap();
        List<QueueSnapshot> first = dev.snapshot(0);
        assertEquals(3, first.size());
        assertEquals(ids[0], first.get(0).queueId());
        assertEquals(7, first.get(0).gpuId());
        assertTrue(first.get(0).computeAql());
        assertTrue(first.stream().allMatch(QueueSnapshot::isNew));
        assertTrue(first.get(0).writePointerAddress() != 0);
        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        assertTrue(dev.snapshot(0).stream().noneMatch(QueueSnapshot::isNew));
    }

    @Test
    void newQueueRefusesSuspensionWithInvalidBitAndKeepsRunning() {
        int[] ids = hipWithQueues(1);
        dev.enableDebugTrap();
        KfdDevice.QueueResult r = dev.suspend(ids, 1);
        assertEquals(0, r.count());
        assertEquals(QueueStatus.INVALID, r.statusOf(ids[0]));
        assertFalse(fake.suspended(ids[0]));
    }

    @Test
    void suspendResumeRoundTripWithStatusBits() {
        int[] ids = hipWithQueues(2);
        dev.enableDebugTrap();
        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        fake.hwError(ids[1], true);
        int missing = 999;
        KfdDevice.QueueResult r = dev.suspend(new int[] {ids[0], ids[1], missing}, 10);
        assertEquals(1, r.count());
        assertEquals(QueueStatus.DONE, r.statusOf(ids[0]));
        assertEquals(QueueStatus.HW_ERROR, r.statusOf(ids[1]));
        assertEquals(QueueStatus.INVALID, r.statusOf(missing));
        assertTrue(fake.suspended(ids[0]));
        assertFalse(fake.suspended(ids[1]));
        assertEquals(1, fake.suspends(ids[0]));

        KfdDevice.QueueResult back = dev.resume(new int[] {ids[0], ids[1]});
        assertEquals(1, back.count());
        assertEquals(QueueStatus.DONE, back.statusOf(ids[0]));
        assertEquals(QueueStatus.INVALID, back.statusOf(ids[1]), "was not suspended");
        assertFalse(fake.suspended(ids[0]));
        assertEquals(1, fake.resumes(ids[0]));
    }

    @Test
    void closeDisablesTheTrapWhichResumesEverything() {
        int[] ids = hipWithQueues(1);
        dev.enableDebugTrap();
        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        dev.suspend(ids, 1);
        assertTrue(fake.suspended(ids[0]));
        dev.close();
        assertFalse(fake.suspended(ids[0]));
        dev = KfdDevice.open("/dev/kfd");
    }

    @Test
    void suspendBeforeRuntimeEnableIsEpermAndLeavesQueueRunning() {
        int id = fake.createQueue(7);
        dev.enableDebugTrap();
        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        KfdException e = assertThrows(KfdException.class, () -> dev.suspend(new int[] {id}, 1));
        assertEquals("EPERM", e.errnoName());
        assertTrue(e.getMessage().contains("AMDKFD_IOC_DBG_TRAP(SUSPEND_QUEUES)"), e.getMessage());
        assertTrue(e.getMessage().contains("RUNTIME_ENABLE"), e.getMessage());
        assertFalse(fake.suspended(id));
    }

    @Test
    void opBeforeEnableIsRefusedLocally() {
        int[] ids = hipWithQueues(1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> dev.suspend(ids, 1));
        assertTrue(e.getMessage().contains("enableDebugTrap"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"EPERM", "EINVAL", "EBUSY", "ETIME", "ENOMEM", "EFAULT"})
    void injectedSuspendErrorMapsToExceptionAndLeavesQueueRunning(String errno) {
        int[] ids = hipWithQueues(1);
        dev.enableDebugTrap();
        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        fake.inject(FakeKfd.SUSPEND, errno);
        KfdException e = assertThrows(KfdException.class, () -> dev.suspend(ids, 1));
        assertEquals(errno, e.errnoName());
        assertTrue(e.getMessage().startsWith("AMDKFD_IOC_DBG_TRAP(SUSPEND_QUEUES) failed: " + errno + " ("),
                e.getMessage());
        assertFalse(fake.suspended(ids[0]));
        assertEquals(0, fake.suspends(ids[0]));
    }

    @Test
    void injectedErrorsOnOtherCallsNameTheirIoctl() {
        int[] ids = hipWithQueues(1);
        fake.inject(FakeKfd.ENABLE, "ENODEV");
        KfdException e = assertThrows(KfdException.class, dev::enableDebugTrap);
        assertEquals("ENODEV", e.errnoName());
        assertTrue(e.getMessage().contains("DBG_TRAP(ENABLE)") && e.getMessage().contains("SOC15"), e.getMessage());
        fake.inject(FakeKfd.ENABLE, null);
        dev.enableDebugTrap();

        fake.inject(FakeKfd.SNAPSHOT, "EFAULT");
        e = assertThrows(KfdException.class, () -> dev.snapshot(0));
        assertTrue(e.getMessage().contains("GET_QUEUE_SNAPSHOT") && e.getMessage().contains("EFAULT"), e.getMessage());
        fake.inject(FakeKfd.SNAPSHOT, null);

        dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK);
        dev.suspend(ids, 1);
        fake.inject(FakeKfd.RESUME, "EBUSY");
        e = assertThrows(KfdException.class, () -> dev.resume(ids));
        assertTrue(e.getMessage().contains("RESUME_QUEUES") && e.getMessage().contains("EBUSY"), e.getMessage());
        assertTrue(fake.suspended(ids[0]), "a failed resume changes nothing");
        fake.inject(FakeKfd.RESUME, null);
        dev.resume(ids);
        assertFalse(fake.suspended(ids[0]));
    }

    @Test
    void badInputsAreRefusedBeforeAnyIoctl() {
        hipWithQueues(1);
        dev.enableDebugTrap();
        assertThrows(IllegalArgumentException.class, () -> dev.suspend(new int[0], 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> dev.suspend(new int[] {0x80000001}, 1));
        assertTrue(e.getMessage().contains("0x80000001"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> dev.suspend(new int[] {1}, -1));
    }

    @Test
    void pendingPacketsReadsTheRingIndices() {
        int[] ids = hipWithQueues(1);
        dev.enableDebugTrap();
        QueueSnapshot q = dev.snapshot(KfdAbi.EC_QUEUE_NEW_MASK).get(0);
        assertEquals(0, KfdDevice.pendingPackets(q));
        fake.submit(ids[0], 5);
        assertEquals(5, KfdDevice.pendingPackets(q));
        fake.consume(ids[0], 3);
        assertEquals(2, KfdDevice.pendingPackets(q));
    }

    @Test
    void probeFallsBackToPatchedIoctlsOnlyWhenTheyAnswerSomethingButEinval() {
        fake.inject(FakeKfd.ENABLE, "ENODEV");
        assertEquals(KfdPath.NONE, dev.probe(), "stock kernel: unknown ioctl answers EINVAL");
        fake.inject(6, "ENOENT");
        assertEquals(KfdPath.PATCHED, dev.probe(), "ENOENT for queue 0xffffffff means the ioctl exists");
    }
}
