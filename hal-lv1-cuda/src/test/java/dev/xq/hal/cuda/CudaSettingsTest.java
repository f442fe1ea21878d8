package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CudaSettingsTest {

    @Test
    void modulesParseAsNameEqualsPath() {
        Map<String, Path> m = CudaSettings.parseModules(new String[] {"gemm=/opt/k/gemm.ptx", " conv = /opt/k/conv.cubin ", ""});
        assertEquals(Map.of("gemm", Path.of("/opt/k/gemm.ptx"), "conv", Path.of("/opt/k/conv.cubin")), m);
    }

    @Test
    void badModuleEntriesAreRefusedNamingTheEntry() {
        for (String bad : new String[] {"gemm", "=x.ptx", "gemm=", " = "}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> CudaSettings.parseModules(new String[] {bad}));
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
        }
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> CudaSettings.parseModules(new String[] {"a=1.ptx", "a=2.ptx"}));
        assertTrue(twice.getMessage().contains("'a' is given twice"));
    }

    @Test
    void spinIsReserved() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSettings.defaults().withModules(Map.of("spin", Path.of("x.ptx"))));
        assertTrue(e.getMessage().contains("'spin' is reserved"));
    }

    @Test
    void completionModesParse() {
        for (CompletionMode m : CompletionMode.values()) {
            assertEquals(m, CompletionMode.parse(m.label()));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CompletionMode.parse("irq"));
        assertTrue(e.getMessage().contains("'irq'") && e.getMessage().contains("allowed: poll"));
    }

    @Test
    void numbersOutOfRangeAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaSettings.defaults().withPolling(-1, 200, 1000));
        assertTrue(e.getMessage().contains("pollEarlyMicros -1 is out of range [0, 100000]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaSettings.defaults().withPolling(10, 0, 1000));
        assertThrows(IllegalArgumentException.class, () -> CudaSettings.defaults().withPolling(10, 10, 60_000));
        assertThrows(IllegalArgumentException.class, () -> CudaSettings.defaults().withLibrary(" "));
    }

    @Test
    void startEventsAreChainedOrEvery() {
        assertEquals(false, CudaSettings.parseStartEvents("chained"));
        assertEquals(true, CudaSettings.parseStartEvents(" every "));
        assertEquals(false, CudaSettings.defaults().everyStartEvent(), "chained is the default");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSettings.parseStartEvents("some"));
        assertTrue(e.getMessage().contains("startEvents 'some' is not one of chained, every"), e.getMessage());
        assertEquals(Boolean.TRUE, CudaSettings.parseTiming("device"));
        assertEquals(Boolean.FALSE, CudaSettings.parseTiming("seen"));
        assertEquals(null, CudaSettings.parseTiming("auto"));
        assertEquals(false, CudaSettings.defaults().deviceEndTimes(), "auto under poll: seen");
        for (CompletionMode m : List.of(CompletionMode.SYNC_SPIN, CompletionMode.SYNC_BLOCK, CompletionMode.HOST_FUNC)) {
            assertEquals(true, CudaSettings.defaults().withCompletion(m).deviceEndTimes(), "auto under " + m.label() + ": device");
        }
        assertEquals(true, CudaSettings.defaults().withTiming(true).deviceEndTimes());
        IllegalArgumentException t = assertThrows(IllegalArgumentException.class, () -> CudaSettings.parseTiming("host"));
        assertTrue(t.getMessage().contains("timing 'host' is not one of auto, device, seen"), t.getMessage());
    }

    @Test
    void pollWaitParsesAndItsAutomaticRuleCountsHardwareThreads() {
        assertEquals(Boolean.TRUE, CudaSettings.parsePollWait(" spin "));
        assertEquals(Boolean.FALSE, CudaSettings.parsePollWait("park"));
        assertEquals(null, CudaSettings.parsePollWait("auto"));
        assertEquals(null, CudaSettings.defaults().pollSpinChoice(), "auto is the default");
        assertEquals(false, CudaSettings.defaults().pollSpins(2), "auto on a 2-thread host: park");
        assertEquals(false, CudaSettings.defaults().pollSpins(7));
        assertEquals(true, CudaSettings.defaults().pollSpins(8), "auto on an 8-thread host: spin");
        assertEquals(true, CudaSettings.defaults().withPollWait(true).pollSpins(2), "spin is spin on any host");
        assertEquals(false, CudaSettings.defaults().withPollWait(false).pollSpins(64), "park is park on any host");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSettings.parsePollWait("sleep"));
        assertTrue(e.getMessage().contains("pollWait 'sleep' is not one of auto, spin, park"), e.getMessage());
        assertEquals(5_000, CudaSettings.defaults().pollSpinMicros());
        IllegalArgumentException r = assertThrows(IllegalArgumentException.class, () -> CudaSettings.defaults().withPollSpinMicros(0));
        assertTrue(r.getMessage().contains("pollSpinMicros 0 is out of range [1, 1000000]"), r.getMessage());
    }
    @Test
    void stallFlagsAreHostByDefaultOrDeviceAndNothingElse() {
        assertTrue(CudaSettings.defaults().hostFlags());
        assertTrue(CudaSettings.parseStallFlags(" host "));
        assertEquals(false, CudaSettings.parseStallFlags("device"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CudaSettings.parseStallFlags("gpu"));
        assertTrue(e.getMessage().contains("stallFlags 'gpu' is not one of host, device"), e.getMessage());
    }
}
