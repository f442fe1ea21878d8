package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.engine.ExternalQueueImpl;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Space and time (docs/processes.md): the host runs an MPS control daemon (here a script that
 * behaves like {@code nvidia-cuda-mps-control} on its pipe directory), answers SPACE with the
 * share a priority gets, and opens the queues of MPS clients so that the scheduler neither holds
 * nor throttles one that has the whole device.
 */
class SpaceTest {

    @TempDir
    Path tmp;

    XqCore core;
    HostServer server;
    Path sock;
    Path control;
    Path device;
    final List<TestClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        core = new XqCore(RuntimeLog.NONE);
        // not started: these tests tell the queues what the scheduler would and read what they do; a
        // running scheduler (its native decisions) would race them (a hold undone between two asserts)
        sock = tmp.resolve("x").resolve("node.sock");
        device = Files.createFile(tmp.resolve("nvidiactl"));
        control = tmp.resolve("nvidia-cuda-mps-control");
        // -d starts a "daemon" (its control pipe appears); a command comes on stdin; every call is logged beside
        Files.writeString(control, """
                #!/bin/sh
                log="$CUDA_MPS_PIPE_DIRECTORY/../mps-calls.log"
                if [ "$1" = "-d" ]; then echo "start $CUDA_MPS_LOG_DIRECTORY" >> "$log"; : > "$CUDA_MPS_PIPE_DIRECTORY/control"; exit 0; fi
                read cmd; echo "$cmd" >> "$log"
                case "$cmd" in
                  get_server_list) [ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] ;;
                  quit) rm -f "$CUDA_MPS_PIPE_DIRECTORY/control" ;;
                esac
                """);
        Files.setPosixFilePermissions(control, PosixFilePermissions.fromString("rwx------"));
    }

    @AfterEach
    void tearDown() throws IOException {
        for (TestClient c : clients) {
            c.close();
        }
        if (server != null) {
            server.stop();
        }
        core.stop();
    }

    HostServer start(MpsDaemon.Mode mode, Path dev, boolean holdBestEffort) {
        return start(mode, dev, holdBestEffort, 0);
    }

    HostServer start(MpsDaemon.Mode mode, Path dev, boolean holdBestEffort, long holdBehindMicros) {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(mode, control.toString(), dev, 2, 40, holdBestEffort, holdBehindMicros));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        return server;
    }

    TestClient client() throws IOException {
        TestClient c = TestClient.connect(sock);
        clients.add(c);
        return c;
    }

    String ask(String priority) throws Exception {
        TestClient c = client();
        c.send("SPACE 1 " + TestClient.PID + " app " + priority);
        String answer = c.readLine();
        c.awaitEof(Await.LIMIT); // one question, one answer
        return answer;
    }

    List<String> calls() throws IOException {
        Path log = sock.getParent().resolve("mps-calls.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    @Test
    void theDaemonStartsInADirectoryOfTheNodesAndQuitsWithIt() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        Path pipe = sock.getParent().resolve("mps");
        assertTrue(server.space().on(), server.space().state());
        assertTrue(server.space().state().startsWith("on: daemon started, pipe " + pipe), server.space().state());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(pipe)));
        assertEquals(List.of("start " + sock.getParent().resolve("mps-log"), "get_server_list"), calls(),
                "started a daemon (no control pipe was there), checked that it answers");
        server.stop();
        assertTrue(calls().contains("quit"), "no quit at stop: " + calls());
        assertFalse(server.space().on());
        server = null;
    }

    @Test
    void aDaemonAnEarlierNodeLeftIsTakenOver() throws Exception {
        Path pipe = Files.createDirectories(sock.getParent().resolve("mps"));
        Files.setPosixFilePermissions(sock.getParent(), PosixFilePermissions.fromString("rwx------"));
        Files.setPosixFilePermissions(pipe, PosixFilePermissions.fromString("rwx------"));
        Files.createFile(pipe.resolve("control"));
        start(MpsDaemon.Mode.AUTO, device, true);
        assertTrue(server.space().state().startsWith("on: took over"), server.space().state());
        assertFalse(calls().stream().anyMatch(l -> l.startsWith("start")), "started a second daemon: " + calls());
    }

    @Test
    void spaceAnswersTheShareOfThePriority() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 100", ask("2"));
        assertEquals("SPACE mps " + pipe + " 100", ask("7"));
        assertEquals("SPACE mps " + pipe + " 40 low", ask("1"));
        assertEquals("SPACE mps " + pipe + " 40 low", ask("-"));
        assertEquals("SPACE mps " + pipe + " 40 low", ask("-5"));
        Await.until(() -> server.liveSessions() == 0, () -> server.liveSessions() + " sessions after SPACE: it ends its connection");
    }

    @Test
    void withoutMpsSpaceSaysWhyAndProcessesShareInTime() throws Exception {
        start(MpsDaemon.Mode.AUTO, tmp.resolve("no-such-device"), true);
        assertFalse(server.space().on());
        assertTrue(server.space().state().contains("no NVIDIA device"), server.space().state());
        assertEquals("SPACE none unavailable", ask("2"));
        server.stop();
        start(MpsDaemon.Mode.OFF, device, true);
        assertEquals("SPACE none off", ask("1"));
        assertTrue(calls().isEmpty(), "mps=off ran the control program: " + calls());
        // a process that says mps anyway is time-shared: the node runs no daemon it could be a client of
        TestClient c = client();
        c.hello("train", "2", "cuda,mps");
        c.send("MAPPED");
        ExternalQueueImpl q = queue(c.stream(0, 0, 0, 0, -5, "default"));
        assertFalse(q.spaceOnly());
        assertEquals(100, q.smSharePercent());
    }

    @Test
    void badSpaceLinesAreRefusedByName() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        TestClient c = client();
        c.send("SPACE 1 " + (TestClient.PID + 1) + " app 1");
        HostServerTest.refusedWith(c, "is not yours");
        c = client();
        c.send("SPACE 1 " + TestClient.PID + " app");
        HostServerTest.refusedWith(c, "SPACE takes 4 or 5 fields");
        c = client();
        c.send("SPACE 1 " + TestClient.PID + " app high");
        HostServerTest.refusedWith(c, "priority 'high'");
        c = client();
        c.send("SPACE 1 " + TestClient.PID + " app 5000");
        HostServerTest.refusedWith(c, "priority 5000 is out of range; allowed: '-' or a whole number in [-1000, 1000]");
        c = client();
        c.hello("app", "1");
        c.send("SPACE 1 " + TestClient.PID + " app 1");
        HostServerTest.refusedWith(c, "SPACE after HELLO");
        c = client();
        c.send("HELLO 1 " + TestClient.PID + " app 1 hip,mps");
        HostServerTest.refusedWith(c, "capability 'mps' without 'cuda'");
    }

    @Test
    void aProcessWithTheWholeDeviceIsNeitherHeldNorThrottled() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        TestClient top = client();
        top.hello("serve", "2", "cuda,mps");
        top.map(); // before MAPPED: the node unlinks the file when it reads MAPPED
        top.send("MAPPED");
        ExternalQueueImpl q = queue(top.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(q.spaceOnly());
        assertEquals(100, q.smSharePercent());
        TestClient be = client();
        be.hello("train", "1", "cuda,mps");
        be.map(); // before MAPPED: the node unlinks the file when it reads MAPPED
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertFalse(b.spaceOnly(), "a capped share is held in time when the host says so");
        assertEquals(40, b.smSharePercent());
        // the scheduler's hold passes the queue with the whole device by; the other one is held
        q.schedule(true, System.nanoTime());
        b.schedule(true, System.nanoTime());
        assertFalse(q.isSuspendedByScheduler());
        assertEquals(0, top.slotInt(0, SharedMemory.S_GATE), "the gate of the whole-device process closed");
        assertEquals(0, top.slotInt(0, SharedMemory.S_WINDOW_US), "its window is a limit");
        assertTrue(b.isSuspendedByScheduler());
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE));
        // an operator's suspend still holds it
        q.suspend();
        assertEquals(1, top.slotInt(0, SharedMemory.S_GATE));
        q.resume();
        assertEquals(0, top.slotInt(0, SharedMemory.S_GATE));
    }

    @Test
    void aCappedShareIsHeldOnlyBehindCommandsThatFillTheDevice() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true, 50);
        TestClient top = client();
        top.hello("serve", "2", "cuda,mps");
        top.map(); // before MAPPED: the node unlinks the file when it reads MAPPED
        top.send("MAPPED");
        top.stream(0, 0, 0, 0, -5, "default");
        TestClient be = client();
        be.hello("train", "1", "cuda,mps");
        be.map(); // before MAPPED: the node unlinks the file when it reads MAPPED
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        // the preferred process has work of 10 us commands (a launch-bound decoder): no hold
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 3);
        top.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, System.nanoTime());
        top.writeSlotLong(0, SharedMemory.S_ESTIMATE_NS, 10_000);
        b.schedule(true, System.nanoTime());
        assertFalse(b.isSuspendedByScheduler(), "held behind commands of 10 us");
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE));
        // commands of 800 us (a graph replay, a large batch): held
        top.writeSlotLong(0, SharedMemory.S_ESTIMATE_NS, 800_000);
        b.schedule(true, System.nanoTime());
        assertTrue(b.isSuspendedByScheduler(), "not held behind commands of 800 us");
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE));
        b.schedule(false, System.nanoTime());
        // not measured yet: held (it may be either)
        top.writeSlotLong(0, SharedMemory.S_ESTIMATE_NS, 0);
        b.schedule(true, System.nanoTime());
        assertTrue(b.isSuspendedByScheduler(), "not held behind a queue of unknown commands");
        b.schedule(false, System.nanoTime());
        // the preferred process idle: the policy would not hold it, and if asked, nothing fills the device
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 0);
        top.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, 0);
        b.schedule(true, System.nanoTime());
        assertFalse(b.isSuspendedByScheduler(), "held with nothing preferred at work");
    }

    String askNarrow(String priority) throws Exception {
        TestClient c = client();
        c.send("SPACE 1 " + TestClient.PID + " app " + priority + " narrow");
        String answer = c.readLine();
        c.awaitEof(Await.LIMIT);
        return answer;
    }

    /** Waits until the scheduler made no decision for 100 ms (the ones events asked for are made). */
    private void settled() throws InterruptedException {
        long count = core.decisionHistogram().count();
        long quietSince = System.nanoTime();
        long until = quietSince + 5_000_000_000L;
        while (System.nanoTime() - quietSince < 100_000_000L && System.nanoTime() < until) {
            Thread.sleep(10);
            long now = core.decisionHistogram().count();
            if (now != count) {
                count = now;
                quietSince = System.nanoTime();
            }
        }
    }

    @Test
    void aProcessThatCanBeNarrowedGetsTheWholeDeviceAndIsNarrowedInsteadOfHeld() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("1"));
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("-"));
        assertEquals("SPACE mps " + pipe + " 100 narrow", askNarrow("2"),
                "the latency-critical class too (mpsNarrowLatency, on by default: narrowed only below a wider one, never held)");
        assertEquals("SPACE mps " + pipe + " 40 low", ask("1"), "a process that cannot be narrowed keeps the capped share");
        assertTrue(server.space().state().contains("narrowed to what the preferred queues leave"), server.space().state());

        TestClient top = client();
        top.hello("serve", "2", "cuda,mps");
        top.map();
        top.send("MAPPED");
        ExternalQueueImpl q = queue(top.stream(0, 0, 0, 0, -5, "default"));
        TestClient be = client();
        be.hello("train", "1", "cuda,mps,narrow");
        be.map();
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(b.narrows());
        assertFalse(q.narrows());
        assertEquals(100, b.smSharePercent(), "on the whole device until narrowed");
        // the widths the processes publish: serve's launches fill 19 of 132 multiprocessors
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 19);
        be.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 132);
        assertEquals(19, q.widthSms());
        assertEquals(132, b.deviceSms());
        // the node's own decisions (the queues' arrivals and widths are events) place b too: done
        // before b is placed by hand, they cannot undo it between the two (CI, session 46: the
        // reserve read 0 once, a decision's "run on the whole device" after the hand's narrowing)
        settled();
        b.schedule(true, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "narrowed, not held");
        assertEquals(24, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "serve's 19 multiprocessors, rounded up to 8s");
        assertEquals(78, b.smSharePercent());
        assertTrue(server.sessions().stream().anyMatch(i -> i.space().equals("mps 100% narrowed, low")),
                () -> server.sessions().stream().map(Session.Info::space).toList().toString());
        // its driver refused the split for thread clusters: shown, and still narrowed, not held
        be.send("NARROW plain");
        Await.until(() -> server.sessions().stream().anyMatch(i -> i.space().equals("mps 100% narrowed (plain split), low")),
                () -> "not shown after NARROW plain: " + server.sessions().stream().map(Session.Info::space).toList());
        assertTrue(b.narrows(), "narrowed as before");
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "narrowed, not held");
        assertEquals(24, be.slotInt(0, SharedMemory.S_RESERVE_SMS));
        b.schedule(false, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "the whole device again");
        b.schedule(true, System.nanoTime());
        assertEquals(24, be.slotInt(0, SharedMemory.S_RESERVE_SMS));
        // a part of its own size, as the core weighs it: ten sixteenths from the sixth
        b.share(6, 10);
        assertEquals(1 << 31 | 6 << 16 | 10, be.slotInt(0, SharedMemory.S_PART), "the top bit, the offset, the width");
        assertEquals(54, b.smSharePercent(), "of the 104 the reserve leaves (132 - 24), from the sixth sixteenth (39, rounded down to 32) to the end: 72 of 132");
        be.writeSlotInt(0, SharedMemory.S_PART, 1 << 16 | 2); // as a part given by the core
        be.send("CLOSE 0");
        ExternalQueueImpl again = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertEquals(0, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "the next stream in the slot starts on the whole device");
        assertEquals(1, be.slotInt(0, SharedMemory.S_PART), "and with all of it (part 0 of 1)");
        assertTrue(again.narrows());

        // the process's narrowing stopped (its driver failed to make a green context): held from now on
        settled(); // the decision its open asked for is made (it could undo the narrowing below)
        again.schedule(true, System.nanoTime());
        assertEquals(24, be.slotInt(0, SharedMemory.S_RESERVE_SMS));
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE));
        be.send("NARROW off");
        Await.until(() -> be.slotInt(0, SharedMemory.S_GATE) == 1, () -> "not held after NARROW off");
        assertEquals(0, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "its reserve cleared");
        assertFalse(again.narrows());
        again.schedule(false, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE));
        again.schedule(true, System.nanoTime());
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE), "held, not narrowed, behind serve");
        TestClient odd = client();
        odd.hello("odd", "1", "cuda,mps");
        odd.send("NARROW on");
        HostServerTest.refusedWith(odd, "NARROW takes 1 field, off or plain (NARROW off, NARROW plain), got 'on'");

        TestClient bad = client();
        bad.send("SPACE 1 " + TestClient.PID + " app 1 wide");
        HostServerTest.refusedWith(bad, "SPACE's fifth field 'wide' is not known; allowed: narrow");
        bad = client();
        bad.send("HELLO 1 " + TestClient.PID + " app 1 cuda,narrow");
        HostServerTest.refusedWith(bad, "capability 'narrow' without 'mps'");
    }

    /**
     * {@code mpsLowPriorityBestEffort}: best-effort processes, narrowed or on their share, are told
     * "low" (the interposer sets MPS's lower client priority); latency-critical ones never are, and
     * with the setting off no answer says it. On is the default (session 89's A/B on the H200).
     */
    @Test
    void bestEffortProcessesAreToldTheLowerClientPriorityUnlessConfiguredOff() throws Exception {
        assertTrue(SpacePlan.DEFAULT_LOW_BEST_EFFORT, "on by default");
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, true, false,
                true, true));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 40 low", ask("1"), "best-effort on its share");
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("1"), "best-effort, narrowed");
        assertEquals("SPACE mps " + pipe + " 100", ask("2"), "latency-critical: normal priority");
        assertEquals("SPACE mps " + pipe + " 100 narrow", askNarrow("3"), "latency-critical, narrowable: normal priority");
        assertTrue(server.space().state().contains("lower client priority"), server.space().state());
        // the operator's column says it for the best-effort process, not for the latency-critical one
        TestClient be = client();
        be.hello("train", "1", "cuda,mps,narrow");
        TestClient lc = client();
        lc.hello("serve", "2", "cuda,mps,narrow");
        Await.until(() -> server.sessions().stream().map(Session.Info::space).toList().containsAll(
                        List.of("mps 100% narrowed, low", "mps 100% narrowed, untimed")),
                () -> server.sessions().stream().map(Session.Info::space).toList().toString());
        server.stop();

        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, true, false,
                true, false));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        assertEquals("SPACE mps " + pipe + " 40", ask("1"), "configured off: every client at the normal priority");
        assertEquals("SPACE mps " + pipe + " 100 narrow", askNarrow("1"));
        assertFalse(server.space().state().contains("lower client priority"), server.space().state());
    }

    /**
     * {@code mpsNarrowLatency}: a latency-critical process that can be narrowed is told so (the
     * whole device, narrowed at times), is never held, and is narrowed to half the device while a
     * wider process of a higher priority has work; off (the default), the same process is told the
     * whole device and never narrowed. A process that cannot be narrowed keeps the whole device.
     */
    @Test
    void aLatencyCriticalProcessBelowAWiderOneIsNarrowedWhenAskedAndNeverHeld() throws Exception {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, true, false, true));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 100 narrow", askNarrow("2"), "latency-critical and narrowable");
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("1"));
        assertEquals("SPACE mps " + pipe + " 100", ask("2"), "latency-critical, cannot be narrowed: the whole device");
        assertTrue(server.space().state().contains("a latency-critical process narrowed to half"), server.space().state());

        TestClient top = client();
        top.hello("graph", "3", "cuda,mps,narrow");
        top.map();
        top.send("MAPPED");
        ExternalQueueImpl g = queue(top.stream(0, 0, 0, 0, -5, "default"));
        TestClient low = client();
        low.hello("batch", "2", "cuda,mps,narrow");
        low.map();
        low.send("MAPPED");
        ExternalQueueImpl b = queue(low.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(b.ranked() && g.ranked(), "both latency-critical and narrowable");
        assertFalse(b.narrows(), "not narrowed as a best-effort process");
        assertTrue(b.spaceOnly(), "never held nor throttled");
        Await.until(() -> server.sessions().stream().anyMatch(i -> i.space().equals("mps 100% narrowed, untimed")),
                () -> server.sessions().stream().map(Session.Info::space).toList().toString());
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 132);
        low.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 120);
        settled();
        // the graph with work (as its slot's counters say once it launched): the batch, held by
        // the policy, is narrowed to leave the graph half the device, its gate open
        top.writeSlotLong(0, SharedMemory.S_LAUNCHED, 4);
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 4);
        b.schedule(true, System.nanoTime());
        assertEquals(1 << 31 | 8 << 16 | 8, low.slotInt(0, SharedMemory.S_PART), "the upper half of the device (the graph has the rest too)");
        assertEquals(0, low.slotInt(0, SharedMemory.S_RESERVE_SMS), "no reserve: best-effort processes run from the first multiprocessor");
        assertEquals(0, low.slotInt(0, SharedMemory.S_GATE), "narrowed, not held");
        assertEquals(dev.xq.api.QueueConfig.MAX_THRESHOLD, low.slotInt(0, SharedMemory.S_THRESHOLD), "no threshold");
        // the graph idle: the whole device back at the next decision that holds it, never a hold
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 0);
        top.writeSlotLong(0, SharedMemory.S_COMPLETED, 4);
        b.schedule(true, System.nanoTime());
        assertEquals(1, low.slotInt(0, SharedMemory.S_PART), "nothing wide with work above it: all of the device (part 0 of 1)");
        assertEquals(0, low.slotInt(0, SharedMemory.S_GATE));
        // narrowing stopped in the process: on the whole device, never held
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 2);
        top.writeSlotLong(0, SharedMemory.S_LAUNCHED, 6);
        b.schedule(true, System.nanoTime());
        assertEquals(1 << 31 | 8 << 16 | 8, low.slotInt(0, SharedMemory.S_PART));
        low.send("NARROW off");
        // the flag turns before the part is cleared, under the queue's lock (CI, session 116: the
        // part read the narrowed one once right after the flag): wait for both
        Await.until(() -> !b.ranked() && low.slotInt(0, SharedMemory.S_PART) == 1,
                () -> "after NARROW off: ranked " + b.ranked() + ", part " + low.slotInt(0, SharedMemory.S_PART) + " (want 1: cleared)");
        b.schedule(true, System.nanoTime());
        assertEquals(0, low.slotInt(0, SharedMemory.S_GATE), "still never held");
    }

    @Test
    void withoutNarrowLatencyALatencyCriticalProcessIsNeverNarrowed() throws Exception {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, true, false, false));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 100", askNarrow("2"), "off: the latency-critical class is never narrowed");
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("1"), "best-effort ones still are");
        assertFalse(server.space().state().contains("a latency-critical process narrowed"), server.space().state());
    }

    @Test
    void latencyCriticalProcessesKeepContextsOfTheirOwnWhenAskedAndTheOthersAreHeldOnlyBehindAWideBusyOne() throws Exception {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, true, true));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE none own-context", askNarrow("2"));
        assertEquals("SPACE none own-context", ask("5"));
        assertEquals("SPACE mps " + pipe + " 100 narrow low", askNarrow("1"), "best-effort processes still join the server");
        assertEquals("SPACE mps " + pipe + " 40 low", ask("-"));
        assertTrue(server.space().state().contains("a context of their own"), server.space().state());

        TestClient top = client();
        top.hello("serve", "2", "cuda"); // kept out of the server: no mps capability
        top.map();
        top.send("MAPPED");
        ExternalQueueImpl q = queue(top.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(q.spaceOnly(), "never held");
        assertTrue(q.space().ownContext());
        assertTrue(server.sessions().stream().anyMatch(i -> i.space().equals("own context")),
                () -> server.sessions().stream().map(Session.Info::space).toList().toString());
        TestClient be = client();
        be.hello("train", "1", "cuda,mps,narrow");
        be.map();
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(b.narrows());
        assertFalse(b.space().ownContext());
        be.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 132);
        settled();
        // a narrow tenant of its own (a decoder) at work: the trainer runs on the whole device,
        // since narrowing it would leave the decoder nothing (the GPU time-slices the two contexts)
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 19);
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 3);
        top.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, System.nanoTime());
        b.schedule(true, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "narrowed for a tenant in another context");
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "held behind a narrow tenant");
        // a wide one (a CUDA graph) at work: held in time
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 132);
        b.schedule(true, System.nanoTime());
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE), "not held behind a wide busy tenant");
        assertEquals(0, be.slotInt(0, SharedMemory.S_RESERVE_SMS));
        // the latency-critical one is never held by the scheduler, an operator's suspend still holds it
        q.schedule(true, System.nanoTime());
        assertFalse(q.isSuspendedByScheduler());
        q.suspend();
        assertEquals(1, top.slotInt(0, SharedMemory.S_GATE));
        q.resume();
        assertEquals(0, top.slotInt(0, SharedMemory.S_GATE));
    }

    @Test
    void aBusyTenantIsWideByItsCurrentStretchOfWorkAndReservedForItsWidest() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, true);
        TestClient top = client();
        top.hello("chat", "2", "cuda,mps");
        top.map();
        top.send("MAPPED");
        ExternalQueueImpl q = queue(top.stream(0, 0, 0, 0, -5, "default"));
        TestClient be = client();
        be.hello("train", "1", "cuda,mps,narrow");
        be.map();
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        be.writeSlotInt(0, SharedMemory.S_WIDTH, 1 << 31 | 132 << 20 | 132 << 10 | 132);
        // a chat server's tokens after its prefill: the widest of its last seconds is the whole
        // device, its current stretch 24 multiprocessors
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 1 << 31 | 132 << 20 | 24 << 10 | 132);
        assertEquals(132, q.widthSms());
        assertEquals(24, q.stretchWidthSms());
        assertEquals(132, q.deviceSms());
        settled();
        top.writeSlotInt(0, SharedMemory.S_IN_FLIGHT, 3);
        top.writeSlotLong(0, SharedMemory.S_READY_SINCE_NS, System.nanoTime());
        b.schedule(true, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "held behind a tenant whose current stretch is narrow");
        assertEquals(64, be.slotInt(0, SharedMemory.S_RESERVE_SMS), "its widest reserved, at most half the device");
        // its next prefill: wide now, held in time
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 1 << 31 | 132 << 20 | 132 << 10 | 132);
        b.schedule(true, System.nanoTime());
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE), "not held behind a tenant wide now");
        // an interposer before the stretch (no top bit): its widest is its stretch
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 132);
        assertEquals(132, q.stretchWidthSms());
        b.schedule(true, System.nanoTime());
        assertEquals(1, be.slotInt(0, SharedMemory.S_GATE), "not held behind a wide tenant told the old way");
        top.writeSlotInt(0, SharedMemory.S_WIDTH, 132 << 16 | 19);
        assertEquals(19, q.stretchWidthSms());
        assertEquals(132, q.deviceSms());
        b.schedule(true, System.nanoTime());
        assertEquals(0, be.slotInt(0, SharedMemory.S_GATE), "held behind a narrow tenant told the old way");
        assertEquals(24, be.slotInt(0, SharedMemory.S_RESERVE_SMS));
    }

    @Test
    void narrowingOffKeepsTheCappedShare() throws Exception {
        server = new HostServer(HostSettings.of(sock), core, core::defaults, RuntimeLog.NONE);
        server.useSpace(new HostServer.SpaceSettings(MpsDaemon.Mode.AUTO, control.toString(), device, 2, 40, true, 0, false));
        assertTrue(server.start(), () -> "server did not start: " + server.status());
        String pipe = sock.getParent().resolve("mps").toString();
        assertEquals("SPACE mps " + pipe + " 40 low", askNarrow("1"));
        TestClient be = client();
        be.hello("train", "1", "cuda,mps,narrow");
        be.map();
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertFalse(b.narrows());
        assertEquals(40, b.smSharePercent());
    }

    @Test
    void withoutHoldsACappedShareIsNotHeldEither() throws Exception {
        start(MpsDaemon.Mode.AUTO, device, false);
        TestClient be = client();
        be.hello("train", "1", "cuda,mps");
        be.send("MAPPED");
        ExternalQueueImpl b = queue(be.stream(0, 0, 0, 0, -5, "default"));
        assertTrue(b.spaceOnly());
        assertEquals(40, b.smSharePercent());
    }

    @Test
    void theModeIsParsedOrRefusedByName() {
        assertEquals(MpsDaemon.Mode.AUTO, MpsDaemon.Mode.parse(""));
        assertEquals(MpsDaemon.Mode.ON, MpsDaemon.Mode.parse(" On "));
        assertEquals(MpsDaemon.Mode.OFF, MpsDaemon.Mode.parse("off"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MpsDaemon.Mode.parse("yes"));
        assertTrue(e.getMessage().contains("'yes'") && e.getMessage().contains("auto, on, off"), e.getMessage());
        IllegalArgumentException s = assertThrows(IllegalArgumentException.class,
                () -> new SpacePlan(MpsDaemon.off("x"), 2, 0, true, 50));
        assertTrue(s.getMessage().contains("mpsBestEffortShare 0"), s.getMessage());
        assertNull(MpsDaemon.off("x").pipeDir());
    }

    ExternalQueueImpl queue(long handle) {
        return core.externalQueues().stream().filter(q -> q.handle() == handle).findFirst()
                .orElseThrow(() -> new AssertionError("no external queue " + handle + " in the core"));
    }
}
