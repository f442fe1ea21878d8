package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessesCommandTest {

    @TempDir
    Path tmp;

    @Test
    void listsSessionsAndTheStatus() throws Exception {
        XqCore core = new XqCore(RuntimeLog.NONE);
        core.start();
        Path sock = tmp.resolve("p").resolve("node.sock");
        HostServer server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        try {
            server.start();
            String empty = ProcessesCommand.run(server);
            assertTrue(empty.startsWith("process host: serving on " + sock), empty);
            assertTrue(empty.contains("PID") && empty.contains("NAME") && empty.contains("STREAMS") && empty.contains("SINCE")
                    && empty.contains("CMDLINE"), empty);
            try (TestClient c = TestClient.connect(sock)) {
                c.hello("lister", "3");
                c.map();
                for (int slot = 0; slot < 2; slot++) { // streams that had work (one that never had shows its configured limits)
                    c.writeSlotLong(slot, SharedMemory.S_COMPLETED, 3);
                    c.writeSlotLong(slot, SharedMemory.S_RUN_NS, 300_000);
                }
                long h = c.stream(0, 2, 0, 0, 0, "default");
                c.stream(1, 2, 0, 0, 0, "s1");
                String out = ProcessesCommand.run(server);
                String row = out.lines().filter(l -> l.startsWith(Long.toString(TestClient.PID))).findFirst().orElseThrow(() ->
                        new AssertionError("no row for this process: " + out));
                assertTrue(row.matches(TestClient.PID + " +lister +cuda +2 +- +0 +time +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +.*java.*"), row);
                String one = ProcessesCommand.run(server, Long.toString(TestClient.PID));
                assertTrue(one.contains("lister/default") && one.contains("cuda2") && one.contains(Long.toString(h)), one);
                assertTrue(one.lines().anyMatch(l -> l.matches("0 +" + h + " +lister/default +cuda2 +open +none +7f00deadbeef")), one);
                core.find(h).orElseThrow().suspend();
                String held = ProcessesCommand.run(server, Long.toString(TestClient.PID));
                assertTrue(held.lines().anyMatch(l -> l.matches("0 +" + h + " +lister/default +cuda2 +held +none +7f00deadbeef")), held);
                core.find(h).orElseThrow().hint(new dev.xq.api.Hint.Priority(5)); // now s1 differs: both contend
                String limited = ProcessesCommand.run(server, Long.toString(TestClient.PID));
                assertTrue(limited.lines().anyMatch(l -> l.matches("0 +" + h + " +lister/default +cuda2 +held +16/8/300us +7f00deadbeef")),
                        limited);
                var e = assertThrows(IllegalArgumentException.class, () -> ProcessesCommand.run(server, "1"));
                assertTrue(e.getMessage().contains("process 1 has no session") && e.getMessage().contains(Long.toString(TestClient.PID)),
                        e.getMessage());
            }
        } finally {
            server.stop();
            core.stop();
        }
        String stopped = ProcessesCommand.run(server);
        assertTrue(stopped.startsWith("process host: not serving: stopped"), stopped);
    }

    @Test
    void badArgumentsSayWhatIsAllowed() throws Exception {
        var e = assertThrows(IllegalArgumentException.class, () -> ProcessesCommand.run(null, "abc"));
        assertTrue(e.getMessage().contains("'abc' is not a process id") && e.getMessage().contains("usage: xq:processes [PID"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProcessesCommand.run(null, "1", "2"));
        assertTrue(e.getMessage().contains("at most one argument"), e.getMessage());
        String none = ProcessesCommand.run(null);
        assertTrue(none.contains("not serving"), none);
        e = assertThrows(IllegalArgumentException.class, () -> ProcessesCommand.run(null, "--wait", "0"));
        assertTrue(e.getMessage().contains("--wait 0 is out of range [1, 100000]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProcessesCommand.run(null, "--wait", "1", "--timeout"));
        assertTrue(e.getMessage().contains("wrong arguments"), e.getMessage());
    }

    @Test
    void waitGivesUpWithWhatItSaw() {
        var e = assertThrows(IllegalStateException.class, () -> ProcessesCommand.run(null, "--wait", "1", "--timeout", "50"));
        assertTrue(e.getMessage().contains("--wait 1: 0 processes served after 50 ms"), e.getMessage());
    }

    @Test
    void waitCountsRegisteredProcessesOnly() throws Exception {
        XqCore core = new XqCore(RuntimeLog.NONE);
        core.start();
        Path sock = tmp.resolve("w").resolve("node.sock");
        HostServer server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        try {
            server.start();
            try (TestClient c = TestClient.connect(sock)) {
                Await.until(() -> server.sessions().size() == 1, () -> "the connection has no session");
                // connected, no HELLO yet: not served, and shown without a runtime
                var e = assertThrows(IllegalStateException.class, () -> ProcessesCommand.run(server, "--wait", "1", "--timeout", "100"));
                assertTrue(e.getMessage().contains("0 processes served after 100 ms")
                        && e.getMessage().lines().anyMatch(l -> l.matches("\\d+ +- +- +0 +- .*")), e.getMessage());
                c.hello("late", "-", "hip");
                String out = ProcessesCommand.run(server, "--wait", "1", "--timeout", "5000");
                assertTrue(out.lines().anyMatch(l -> l.matches(TestClient.PID + " +late +hip +0 +- .*")), out);
            }
        } finally {
            server.stop();
            core.stop();
        }
    }
}
