package dev.xq.policy.fixedpriority;

import static dev.xq.policy.testkit.Views.queue;
import static dev.xq.policy.testkit.Views.view;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.policy.spi.SchedulerView;
import dev.xq.policy.testkit.PolicyChecks;
import dev.xq.policy.testkit.RecordingActions;
import dev.xq.policy.testkit.RecordingLogger;
import java.io.IOException;
import java.lang.annotation.Annotation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CpuHighestPriorityFirstTest {

    static final long MS = 1_000_000;

    record Config(long chpf_refresh) implements ChpfConfig {
        @Override
        public Class<? extends Annotation> annotationType() {
            return ChpfConfig.class;
        }
    }

    /** Values by pid; a pid without one is unreadable, as for a gone process. Counts reads. */
    static final class FakeProc implements ProcessPriorities {
        final Map<Integer, CpuPriority> values = new HashMap<>();
        final List<Integer> reads = new ArrayList<>();

        FakeProc set(int pid, int nice) {
            values.put(pid, new CpuPriority(nice, CpuPriority.SCHED_OTHER, 0));
            return this;
        }

        @Override
        public CpuPriority read(int pid) throws IOException {
            reads.add(pid);
            CpuPriority p = values.get(pid);
            if (p == null) {
                throw new NoSuchFileException("/proc/" + pid + "/stat");
            }
            return p;
        }
    }

    private final RecordingLogger log = new RecordingLogger();
    private final FakeProc proc = new FakeProc();
    // Refresh every 1 s (the default).
    private final CpuHighestPriorityFirst chpf = new CpuHighestPriorityFirst(ChpfSettings.DEFAULTS, proc, log.logger);

    private RecordingActions decide(SchedulerView view) {
        RecordingActions a = new RecordingActions();
        chpf.schedule(view, a);
        PolicyChecks.assertSafe(view, a);
        return a;
    }

    /** A stat line as Linux writes it, 52 fields, with the given command, nice, rt_priority and policy. */
    static String stat(int pid, String comm, int nice, int rtPriority, int policy) {
        StringBuilder b = new StringBuilder().append(pid).append(" (").append(comm).append(") S");
        for (int field = 4; field <= 52; field++) {
            long v = switch (field) {
                case 18 -> rtPriority > 0 ? -1 - rtPriority : 20 + nice; // priority as the kernel shows it
                case 19 -> nice;
                case 40 -> rtPriority;
                case 41 -> policy;
                default -> field * 1000L + 7;
            };
            b.append(' ').append(v);
        }
        return b.append('\n').toString();
    }

    @Test
    void processQueuesRankByMinusNiceAndTheirHintsAreIgnored() {
        proc.set(100, 5).set(200, -3).set(300, 19);
        RecordingActions a = decide(view(10 * MS,
                queue(1).group("100:train").priority(50).readySince(0).build(),
                queue(2).group("200:infer").readySince(0).build(),
                queue(3).group("300:batch").priority(1000).readySince(0).build(),
                queue(4).group("200:infer").device("d1").priority(-7).readySince(0).build(),
                queue(5).group("100:train").device("d1").readySince(0).build()));
        assertTrue(a.runs(2), "nice -3 ranks 3: the top");
        assertFalse(a.runs(1), "nice 5 ranks -5; its hint 50 does not count");
        assertFalse(a.runs(3), "nice 19 ranks -19, whatever its hint");
        assertTrue(a.runs(4), "on d1 too, the nice -3 process runs");
        assertFalse(a.runs(5));
        assertEquals(3, chpf.cachedRank(200));
        assertEquals(-19, chpf.cachedRank(300));
    }

    @Test
    void otherQueuesAndUnreadableProcessesUseTheirHints() {
        proc.set(100, -5);
        RecordingActions a = decide(view(10 * MS,
                queue(1).group("100:p").readySince(0).build(),           // rank 5
                queue(2).group("tenant-a").priority(6).readySince(0).build(),
                queue(3).group("4242:gone").priority(6).readySince(0).build(),
                queue(4).group("tenant-b").priority(5).readySince(0).build(),
                queue(5).group(":x").priority(4).build(),
                queue(6).group("12x:y").priority(6).build()));
        assertTrue(a.runs(2), "a host application's queue: its hint 6");
        assertTrue(a.runs(3), "process 4242 cannot be read: its hint 6");
        assertFalse(a.runs(1), "rank 5 < 6");
        assertFalse(a.runs(4));
        assertFalse(a.runs(5), "idle, hint 4 below the top");
        assertTrue(a.runs(6), "idle, hint 6: would run on arrival");
        assertEquals(List.of(100, 4242), proc.reads.stream().sorted().toList(), "only <pid>:... groups are read");
        assertNull(chpf.cachedRank(4242));
        assertTrue(log.all().contains("4242"), log.all());
    }

    @Test
    void groupsThatAreNoPidAreNotRead() {
        assertEquals(123, CpuHighestPriorityFirst.pidOf("123:python"));
        assertEquals(7, CpuHighestPriorityFirst.pidOf("7:a:b"));
        assertEquals(2147483647, CpuHighestPriorityFirst.pidOf("2147483647:x"));
        for (String g : new String[] {null, "", "g", ":x", "0:x", "-5:x", "+5:x", "12x:y", " 12:y", "2147483648:x", "99999999999:x", "123"}) {
            assertEquals(-1, CpuHighestPriorityFirst.pidOf(g), g);
        }
    }

    @Test
    void realTimeProcessesRankAboveEveryNiceValue() {
        assertEquals(20, new CpuPriority(-20, CpuPriority.SCHED_OTHER, 0).rank());
        assertEquals(-19, new CpuPriority(19, 3, 0).rank(), "SCHED_BATCH: by nice");
        assertEquals(1001, new CpuPriority(0, CpuPriority.SCHED_FIFO, 1).rank());
        assertEquals(1099, new CpuPriority(0, CpuPriority.SCHED_RR, 99).rank());
        assertEquals(1100, new CpuPriority(0, CpuPriority.SCHED_DEADLINE, 0).rank());
        assertEquals(-20, new CpuPriority(-20, CpuPriority.SCHED_IDLE, 0).rank(), "SCHED_IDLE: below nice 19");
        proc.set(100, -20);
        proc.values.put(200, new CpuPriority(10, CpuPriority.SCHED_FIFO, 1));
        proc.values.put(300, new CpuPriority(0, CpuPriority.SCHED_RR, 2));
        RecordingActions a = decide(view(10 * MS,
                queue(1).group("100:nice").readySince(0).build(),
                queue(2).group("200:fifo").readySince(0).build(),
                queue(3).group("300:rr").readySince(0).build(),
                queue(4).group("tenant").priority(1000).readySince(0).build()));
        assertTrue(a.runs(3), "rt_priority 2 is the highest");
        assertFalse(a.runs(2));
        assertFalse(a.runs(1), "nice -20 is below any real-time process");
        assertFalse(a.runs(4), "the highest hint too");
    }

    @Test
    void valuesAreKeptForTheRefreshPeriodThenReadAgain() {
        proc.set(100, 0).set(200, 1);
        SchedulerView v = view(10 * MS, queue(1).group("100:a").readySince(0).build(), queue(2).group("200:b").readySince(0).build(),
                queue(3).group("100:a").device("d1").build());
        RecordingActions first = decide(v);
        assertTrue(first.runs(1));
        assertFalse(first.runs(2));
        assertEquals(2, proc.reads.size(), "one read per process, not per queue");
        assertEquals(1_010 * MS, first.wake, "a timer when the first value expires, for renices");
        proc.set(200, -10); // renice
        for (long t : new long[] {10 * MS, 500 * MS, 1_009 * MS}) {
            RecordingActions a = decide(new SchedulerView(t, v.queues(), v.devices()));
            assertTrue(a.runs(1) && !a.runs(2), "the old values hold at " + t);
        }
        assertEquals(2, proc.reads.size(), "no read within the refresh period");
        RecordingActions after = decide(new SchedulerView(1_010 * MS, v.queues(), v.devices()));
        assertEquals(4, proc.reads.size());
        assertTrue(after.runs(2), "the renice is seen");
        assertFalse(after.runs(1));
        assertEquals(2_010 * MS, after.wake);
        chpf.modified(new Config(10_000), java.util.Map.of());
        decide(new SchedulerView(1_019 * MS, v.queues(), v.devices()));
        assertEquals(4, proc.reads.size());
        decide(new SchedulerView(1_020 * MS, v.queues(), v.devices()));
        assertEquals(6, proc.reads.size(), "a shorter refresh applies to values already read");
    }

    @Test
    void failedReadsAreKeptTooAndGoneProcessesForgotten() {
        decide(view(0, queue(1).group("100:a").readySince(0).build()));
        decide(view(500 * MS, queue(1).group("100:a").readySince(0).build()));
        assertEquals(1, proc.reads.size(), "an unreadable process is not read at every decision");
        assertNull(chpf.cachedRank(100));
        proc.set(100, -4);
        decide(view(1_000 * MS, queue(1).group("100:a").readySince(0).build()));
        assertEquals(4, chpf.cachedRank(100), "it is read again after the refresh period");
        assertNull(decide(view(1_001 * MS, queue(1).group("100:a").readySince(0).build())).wake, "one ready queue: no timer");
        decide(view(1_002 * MS, queue(2).group("tenant").readySince(0).build()));
        assertNull(chpf.cachedRank(100), "the process has no queue left: forgotten");
        decide(view(1_003 * MS, queue(1).group("100:a").readySince(0).build()));
        assertEquals(3, proc.reads.size(), "and read afresh when it comes back");
    }

    @Test
    void parsesTheStatFileWhateverTheCommandHolds() {
        assertEquals(new CpuPriority(5, 0, 0), CpuPriority.parse(stat(42, "python3", 5, 0, 0)));
        assertEquals(new CpuPriority(-20, 0, 0), CpuPriority.parse(stat(42, "a b) 7 8 (c", -20, 0, 0)),
                "spaces and parentheses in the command");
        assertEquals(new CpuPriority(19, 0, 0), CpuPriority.parse(stat(42, ")))", 19, 0, 0)));
        assertEquals(new CpuPriority(0, 0, 0), CpuPriority.parse(stat(42, "", 0, 0, 0)));
        assertEquals(new CpuPriority(0, 2, 50), CpuPriority.parse(stat(42, "rt worker", 0, 50, 2)));
        String full = stat(42, "old", 3, 0, 0);
        String old = full.substring(0, full.indexOf(" 38007"));
        assertEquals(new CpuPriority(3, 0, 0), CpuPriority.parse(old), "no fields 40 and 41 (old kernels): SCHED_OTHER");
        assertEquals("no ')' ends the command field",
                assertThrows(IllegalArgumentException.class, () -> CpuPriority.parse("42 (truncated")).getMessage());
        assertEquals("only 2 fields, no field 19", assertThrows(IllegalArgumentException.class, () -> CpuPriority.parse("42 (x)")).getMessage());
        assertEquals("only 18 fields, no field 19",
                assertThrows(IllegalArgumentException.class, () -> CpuPriority.parse("42 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")).getMessage());
        assertEquals("field 19 'x' is not an integer",
                assertThrows(IllegalArgumentException.class, () -> CpuPriority.parse(stat(42, "c", 0, 0, 0).replaceFirst(" 20 0 ", " 20 x "))).getMessage());
        assertEquals("nice 25 is out of range [-20, 19]", assertThrows(IllegalArgumentException.class, () -> new CpuPriority(25, 0, 0)).getMessage());
    }

    @Test
    void aBadStatFileMakesTheQueueUseItsHint() {
        CpuHighestPriorityFirst p = new CpuHighestPriorityFirst(ChpfSettings.DEFAULTS, pid -> CpuPriority.parse("garbage"), log.logger);
        RecordingActions a = new RecordingActions();
        SchedulerView v = view(0, queue(1).group("100:a").priority(3).readySince(0).build(), queue(2).group("t").priority(2).readySince(0).build());
        p.schedule(v, a);
        PolicyChecks.assertSafe(v, a);
        assertTrue(a.runs(1) && !a.runs(2));
        assertTrue(log.all().contains("no ')'"), log.all());
    }

    /** The default reader on the test JVM's own /proc/<pid>/stat, checked against ps. */
    @Test
    void readsTheRealProcFileOfThisJvm() throws Exception {
        long self = ProcessHandle.current().pid();
        CpuPriority mine = ProcessPriorities.PROC.read((int) self);
        assertEquals(Integer.parseInt(ps(self, "ni")), mine.nice(), "nice as ps shows it");
        String cls = ps(self, "cls");
        int policy = switch (cls) {
            case "TS" -> 0;
            case "FF" -> 1;
            case "RR" -> 2;
            case "B" -> 3;
            case "IDL" -> 5;
            case "DLN" -> 6;
            default -> throw new AssertionError("ps cls " + cls);
        };
        assertEquals(policy, mine.policy(), "policy as ps shows it (" + cls + ")");
        String rt = ps(self, "rtprio");
        assertEquals(rt.equals("-") ? 0 : Integer.parseInt(rt), mine.rtPriority(), "rt_priority as ps shows it");
        // The same file read independently: field 19 counted from the last ')'.
        String text = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.ISO_8859_1);
        String[] after = text.substring(text.lastIndexOf(')') + 2).split(" ");
        assertEquals(Integer.parseInt(after[16]), mine.nice());
    }

    /** A child started under {@code nice -n 7}: its value, and a decision on real files. */
    @Test
    void followsARealNicedProcess() throws Exception {
        int self = (int) ProcessHandle.current().pid();
        int mine = ProcessPriorities.PROC.read(self).nice();
        Process child = new ProcessBuilder("nice", "-n", "7", "sleep", "30").start();
        try {
            int pid = (int) child.pid();
            Path stat = Path.of("/proc", Integer.toString(pid), "stat");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // nice sets the value, then becomes sleep: wait for that.
            while (!Files.readString(stat, StandardCharsets.ISO_8859_1).contains("(sleep)")) {
                assertTrue(System.nanoTime() < deadline, "the child did not become sleep");
                Thread.sleep(5);
            }
            int expected = Math.min(19, mine + 7);
            assertEquals(expected, ProcessPriorities.PROC.read(pid).nice());
            assertEquals(expected, Integer.parseInt(ps(pid, "ni")));
            CpuHighestPriorityFirst real = new CpuHighestPriorityFirst();
            SchedulerView v = view(0, queue(1).group(self + ":jvm").readySince(0).build(), queue(2).group(pid + ":sleep").readySince(0).build());
            RecordingActions a = new RecordingActions();
            real.schedule(v, a);
            PolicyChecks.assertSafe(v, a);
            assertTrue(a.runs(1), "this JVM (nice " + mine + ") ranks at least as high as its niced child");
            assertEquals(expected == mine, a.runs(2), "the child (nice " + expected + ") runs only on a tie");
            assertEquals(-expected, real.cachedRank(pid));
        } finally {
            child.destroy();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String ps(long pid, String column) throws Exception {
        Process ps = new ProcessBuilder("ps", "-o", column + "=", "-p", Long.toString(pid)).redirectErrorStream(true).start();
        String out = new String(ps.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(ps.waitFor(10, TimeUnit.SECONDS), "ps did not end");
        assertEquals(0, ps.exitValue(), "ps -o " + column + "= -p " + pid + ": " + out);
        return out;
    }

    @Test
    void badConfigIsRejectedAndChangesNothing() {
        assertEquals("chpf.refresh 999 us is out of range [1000, 3600000000] us (shorter would read /proc at almost every decision)",
                assertThrows(IllegalArgumentException.class, () -> ChpfSettings.of(999)).getMessage());
        assertEquals("chpf.refresh -1 us is out of range [1000, 3600000000] us (shorter would read /proc at almost every decision)",
                assertThrows(IllegalArgumentException.class, () -> ChpfSettings.of(-1)).getMessage());
        assertEquals("chpf.refresh 3600000001 us is out of range [1000, 3600000000] us (shorter would read /proc at almost every decision)",
                assertThrows(IllegalArgumentException.class, () -> ChpfSettings.of(3_600_000_001L)).getMessage());
        ChpfSettings before = chpf.settings();
        chpf.modified(new Config(0), java.util.Map.of());
        assertSame(before, chpf.settings());
        assertTrue(log.lines.getLast().startsWith("error") && log.all().contains("chpf.refresh 0 us"), log.all());
        chpf.modified(new Config(250_000), java.util.Map.of());
        assertEquals(250 * MS, chpf.settings().refreshNanos());
        assertThrows(IllegalArgumentException.class, () -> new CpuHighestPriorityFirst(ChpfSettings.DEFAULTS, proc, log.logger).activate(new Config(5), java.util.Map.of()));
        assertEquals(ChpfSettings.DEFAULTS, new CpuHighestPriorityFirst().settings());
        assertEquals(1_000 * MS, ChpfSettings.DEFAULTS.refreshNanos(), "1 s by default");
    }
}
