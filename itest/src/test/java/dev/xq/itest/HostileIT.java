package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.CommandCancelledException;
import dev.xq.api.Hint;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.policy.spi.Policy;
import dev.xq.policy.spi.QueueView;
import dev.xq.policy.spi.SchedulerActions;
import dev.xq.policy.spi.SchedulerView;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogListener;
import org.osgi.service.log.LogReaderService;

/**
 * The hostile-input suite (issue 18): misbehaving policy bundles, malformed configuration and
 * API abuse, tried against a real node; each trial is a row of a table (tried / outcome / lost /
 * foreign threads held / silent), printed and written to {@code target/hostile-suite.txt}. The
 * misbehaving policies are registered by this test's own bundle, a bundle other than XQ's.
 *
 * <p>What each column must be: <b>lost</b> 0 (every command submitted ended: completed, failed
 * with a cause, or cancelled by an explicit close); <b>held</b> 0 (no thread XQ does not own — an
 * application's, the shell's, Config Admin's, a device's — is inside a policy when the trial
 * ends); <b>silent</b> no (every refusal or fault is reported: an exception with a message naming
 * the value, or a log line).
 *
 * <p>Why this file is over 800 lines: it is one table. Each test is a row (one attack, tried and
 * judged, about 40 lines), the rows share one node booted once per class (a second class would
 * boot a second framework and split the table the CI log prints), and the helpers at the top are
 * what every row uses. A new attack is a new row here.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@org.junit.FixMethodOrder(org.junit.runners.MethodSorters.NAME_ASCENDING)
public class HostileIT {

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    CommandProcessor processor;

    @Inject
    ConfigurationAdmin cm;

    @Inject
    LogReaderService logReader;

    private final List<String> log = new CopyOnWriteArrayList<>();

    /**
     * @return the log's lines from index {@code from} on, copied: a sublist of the live list throws
     *         ConcurrentModificationException when a line is added while it is read (seen once, b1)
     */
    private List<String> logSince(int from) {
        List<String> all = List.copyOf(log);
        return all.subList(Math.min(from, all.size()), all.size());
    }
    private final LogListener listener = this::logged;
    private final List<ServiceRegistration<?>> registered = new ArrayList<>();
    private final List<XQueue> queues = new CopyOnWriteArrayList<>();
    /** Every blocker of the test, released before its queues are closed (a close posts an event too). */
    private final List<Blocker> blockers = new CopyOnWriteArrayList<>();
    private CommandSession session;

    /** The suite's table, in the order the rows ran (the class's tests add to it). */
    private static final List<String[]> ROWS = new CopyOnWriteArrayList<>();

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    private void logged(LogEntry e) {
        log.add(e.getLogLevel() + " " + e.getMessage());
    }

    @Before
    public void setUp() throws Exception {
        logReader.addLogListener(listener);
        session = processor.createSession(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()));
        assertTrue("xq commands registered", XqNode.eventually(10_000, () -> {
            try {
                session.execute("xq:policies");
                return true;
            } catch (Exception notYet) {
                return false;
            }
        }));
        scheduler.selectPolicy("hpf");
    }

    @After
    public void tearDown() throws Exception {
        for (Blocker b : blockers) {
            b.release.countDown();
        }
        for (XQueue q : queues) {
            q.close();
        }
        for (ServiceRegistration<?> r : registered) {
            try {
                r.unregister();
            } catch (IllegalStateException gone) {
                // unregistered by the trial itself
            }
        }
        session.close();
        logReader.removeLogListener(listener);
        scheduler.selectPolicy("hpf");
        writeTable();
    }

    // ------------------------------------------------------------------ misbehaving policies

    /** Blocks every real decision until released; returns at once from the trial decisions. */
    static final class Blocker implements Policy {
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger held = new AtomicInteger();
        final AtomicInteger decided = new AtomicInteger();
        /** Blocks only off the scheduler's own thread: aims at the threads that post events (applications', devices'). */
        final boolean offLoopOnly;

        Blocker() {
            this(false);
        }

        Blocker(boolean offLoopOnly) {
            this.offLoopOnly = offLoopOnly;
        }

        Blocker kept(List<Blocker> all) {
            all.add(this);
            return this;
        }

        @Override
        public String description() {
            return "hostile: blocks in every decision";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            String t = Thread.currentThread().getName();
            if (t.equals("xq-policy-warmup")) {
                return;
            }
            decided.incrementAndGet();
            if (offLoopOnly && t.startsWith("xq-scheduler-")) {
                new Counting().schedule(view, actions);
                return;
            }
            held.incrementAndGet();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Spins, ignoring interrupts, until the suite ends its row (a loop Java cannot stop). */
    static final class Looper implements Policy {
        final AtomicBoolean loop = new AtomicBoolean(true);

        @Override
        public String description() {
            return "hostile: loops in every decision";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            while (loop.get()) {
                Thread.onSpinWait();
            }
        }
    }

    /** Counts its calls; decides nothing. */
    static final class Counting implements Policy {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public String description() {
            return "hostile: counts its calls";
        }

        @Override
        public void schedule(SchedulerView view, SchedulerActions actions) {
            calls.incrementAndGet();
            for (QueueView q : view.queues()) {
                actions.resume(q.handle());
            }
        }
    }

    private void register(String name, Policy p, boolean bounded) {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(Policy.NAME_PROPERTY, name);
        if (bounded) {
            props.put(Policy.BOUNDED_PROPERTY, "true");
        }
        registered.add(ctx.registerService(Policy.class, p, props));
    }

    @Test
    public void a1BoundedPolicyThatBlocksSelectedFromTheShell() throws Exception {
        Blocker b = new Blocker().kept(blockers);
        register("blocker", b, true);
        waitFor("blocker registered", () -> scheduler.policies().stream().anyMatch(p -> p.name().equals("blocker")));
        Thread shell = Thread.ofPlatform().name("hostile-shell").start(() -> {
            try {
                session.execute("xq:policy blocker");
            } catch (Exception e) {
                log.add("shell: " + e.getMessage());
            }
        });
        shell.join(5_000);
        boolean shellFree = !shell.isAlive();
        Load load = load(2, 20);
        // the watchdog reports it within ten decision deadlines (100 ms by default)
        XqNode.eventually(5_000, () -> !setAside("blocker").isEmpty());
        int held = foreignThreadsIn(Blocker.class);
        String setAside = setAside("blocker");
        b.release.countDown();
        row("bounded policy of another bundle blocks in every decision; selected with xq:policy",
                "shell " + (shellFree ? "returned" : "HELD") + "; application threads " + (load.submittersFree ? "returned" : "HELD")
                        + "; policy set aside (" + (setAside.isEmpty() ? "NOT REPORTED" : setAside) + "); " + load.ended + "/"
                        + load.total + " commands ended" + log.stream().filter(x -> x.startsWith("shell")).map(x -> "; " + x)
                                .collect(java.util.stream.Collectors.joining()),
                load.total - load.ended, held, setAside.isEmpty() || !shellFree || !load.submittersFree);
    }

    @Test
    public void a1bBoundedPolicyThatBlocksOnlyOnThreadsThatPostEvents() throws Exception {
        Blocker b = new Blocker(true).kept(blockers);
        register("ambush", b, true);
        waitFor("ambush registered", () -> scheduler.policies().stream().anyMatch(p -> p.name().equals("ambush")));
        scheduler.selectPolicy("ambush");
        Load load = load(2, 20);
        int held = foreignThreadsIn(Blocker.class);
        int blocked = b.held.get();
        int decided = b.decided.get();
        b.release.countDown();
        row("bounded policy of another bundle decides normally on the scheduler's thread but blocks on any other"
                        + " (an application's submit, the sim device's completions)",
                "decided " + decided + " times, blocked " + blocked + " times; application threads "
                        + (load.submittersFree ? "returned" : "HELD") + "; " + load.ended + "/" + load.total + " commands ended",
                load.total - load.ended, held, !load.submittersFree || decided == 0);
    }

    @Test
    public void a2BoundedPolicyThatBlocksSelectedThroughConfigAdmin() throws Exception {
        Blocker b = new Blocker().kept(blockers);
        register("blocker2", b, true);
        waitFor("blocker2 registered", () -> scheduler.policies().stream().anyMatch(p -> p.name().equals("blocker2")));
        org.osgi.service.cm.Configuration sched = cm.getConfiguration("dev.xq.scheduler", "?");
        sched.update(dict(Map.of("policy", "blocker2")));
        Load load = load(2, 20);
        // Config Admin's thread must still apply later configurations, of any PID
        org.osgi.service.cm.Configuration defaults = cm.getConfiguration("dev.xq.queue.defaults", "?");
        defaults.update(dict(Map.of("threshold", "7", "batch", "3")));
        boolean applied = XqNode.eventually(5_000, () -> xq.defaults().threshold() == 7);
        XqNode.eventually(5_000, () -> !setAside("blocker2").isEmpty());
        int held = foreignThreadsIn(Blocker.class);
        String setAside = setAside("blocker2");
        b.release.countDown();
        sched.update(dict(Map.of("policy", "hpf")));
        defaults.delete();
        row("bounded policy of another bundle blocks in every decision; selected in dev.xq.scheduler.cfg",
                "later configuration " + (applied ? "applied" : "NOT APPLIED (Config Admin held)") + "; policy set aside ("
                        + (setAside.isEmpty() ? "NOT REPORTED" : setAside) + "); " + load.ended + "/" + load.total + " commands ended",
                load.total - load.ended, held, setAside.isEmpty() || !applied);
    }

    @Test
    public void a3ImpostorRegistersANameOfAnotherBundle() throws Exception {
        Counting impostor = new Counting();
        register("hpf", impostor, true);
        boolean refusedLogged = XqNode.eventually(5_000, () -> log.stream().anyMatch(l -> l.startsWith("ERROR") && l.contains("'hpf'")
                && l.contains("refused")));
        Bundle fixed = bundle("dev.xq.policy.fixedpriority");
        fixed.stop();
        fixed.start();
        waitFor("hpf back", () -> scheduler.policies().stream().anyMatch(p -> p.name().equals("hpf")));
        scheduler.selectPolicy("hpf");
        Load load = load(2, 10);
        String owner = scheduler.policies().stream().filter(p -> p.name().equals("hpf")).findFirst().orElseThrow().bundle();
        boolean ok = owner.startsWith("dev.xq.policy.fixedpriority") && impostor.calls.get() == 0;
        row("a second bundle registers xq.policy=hpf; the real hpf bundle is restarted",
                "refused" + (refusedLogged ? " with a log line naming both bundles" : " SILENTLY") + "; hpf decides from " + owner
                        + "; impostor called " + impostor.calls.get() + " times",
                load.total - load.ended, 0, !refusedLogged || !ok);
    }

    @Test
    public void a4PolicyThatLoopsRegisteredAndSelectedAgainAndAgain() throws Exception {
        Looper l = new Looper();
        try {
            register("looper", l, false);
            waitFor("looper registered and tried", () -> setAside("looper").contains("stuck"));
            int refused = 0;
            String message = "";
            for (int i = 0; i < 3; i++) {
                try {
                    scheduler.selectPolicy("looper");
                } catch (IllegalArgumentException e) {
                    refused++;
                    message = e.getMessage();
                }
            }
            int threads = threadsIn(Looper.class);
            Load load = load(2, 10);
            row("a policy loops forever in its decisions (ignores interrupts); registered, then selected 3 times",
                    "selection refused " + refused + "/3 (\"" + shorten(message) + "\"); XQ's trial threads left inside it: " + threads
                            + " (one per registration, never one per selection)",
                    load.total - load.ended, foreignThreadsIn(Looper.class), refused != 3 || threads > 1);
        } finally {
            l.loop.set(false);
        }
    }

    @Test
    public void a5CloseCalledFromACompletionCallback() throws Exception {
        XQueue a = queue("close-in-callback", 1);
        XQueue other = queue("other-tenant", 1);
        List<Submission> subs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            subs.add(a.submit(Command.spin(2_000)));
        }
        subs.getFirst().stage().toCompletableFuture().whenComplete((r, e) -> a.close());
        Thread.sleep(5);
        long t0 = System.nanoTime();
        Submission probe = other.submit(Command.spin(10));
        probe.stage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        long probeMs = (System.nanoTime() - t0) / 1_000_000L;
        int ended = 0;
        int cancelled = 0;
        for (Submission s : subs) {
            try {
                s.stage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                ended++;
            } catch (java.util.concurrent.ExecutionException e) {
                ended++;
                if (e.getCause() instanceof CommandCancelledException) {
                    cancelled++;
                }
            } catch (java.util.concurrent.TimeoutException notEnded) {
                // lost
            }
        }
        row("XQueue.close() called from a completion callback (the driver's thread)",
                "another tenant's 10 us command took " + probeMs + " ms; " + (subs.size() - cancelled) + " ran, " + cancelled
                        + " cancelled by the close",
                subs.size() - ended, 0, probeMs > 1_000);
    }

    // ------------------------------------------------------------------ malformed configuration

    @Test
    public void b1HugeDecisionDeadline() throws Exception {
        org.osgi.service.cm.Configuration sched = cm.getConfiguration("dev.xq.scheduler", "?");
        int before = log.size();
        sched.update(dict(Map.of("policy", "hpf", "decisionDeadlineMicros", "18446744073710552")));
        boolean named = XqNode.eventually(5_000, () -> logSince(before).stream()
                .anyMatch(l -> l.contains("decisionDeadlineMicros") && l.contains("18446744073710552")));
        // Behaviour, not words: a policy taking 3 ms per decision must not be set aside (a wrapped
        // deadline of ~1 ms would trip it).
        long trips = scheduler.stats().watchdogTrips();
        Policy slow = new Policy() {
            @Override
            public String description() {
                return "hostile: takes 3 ms per decision";
            }

            @Override
            public void schedule(SchedulerView view, SchedulerActions actions) {
                long until = System.nanoTime() + 3_000_000L;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                for (QueueView q : view.queues()) {
                    actions.resume(q.handle());
                }
            }
        };
        register("slow3ms", slow, false);
        waitFor("slow3ms registered", () -> scheduler.policies().stream().anyMatch(p -> p.name().equals("slow3ms")));
        scheduler.selectPolicy("slow3ms");
        Load load = load(2, 10);
        long tripped = scheduler.stats().watchdogTrips() - trips;
        sched.update(dict(Map.of("policy", "hpf")));
        row("dev.xq.scheduler decisionDeadlineMicros=18446744073710552",
                (named ? "refused, logged naming the value" : "NOT REPORTED") + "; a 3 ms policy tripped " + tripped
                        + " times afterwards (deadline unchanged at 10 ms)",
                load.total - load.ended, 0, !named || tripped != 0);
    }

    @Test
    public void b2NonNumericValuesBesideAValidPolicy() throws Exception {
        org.osgi.service.cm.Configuration sched = cm.getConfiguration("dev.xq.scheduler", "?");
        int before = log.size();
        sched.update(dict(Map.of("policy", "edf", "decisionDeadlineMicros", "abc", "inlineDecisions", "maybe", "inlinePolicyBundles",
                "bad name")));
        boolean applied = XqNode.eventually(5_000, () -> scheduler.selectedPolicy().equals("edf"));
        Supplier<List<String>> since = () -> logSince(before);
        boolean named = XqNode.eventually(5_000, () -> since.get().stream().anyMatch(l -> l.contains("decisionDeadlineMicros"))
                && since.get().stream().anyMatch(l -> l.contains("inlineDecisions 'maybe'"))
                && since.get().stream().anyMatch(l -> l.contains("'bad name'")));
        org.osgi.service.cm.Configuration defaults = cm.getConfiguration("dev.xq.queue.defaults", "?");
        QueueConfig kept = xq.defaults();
        int before2 = log.size();
        defaults.update(dict(Map.of("threshold", "abc")));
        boolean defaultsNamed = XqNode.eventually(5_000, () -> logSince(before2).stream()
                .anyMatch(l -> l.contains("dev.xq.queue.defaults") && l.contains("threshold")));
        boolean defaultsKept = xq.defaults().equals(kept);
        sched.update(dict(Map.of("policy", "hpf")));
        defaults.delete();
        row("dev.xq.scheduler: decisionDeadlineMicros=abc, inlineDecisions=maybe, inlinePolicyBundles='bad name', policy=edf;"
                        + " dev.xq.queue.defaults threshold=abc",
                "policy=edf " + (applied ? "applied" : "NOT APPLIED") + "; bad keys " + (named ? "each logged by name" : "NOT ALL REPORTED")
                        + "; queue defaults " + (defaultsKept ? "kept" : "CHANGED") + (defaultsNamed ? ", logged naming threshold" : ", NOT REPORTED"),
                0, 0, !applied || !named || !defaultsNamed || !defaultsKept);
    }

    // ------------------------------------------------------------------ API and shell abuse

    @Test
    public void c1ApiAndShellAbuse() throws Exception {
        XQueue q = queue("abuse", 1);
        List<String> outcomes = new ArrayList<>();
        boolean silent = false;
        silent |= !refused(outcomes, "hint(null)", () -> q.hint(null), "hint is null");
        silent |= !refused(outcomes, "Kernel(args=null)", () -> new Command.Kernel("m", "f", new Command.Dim3(1, 1, 1),
                new Command.Dim3(1, 1, 1), 0, null), "List.of()");
        silent |= !refused(outcomes, "waitAll(null)", () -> {
            try {
                q.waitAll(null);
            } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException(e);
            }
        }, "timeout is null");
        silent |= !refused(outcomes, "xq:config abuse level 4294967299", () -> shell("xq:config abuse level 4294967299"), "4294967299");
        silent |= !refused(outcomes, "xq:hint abuse priority \u0663 (Arabic-Indic three)", () -> shell("xq:hint abuse priority \u0663"),
                "not a whole number");
        int before = log.size();
        register("my policy", new Counting(), false);
        boolean nameRefused = XqNode.eventually(5_000, () -> logSince(before).stream().anyMatch(l -> l.contains("'my policy'")))
                && scheduler.policies().stream().noneMatch(p -> p.name().equals("my policy"));
        outcomes.add("policy named 'my policy': " + (nameRefused ? "refused, logged" : "ACCEPTED"));
        silent |= !nameRefused;
        XQueue closed = queue("closed", 1);
        closed.close();
        silent |= !refused(outcomes, "suspend() after close()", closed::suspend, "is closed");
        silent |= !refused(outcomes, "resume() after close()", closed::resume, "is closed");
        Load load = load(1, 5);
        row("API and shell abuse: nulls, a level beyond int, other scripts' digits, a name with a space, use after close",
                String.join("; ", outcomes), load.total - load.ended, 0, silent);
    }

    private Object shell(String line) {
        try {
            return session.execute(line);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** @return whether {@code r} threw with a message containing {@code expected} (the outcome is added either way) */
    private static boolean refused(List<String> outcomes, String what, Runnable r, String expected) {
        try {
            r.run();
            outcomes.add(what + ": ACCEPTED");
            return false;
        } catch (RuntimeException e) {
            boolean ok = e.getMessage() != null && e.getMessage().contains(expected);
            outcomes.add(what + ": " + (ok ? "refused" : "refused WITHOUT NAMING IT (" + e + ")"));
            return ok;
        }
    }

    // ------------------------------------------------------------------ issue 41: a hostile local user

    /** The node's process socket in this framework. */
    private Path hostSocket() {
        return Path.of(ctx.getProperty(XqNode.HOST_SOCKET_PROPERTY));
    }

    /** @return the service id of the process host's registration now (made once it listens), or -1 while there is none */
    private long hostId() {
        try {
            org.osgi.framework.ServiceReference<?>[] refs = ctx.getAllServiceReferences(null, "(xq.host.socket=*)");
            return refs == null || refs.length == 0 ? -1 : (Long) refs[0].getProperty(org.osgi.framework.Constants.SERVICE_ID);
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the service id of the HTTP API's Jetty runtime now, or -1 while there is none */
    private long runtimeId() {
        try {
            org.osgi.framework.ServiceReference<?>[] refs = ctx.getServiceReferences(
                    "org.osgi.service.servlet.runtime.HttpServiceRuntime", "(xq.http=xq)");
            return refs == null || refs.length == 0 ? -1 : (Long) refs[0].getProperty(org.osgi.framework.Constants.SERVICE_ID);
        } catch (org.osgi.framework.InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The HTTP API's port once it serves from a Jetty runtime other than {@code notThis} (after a configuration change: the new one). */
    private int httpPort(long notThis) throws InterruptedException {
        String[] e = new String[1];
        waitFor("the HTTP API serves", () -> {
            long id = runtimeId();
            e[0] = XqNode.httpEndpoint(ctx);
            return id != -1 && id != notThis && e[0] != null && answers(Probes.port(e[0]));
        });
        return Probes.port(e[0]);
    }

    private static boolean answers(int port) {
        try {
            return Probes.http(port, "GET", "/api/v1/policy", null, 2_000).status() > 0; // any answer: it serves (401 with tokenOnLoopback)
        } catch (java.io.IOException notYet) {
            return false;
        }
    }

    private static final String NOBODY = "65534";

    @Test
    public void d01AnotherLocalUserChangesTheNodeOverLoopbackHttp() throws Exception {
        XQueue victim = queue("victim41", 1);
        long handle = victim.status().handle();
        int port = httpPort(-2);
        // a python3 the other user may run (not a shim under /root)
        String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : null;
        String setpriv = Probes.onPath("setpriv");
        if (Probes.euid() != 0 || python == null || setpriv == null) {
            row("issue 41, item 1: another local user (uid " + NOBODY + ") suspends a queue over loopback HTTP without a token",
                    "not tried here: it needs root, setpriv and python3 to act as another user (uid " + Probes.euid() + ", setpriv "
                            + setpriv + ", python3 " + python + "); LocalUsersTest and LoopbackPeersTest hold the rule",
                    0, 0, false);
            return;
        }
        String script = """
                import socket, sys
                port = int(sys.argv[1])
                for method, path, body in (("POST", "/api/v1/suspend", sys.argv[2]), ("GET", "/api/v1/queues", "")):
                    s = socket.create_connection(("127.0.0.1", port), timeout=10)
                    b = body.encode()
                    head = "%s %s HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nConnection: close\\r\\n" % (method, path, port)
                    if b:
                        head += "Content-Type: application/json\\r\\nContent-Length: %d\\r\\n" % len(b)
                    s.sendall(head.encode() + b"\\r\\n" + b)
                    out = b""
                    while True:
                        d = s.recv(65536)
                        if not d:
                            break
                        out += d
                    status = out.split(b" ", 2)[1].decode()
                    print(method, status, out.split(b"\\r\\n\\r\\n", 1)[-1][:300].decode(errors="replace"), flush=True)
                """;
        Probes.Ran r = Probes.run(List.of(setpriv, "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", python, "-c", script,
                Integer.toString(port), "{\"queue\":\"" + handle + "\"}"), 30);
        boolean refused = r.out().contains("POST 403") && r.out().contains("belongs to uid " + NOBODY);
        boolean read = r.out().contains("GET 200");
        boolean held = victim.status().suspendedByApp();
        Load load = load(1, 5);
        row("issue 41, item 1: another local user (uid " + NOBODY + ") suspends a queue over loopback HTTP without a token",
                "POST /api/v1/suspend " + (refused ? "refused 403 naming the uid" : "NOT REFUSED") + ", queue "
                        + (held ? "SUSPENDED" : "untouched") + "; GET /api/v1/queues " + (read ? "answered (reads stay open)"
                        : "NOT ANSWERED") + " (" + shorten(r.out().replace('\n', ' ')) + ")",
                load.total - load.ended, 0, !refused || held || !read);
    }

    @Test
    public void d02AFakeNodeInAFolderOthersMayWriteTo() throws Exception {
        Path work = Files.createTempDirectory(Path.of(System.getProperty("xq.itest.work", "/tmp")).toAbsolutePath(), "fake");
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "xqfake");
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        Path sock = dir.resolve("node.sock");
        AtomicInteger connected = new AtomicInteger();
        try (java.nio.channels.ServerSocketChannel fake = java.nio.channels.ServerSocketChannel.open(
                java.net.StandardProtocolFamily.UNIX)) {
            fake.bind(java.net.UnixDomainSocketAddress.of(sock));
            fake.configureBlocking(false);
            FakeApps.App app = FakeApps.start(work, sock, work.resolve("gpu.lock"), Map.of("XQ_NAME", "lured"),
                    "--tasks", "3", "--kernels", "2", "--us", "100", "--period-ms", "0", "--check");
            int rc;
            long until = System.nanoTime() + 20_000_000_000L;
            while (app.process().isAlive() && System.nanoTime() < until) {
                if (fake.accept() != null) {
                    connected.incrementAndGet(); // the fake node would answer OK with its gates held
                }
                Thread.sleep(5);
            }
            rc = app.waitFor(1);
            List<String> said = app.stderr().lines().filter(l -> l.startsWith("xq")).toList();
            boolean named = said.size() == 1 && said.getFirst().contains("refusing the node at " + sock)
                    && said.getFirst().contains("may be written by group or others") && said.getFirst().contains("running unscheduled");
            boolean ran = rc == 0 && app.stdout().contains("\"check\":\"ok\"");
            row("issue 41, item 2: a node's socket in a folder any user may write to (mode 0777: another user's listener "
                            + "could be there) answers a process under the interposer",
                    "the process " + (ran ? "ran unscheduled, results correct" : "FAILED (rc " + rc + ")") + "; it connected "
                            + connected.get() + " times; stderr: " + said,
                    ran ? 0 : 1, 0, !named || connected.get() != 0);
        }
    }

    @Test
    public void d03AQueueFloodFromOneProcess() throws Exception {
        scheduler.selectPolicy("hpf");
        scheduler.resetStats();
        Load alone = load(2, 20);
        double aloneP99 = scheduler.stats().decisionP99Micros();
        long trips = scheduler.stats().watchdogTrips();
        int before = xq.queues().size();
        long me = ProcessHandle.current().pid();
        List<Probes.Wire> sessions = new ArrayList<>();
        int opened = 0;
        long t0 = System.nanoTime();
        try {
            for (int s = 0; s < 16; s++) {
                Probes.Wire w = new Probes.Wire(hostSocket());
                sessions.add(w);
                String ok = w.send("HELLO 1 " + me + " flood" + s + " -\n").line(5_000);
                assertTrue("HELLO answered: " + ok, ok != null && ok.startsWith("OK "));
                StringBuilder lines = new StringBuilder();
                for (int slot = 0; slot < 64; slot++) {
                    lines.append("STREAM ").append(slot).append(" a").append(slot).append(" 0 0 0 0 s").append(slot).append('\n');
                }
                w.send(lines.toString());
                for (int slot = 0; slot < 64; slot++) {
                    String q = w.line(10_000);
                    if (q != null && q.startsWith("Q ")) {
                        opened++;
                    }
                }
            }
            long openMs = (System.nanoTime() - t0) / 1_000_000;
            scheduler.resetStats();
            Load load = load(2, 20);
            SchedulerControl.SchedulerStats st = scheduler.stats();
            String active = scheduler.activePolicy();
            for (Probes.Wire w : sessions) {
                w.close();
            }
            long t1 = System.nanoTime();
            boolean gone = XqNode.eventually(30_000, () -> xq.queues().size() <= before + queues.size());
            long closeMs = (System.nanoTime() - t1) / 1_000_000;
            long tripped = scheduler.stats().watchdogTrips() - trips;
            row("issue 41, item 3: one process opens 16 sessions x 64 streams (" + opened + " queues) beside a tenant",
                    "opened in " + openMs + " ms; the tenant's decisions p99 " + Math.round(aloneP99) + " us alone, "
                            + Math.round(st.decisionP99Micros()) + " us beside them (this machine's scheduling noise included), policy active: " + active + ", watchdog trips " + tripped + "; all closed " + (gone ? "in "
                            + closeMs + " ms" : "NOT within 30 s"),
                    load.total - load.ended + alone.total - alone.ended, 0, opened != 16 * 64 || !active.equals("hpf") || tripped != 0 || !gone);
        } finally {
            for (Probes.Wire w : sessions) {
                w.close();
            }
        }
    }

    @Test
    public void d04aAFrozenNodeLetsItsHeldProcessGo() throws Exception {
        Path jar = Path.of(System.getProperty("xq.node.jar", "../node/target/xq-node.jar")).toAbsolutePath().normalize();
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "xqfrz");
        Path sock = dir.resolve("node.sock");
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        Path hd = Files.createDirectory(dir.resolve("hd"), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-Dxq.home=" + Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize(), "-Dxq.host.socket=" + sock,
                "-Dxq.http.port=" + port, "-jar", jar.toString(), "--bundles", hd.toString(), "serve")
                .redirectErrorStream(true).redirectOutput(dir.resolve("node.log").toFile()).start();
        try {
            waitFor("the frozen node's node serves", () -> Files.exists(sock) && answers(port));
            Path work = Files.createTempDirectory(Path.of(System.getProperty("xq.itest.work", "/tmp")).toAbsolutePath(), "frz");
            long started = System.nanoTime();
            FakeApps.App app = FakeApps.start(work, sock, work.resolve("gpu.lock"), Map.of("XQ_NAME", "held"),
                    "--seconds", "3", "--kernels", "2", "--us", "200", "--period-ms", "0", "--check");
            waitFor("its queue is in the node", () -> {
                try {
                    return Probes.http(port, "GET", "/api/v1/queues", null, 2_000).body().contains("\"held/default\"");
                } catch (java.io.IOException e) {
                    return false;
                }
            });
            Probes.Answer held = Probes.http(port, "POST", "/api/v1/suspend", "{\"queue\":\"held/default\"}", 5_000);
            // held past its 3 s: once let go it finishes the task it is in and exits
            Thread.sleep(Math.max(300, 3_500 - (System.nanoTime() - started) / 1_000_000));
            boolean stillRunning = app.process().isAlive();
            Probes.Ran stop = Probes.run(List.of("kill", "-STOP", Long.toString(node.pid())), 10);
            long t0 = System.nanoTime();
            boolean ended = app.process().waitFor(15, java.util.concurrent.TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            Probes.run(List.of("kill", "-CONT", Long.toString(node.pid())), 10);
            int rc = ended ? app.process().exitValue() : -1;
            if (!ended) {
                app.process().destroyForcibly();
            }
            boolean ok = rc == 0 && app.stdout().contains("\"check\":\"ok\"");
            row("issue 41, item 4: the node freezes (SIGSTOP) while it holds a process's queue (suspended by the operator)",
                    "suspend answered " + held.status() + ", the process was " + (stillRunning ? "held" : "ALREADY DONE")
                            + "; frozen (kill rc " + stop.rc() + "): the process " + (ended ? "let go and finished " + ms
                            + " ms later" : "STILL HELD after 15 s") + (ok ? ", results correct" : ", FAILED: " + app.stderr()),
                    ok ? 0 : 1, 0, held.status() != 200 || !stillRunning || !ended || ms > 5_000);
        } finally {
            node.destroyForcibly();
            node.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    public void d04bAProcessDiesWhileItsChildHoldsItsSocket() throws Exception {
        String python = Probes.python();
        if (python == null) {
            row("issue 41, item 4 (the node's half): a process dies while a child holds its socket",
                    "not tried here: python3 is not on the PATH (ProcessLivenessTest holds it in the host's tests)", 0, 0, false);
            return;
        }
        String holder = """
                import os, socket, sys, time
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(b"HELLO 1 %d orphaned -\\nSTREAM 0 7f01 0 0 0 0 s0\\n" % os.getpid())
                got = b""
                while got.count(b"\\n") < 2:
                    got += s.recv(512)
                if os.fork() == 0:
                    s.settimeout(30)
                    try:
                        while s.recv(512):
                            pass
                    except Exception:
                        pass
                    os._exit(0)
                print(got.decode().replace("\\n", " "), flush=True)
                time.sleep(60)
                """;
        Process p = new ProcessBuilder(python, "-c", holder, hostSocket().toString()).redirectErrorStream(true).start();
        try {
            String first = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
            long pid = p.pid();
            boolean registered = first != null && first.startsWith("OK ") && XqNode.eventually(5_000,
                    () -> xq.queues().stream().anyMatch(q -> q.status().pid() == pid));
            p.destroyForcibly(); // SIGKILL: its child keeps the socket
            p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            boolean gone = XqNode.eventually(5_000, () -> xq.queues().stream().noneMatch(q -> q.status().pid() == pid));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            row("issue 41, item 4 (the node's half): a process dies (SIGKILL) while a child it forked holds its socket",
                    (registered ? "registered" : "NOT REGISTERED (" + first + ")") + "; its queue " + (gone ? "closed " + ms
                            + " ms after its death" : "STILL OPEN after 5 s"),
                    0, 0, !registered || !gone || ms > 2_000);
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    public void d05AConnectionFlood() throws Exception {
        long old = runtimeId();
        org.osgi.service.cm.Configuration http = cm.getConfiguration("dev.xq.http", "?");
        http.update(dict(Map.of("maxConnections", "16")));
        try {
            int port = httpPort(old);
            // 16 connections that hold their place: each sends a request body a byte at a time (never idle, never
            // done, until the body's 10 s are up), then 32 more that only ask
            List<java.net.Socket> holders = new ArrayList<>();
            List<java.net.Socket> more = new ArrayList<>();
            try {
                for (int i = 0; i < 16; i++) {
                    java.net.Socket s = new java.net.Socket();
                    holders.add(s);
                    s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 5_000);
                    s.getOutputStream().write(("POST /api/v1/policy HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Type: "
                            + "application/json\r\nContent-Length: 60000\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
                }
                for (int i = 0; i < 32; i++) {
                    java.net.Socket s = new java.net.Socket();
                    more.add(s);
                    s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 5_000); // the kernel's queue takes it
                    s.getOutputStream().write(("GET /api/v1/policy HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                }
                long shellMs = 0;
                // a holder the node closed (caught in the middle of its accept at the limit, or its place
                // taken by a connection of this test that was still closing): its place goes to one of the 32
                boolean[] closedByNode = new boolean[holders.size()];
                int holdersClosed = 0;
                for (int t = 0; t < 5; t++) {
                    for (int i = 0; i < holders.size(); i++) {
                        if (closedByNode[i]) {
                            continue;
                        }
                        try {
                            holders.get(i).getOutputStream().write(' ');
                        } catch (java.io.IOException closed) {
                            closedByNode[i] = true;
                            holdersClosed++;
                        }
                    }
                    long t0 = System.nanoTime();
                    shell("xq:queues");
                    shellMs = Math.max(shellMs, (System.nanoTime() - t0) / 1_000_000);
                    Thread.sleep(300);
                }
                int servedBeyond = 0;
                for (java.net.Socket s : more) {
                    if (s.getInputStream().available() > 0) {
                        servedBeyond++;
                    }
                }
                boolean said = XqNode.eventually(5_000, () -> log.stream().anyMatch(l -> l.contains("16 connections are open")
                        && l.contains("maxConnections")));
                Load load = load(1, 5);
                // the holders go: the 32 that waited are served (one caught in the middle of its accept was closed)
                for (java.net.Socket s : holders) {
                    s.close();
                }
                long t1 = System.nanoTime();
                int servedAfter = 0;
                for (java.net.Socket s : more) {
                    s.setSoTimeout((int) Math.max(1, 10_000 - (System.nanoTime() - t1) / 1_000_000));
                    try {
                        byte[] b = new byte[12];
                        int n = s.getInputStream().readNBytes(b, 0, 12);
                        if (n == 12 && new String(b, StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200")) {
                            servedAfter++;
                        }
                    } catch (java.io.IOException closedOrLate) {
                        // not served
                    }
                }
                long afterMs = (System.nanoTime() - t1) / 1_000_000;
                for (java.net.Socket s : more) {
                    s.close();
                }
                boolean fresh = XqNode.eventually(10_000, () -> answers(port));
                row("issue 41, item 5: one local user holds 16 connections to the HTTP API (maxConnections 16) and opens 32 more",
                        servedBeyond + " of the 32 beyond the limit served while the 16 held (1.5 s)"
                                + (holdersClosed > 0 ? " (" + holdersClosed + " of the 16 closed by the node)" : "") + "; xq:queues took at most " + shellMs
                                + " ms meanwhile; " + (said ? "the limit said in the log" : "NOT SAID") + "; once the 16 closed, "
                                + servedAfter + " of the 32 served within " + afterMs + " ms; a fresh client " + (fresh ? "answered"
                                : "NOT ANSWERED within 10 s"),
                        load.total - load.ended, 0, servedBeyond > holdersClosed || holdersClosed > 1 || servedAfter < 31 || !said
                                || !fresh || shellMs > 1_000);
            } finally {
                for (java.net.Socket s : holders) {
                    s.close();
                }
                for (java.net.Socket s : more) {
                    s.close();
                }
            }
        } finally {
            long capped = runtimeId();
            http.delete();
            httpPort(capped);
        }
    }

    @Test
    public void d05BOneUsersConnectionsPastItsCap() throws Exception {
        String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : null;
        String setpriv = Probes.onPath("setpriv");
        String what = "issue 41, item 5: another local user (uid " + NOBODY + ") opens 40 connections to the HTTP API "
                + "(maxConnectionsPerUser 16, penConnections 0: refused ones closed at once) and holds them";
        if (Probes.euid() != 0 || python == null || setpriv == null) {
            row(what, "not tried here: it needs root, setpriv and python3 to act as another user; ConnectionCapTest holds the rule", 0,
                    0, false);
            return;
        }
        long old = runtimeId();
        org.osgi.service.cm.Configuration http = cm.getConfiguration("dev.xq.http", "?");
        http.update(dict(Map.of("maxConnectionsPerUser", "16", "penConnections", "0")));
        Process p = null;
        try {
            int port = httpPort(old);
            String script = """
                    import socket, sys, time
                    port = int(sys.argv[1])
                    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
                    time.sleep(2)
                    closed = 0
                    for s in socks:
                        s.setblocking(False)
                        try:
                            if s.recv(1) == b"":
                                closed += 1
                        except BlockingIOError:
                            pass
                        except OSError:
                            closed += 1
                    print("open", len(socks) - closed, "closed", closed, flush=True)
                    sys.stdin.read()
                    """;
            p = new ProcessBuilder(setpriv, "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", python, "-c", script,
                    Integer.toString(port)).redirectErrorStream(true).start();
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    StandardCharsets.US_ASCII));
            String line = out.readLine();
            long t0 = System.nanoTime();
            boolean answered = answers(port);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            boolean said = XqNode.eventually(5_000, () -> log.stream().anyMatch(l -> l.contains("local user uid " + NOBODY)
                    && l.contains("maxConnectionsPerUser 16")));
            boolean capped = line != null && line.equals("open 16 closed 24");
            Load load = load(1, 5);
            row(what, "theirs: " + line + "; the node's own user " + (answered ? "answered in " + ms + " ms" : "NOT ANSWERED")
                            + " meanwhile; " + (said ? "the cap said in the log with the uid" : "NOT SAID"),
                    load.total - load.ended, 0, !capped || !answered || !said);
        } finally {
            if (p != null) {
                p.destroyForcibly();
                p.waitFor();
            }
            long capped = runtimeId();
            http.delete();
            httpPort(capped);
        }
    }

    /**
     * As d05B with the pen on (the default): the 24 connections past the user's cap are held open and
     * never answered, so a flooding client waits instead of reconnecting at once (docs/http.md,
     * "Refusals"). Each of the 40 sends a request: 16 are answered, 24 stay silent, none is closed.
     */
    @Test
    public void d05COneUsersConnectionsPastItsCapAreHeldUnanswered() throws Exception {
        String python = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : null;
        String setpriv = Probes.onPath("setpriv");
        String what = "issue 41 (connection flood): another local user (uid " + NOBODY + ") opens 40 connections to the HTTP API "
                + "(maxConnectionsPerUser 16, the pen on) and sends a request on each";
        if (Probes.euid() != 0 || python == null || setpriv == null) {
            row(what, "not tried here: it needs root, setpriv and python3 to act as another user; PenTest and ConnectionCapTest hold "
                    + "the rule", 0, 0, false);
            return;
        }
        long old = runtimeId();
        org.osgi.service.cm.Configuration http = cm.getConfiguration("dev.xq.http", "?");
        http.update(dict(Map.of("maxConnectionsPerUser", "16")));
        Process p = null;
        try {
            int port = httpPort(old);
            String script = """
                    import socket, sys, time
                    port = int(sys.argv[1])
                    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
                    time.sleep(2)
                    for s in socks:
                        try:
                            s.sendall(b"GET /api/v1/policy HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        except OSError:
                            pass
                    time.sleep(2)
                    answered = silent = closed = 0
                    for s in socks:
                        s.setblocking(False)
                        try:
                            d = s.recv(65536)
                            if d:
                                answered += 1
                            else:
                                closed += 1
                        except BlockingIOError:
                            silent += 1
                        except OSError:
                            closed += 1
                    print("answered", answered, "silent", silent, "closed", closed, flush=True)
                    sys.stdin.read()
                    """;
            p = new ProcessBuilder(setpriv, "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", python, "-c", script,
                    Integer.toString(port)).redirectErrorStream(true).start();
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    StandardCharsets.US_ASCII));
            String line = out.readLine();
            long t0 = System.nanoTime();
            boolean answered = answers(port);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            boolean said = XqNode.eventually(5_000, () -> log.stream().anyMatch(l -> l.contains("local user uid " + NOBODY)
                    && l.contains("held unread")));
            boolean held = line != null && line.equals("answered 16 silent 24 closed 0");
            Load load = load(1, 5);
            row(what, "theirs: " + line + "; the node's own user " + (answered ? "answered in " + ms + " ms" : "NOT ANSWERED")
                            + " meanwhile; " + (said ? "the hold said in the log with the uid" : "NOT SAID"),
                    load.total - load.ended, 0, !held || !answered || !said);
        } finally {
            if (p != null) {
                p.destroyForcibly();
                p.waitFor();
            }
            long capped = runtimeId();
            http.delete();
            httpPort(capped);
        }
    }

    @Test
    public void d06SlowRequestBodies() throws Exception {
        int port = httpPort(-2);
        List<java.net.Socket> slow = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                java.net.Socket s = new java.net.Socket("127.0.0.1", port);
                slow.add(s);
                s.getOutputStream().write(("POST /api/v1/policy HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Type: "
                        + "application/json\r\nContent-Length: 60000\r\n\r\n{\"na").getBytes(StandardCharsets.US_ASCII));
            }
            long worst = 0;
            long start = System.nanoTime();
            int metrics = 0;
            List<java.net.Socket> coming = new ArrayList<>(slow);
            // a byte now and then on each (never idle, never done) until the node answers them, 20 s at most
            while (!coming.isEmpty() && System.nanoTime() - start < 20_000_000_000L) {
                long t0 = System.nanoTime();
                Probes.Answer a = Probes.http(port, "GET", "/metrics", null, 5_000);
                worst = Math.max(worst, (System.nanoTime() - t0) / 1_000_000);
                if (a.status() == 200) {
                    metrics++;
                }
                for (java.util.Iterator<java.net.Socket> it = coming.iterator(); it.hasNext();) {
                    java.net.Socket s = it.next();
                    if (s.getInputStream().available() > 0) {
                        it.remove();
                        continue;
                    }
                    try {
                        s.getOutputStream().write('m');
                    } catch (java.io.IOException closed) {
                        it.remove();
                    }
                }
                Thread.sleep(400);
            }
            int timedOut = 0;
            String first = "";
            for (java.net.Socket s : slow) {
                Probes.Answer a = Probes.read(s, 2_000);
                if (a.status() == 408) {
                    timedOut++;
                    first = a.body();
                }
            }
            long took = (System.nanoTime() - start) / 1_000_000;
            row("issue 41, item 6: 20 connections send a 60000-byte body a byte at a time; /metrics asked meanwhile",
                    metrics + " /metrics answered, the slowest in " + worst + " ms; " + timedOut + "/20 slow bodies answered 408 "
                            + "within " + took + " ms (" + shorten(first) + ")",
                    0, 0, worst > 1_000 || timedOut != 20 || !first.contains("not received within 10 s"));
        } finally {
            for (java.net.Socket s : slow) {
                s.close();
            }
        }
    }

    @Test
    public void d07OneUserTakesEverySession() throws Exception {
        org.osgi.service.cm.Configuration host = cm.getConfiguration("dev.xq.host", "?");
        long before = hostId();
        host.update(dict(Map.of("maxSessionsPerUser", "4")));
        List<Probes.Wire> hog = new ArrayList<>();
        try {
            long me = ProcessHandle.current().pid();
            String expected = "ERR user " + Probes.euid() + " has 4 sessions already (maxSessionsPerUser 4)";
            // the host restarts with the new configuration, and registers once it listens: tried on
            // that one only (a round that began on the old host, then retried, raced the node's end of
            // the round's sessions, counted against the next round: CI saw 3 served, a silent fifth)
            waitFor("the process host restarts with maxSessionsPerUser 4", () -> {
                long id = hostId();
                return id != -1 && id != before;
            });
            int ok = 0;
            for (int i = 0; i < 4; i++) {
                Probes.Wire w = new Probes.Wire(hostSocket());
                hog.add(w);
                String a = w.send("HELLO 1 " + me + " hog" + i + " -\n").line(5_000);
                if (a != null && a.startsWith("OK ")) {
                    ok++;
                }
            }
            Probes.Wire fifth = new Probes.Wire(hostSocket());
            hog.add(fifth);
            String refused = fifth.line(2_000); // a connection counts from its accept: no HELLO needed to be refused
            boolean closed = fifth.closedWithin(2_000);
            row("issue 41, item 7: one user opens sessions until none is left (maxSessionsPerUser 4)",
                    ok + " sessions served; the next connection got '" + refused + "'" + (closed ? " and was closed" : ", NOT CLOSED"),
                    0, 0, ok != 4 || !expected.equals(refused) || !closed);
        } finally {
            for (Probes.Wire w : hog) {
                w.close();
            }
            long capped = hostId();
            host.delete();
            // the host restarts without the cap: waited for by its new registration, not only by an
            // answer (the capped host still answered, then went away under the next test: CI saw
            // d08 find no socket)
            waitFor("the process host restarts without maxSessionsPerUser", () -> {
                long id = hostId();
                return id != -1 && id != capped;
            });
            waitFor("the host serves again", () -> {
                try (Probes.Wire w = new Probes.Wire(hostSocket())) {
                    String a = w.send("HELLO 1 " + ProcessHandle.current().pid() + " probe -\n").line(2_000);
                    return a != null && a.startsWith("OK ");
                } catch (java.io.IOException notYet) {
                    return false;
                }
            });
        }
    }

    @Test
    public void d08StreamsOnDevicesTheNodeDoesNotHave() throws Exception {
        long me = ProcessHandle.current().pid();
        String far;
        try (Probes.Wire w = new Probes.Wire(hostSocket())) {
            w.send("HELLO 1 " + me + " faraway -\n").line(5_000);
            far = w.send("STREAM 0 a 2147483647 0 0 0 default\n").line(5_000);
        }
        // 130 devices the node has no driver for (the sim node takes ordinals up to 255): each is a series of /metrics
        List<Probes.Wire> ws = new ArrayList<>();
        int port = httpPort(-2);
        try {
            for (int s = 0; s < 3; s++) {
                Probes.Wire w = new Probes.Wire(hostSocket());
                ws.add(w);
                w.send("HELLO 1 " + me + " devices" + s + " -\n").line(5_000);
                for (int i = 0; i < 44; i++) {
                    w.send("STREAM " + i + " b" + i + " " + (100 + s * 44 + i) + " 0 0 0 s" + i + "\n").line(5_000);
                }
            }
            Probes.http(port, "GET", "/metrics", null, 5_000); // seen while open
        } finally {
            for (Probes.Wire w : ws) {
                w.close();
            }
        }
        XqNode.eventually(5_000, () -> xq.queues().stream().noneMatch(q -> q.status().name().startsWith("devices")));
        String metrics = Probes.http(port, "GET", "/metrics", null, 5_000).body();
        long series = metrics.lines().filter(l -> l.startsWith("xq_device_busy_seconds_total{") && l.contains("device=\"cuda")).count();
        boolean named = far != null && far.equals("ERR device 2147483647 is out of range; allowed: a CUDA ordinal in [0, 255]");
        row("issue 41, item 8: STREAM on cuda2147483647; then 132 streams on 132 devices no driver lists, closed",
                "'" + far + "'; /metrics keeps " + series + " device series of them (bound 64)", 0, 0, !named || series > 64);
    }

    @Test
    public void d09AChildSpeaksForItsParentThatExited() throws Exception {
        String python = Probes.python();
        if (python == null) {
            row("issue 41, item 9: a child says HELLO with the pid of its parent, which connected and exited",
                    "not tried here: python3 is not on the PATH (ProcessLivenessTest holds it in the host's tests)", 0, 0, false);
            return;
        }
        String orphan = """
                import os, socket, sys, time
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                parent = os.getpid()
                if os.fork() != 0:
                    os._exit(0)
                end = time.time() + 10
                while os.path.exists("/proc/%d/cmdline" % parent) and time.time() < end:
                    try:
                        with open("/proc/%d/stat" % parent) as f:
                            if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                                break
                    except OSError:
                        break
                    time.sleep(0.01)
                try:
                    s.sendall(b"HELLO 1 %d orphan -\\n" % parent)
                except OSError:
                    pass  # the host saw the exit first, answered and shut the socket: its answer is still to be read
                s.settimeout(10)
                print(s.recv(512).decode(errors="replace").strip(), flush=True)
                """;
        Process p = new ProcessBuilder(python, "-c", orphan, hostSocket().toString()).redirectErrorStream(true).start();
        long parent = p.pid();
        String answer = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
        boolean refused = answer.startsWith("ERR pid " + parent + " is not alive");
        row("issue 41, item 9: a child says HELLO with the pid of its parent, which connected and exited",
                "answered '" + shorten(answer) + "'", 0, 0, !refused);
    }

    @Test
    public void d10ATokenInAFileOthersMayRead() throws Exception {
        Path folder = Path.of(ctx.getProperty("felix.fileinstall.dir"));
        Path cfg = folder.resolve("dev.xq.http.cfg");
        String token = "hostile-suite-token-0123456789";
        long old = runtimeId();
        int before = log.size();
        // tokenOnLoopback: every request needs the token, so whether it is used shows from outside
        Files.writeString(cfg, "token=" + token + "\ntokenOnLoopback=true\n");
        Files.setPosixFilePermissions(cfg, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        try {
            Supplier<java.util.stream.Stream<String>> since = () -> logSince(before).stream();
            boolean said = XqNode.eventually(10_000, () -> since.get().anyMatch(l -> l.startsWith("ERROR")
                    && l.contains("the token is not used: its file " + cfg + " has mode 0644") && l.contains("chmod 600")));
            boolean notStarted = XqNode.eventually(10_000, () -> since.get().anyMatch(l -> l.startsWith("ERROR")
                    && l.contains("HTTP API not started") && l.contains("tokenOnLoopback is set but no token is (the one configured is not used")));
            // the fix the line gives: chmod 600 (Config Admin hears nothing of it: the node looks at the mode itself)
            Files.setPosixFilePermissions(cfg, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            int port = httpPort(old);
            int without = Probes.http(port, "GET", "/api/v1/policy", null, 5_000).status();
            boolean leaked = log.stream().anyMatch(l -> l.contains(token));
            row("issue 41, item 10: the HTTP API's token in dev.xq.http.cfg at mode 0644 (the usual umask), with tokenOnLoopback",
                    (said ? "the token not used, one error naming the file, its mode and chmod 600" : "NOT SAID") + "; "
                            + (notStarted ? "the API not started, saying why" : "THE API STARTED") + "; after chmod 600 alone "
                            + "the token is used (a request without it: " + without + ")" + (leaked ? "; TOKEN LOGGED" : ""),
                    0, 0, !said || !notStarted || without != 401 || leaked);
        } finally {
            long tokened = runtimeId();
            Files.deleteIfExists(cfg);
            httpPort(tokened);
        }
    }

    @Test
    public void d11TheSmallerOnes() throws Exception {
        List<String> outcomes = new ArrayList<>();
        boolean silent = false;
        long me = ProcessHandle.current().pid();
        try (Probes.Wire w = new Probes.Wire(hostSocket())) {
            String a = w.send("HELLO 1 " + me + " loud 99999999\n").line(5_000);
            boolean ok = "ERR priority 99999999 is out of range; allowed: '-' or a whole number in [-1000, 1000]".equals(a);
            outcomes.add("HELLO priority 99999999: " + (ok ? "refused by name" : "'" + a + "'"));
            silent |= !ok;
        }
        XQueue q = queue("small41", 1);
        int port = httpPort(-2);
        Probes.Answer e3 = Probes.http(port, "POST", "/hint", "{\"hint_type\":1,\"handle\":" + q.status().handle() + ",\"priority\":1e3}",
                5_000);
        boolean e3ok = e3.status() == 400 && e3.body().contains("1e3 is not written as an integer");
        outcomes.add("xcli hint priority 1e3: " + (e3ok ? "400 naming it" : e3.status() + " " + shorten(e3.body())));
        silent |= !e3ok || q.hints().contains(new Hint.Priority(1000));
        String big = "{\"name\":\"" + "x".repeat(69_980) + "\"}";
        Probes.Answer tooBig = Probes.http(port, "POST", "/api/v1/policy", big, 5_000);
        boolean bigOk = tooBig.status() == 413 && tooBig.body().contains("is over the limit of 65536 bytes (PID dev.xq.http, maxBodyBytes)");
        outcomes.add("a 70000-byte body: " + (bigOk ? "XQ's JSON 413 naming the limit" : tooBig.status() + " " + shorten(tooBig.body())));
        silent |= !bigOk;
        // a second node on this machine, on this node's socket and port
        Path jar = Path.of(System.getProperty("xq.node.jar", "../node/target/xq-node.jar")).toAbsolutePath().normalize();
        Path hd = Files.createTempDirectory(Path.of("/tmp"), "xqsecond", java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        Probes.Ran second = Probes.run(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Dxq.home=" + Path.of(System.getProperty("xq.home", "..")).toAbsolutePath().normalize(),
                "-Dxq.host.socket=" + hostSocket(), "-Dxq.http.port=" + port, "-jar", jar.toString(), "--bundles", hd.toString(), "serve"), 60);
        List<String> lines = second.out().lines().toList();
        boolean one = second.rc() == 1 && lines.size() == 1 && lines.getFirst().contains("the process socket " + hostSocket()
                + " accepts connections") && lines.getFirst().contains("127.0.0.1:" + port + " is in use");
        outcomes.add("a second node on this node's socket and port: " + (one ? "exit 1, one line naming both"
                : "exit " + second.rc() + ": " + shorten(second.out().replace('\n', '|'))));
        silent |= !one;
        Load load = load(1, 5);
        row("issue 41, item 11: HELLO priority 99999999, JSON 1e3, a body over maxBodyBytes, a second node on the same machine",
                String.join("; ", outcomes), load.total - load.ended, 0, silent);
    }

    // ------------------------------------------------------------------ helpers

    /** Commands submitted by application threads of their own, and how many ended. */
    private record Load(int total, int ended, boolean submittersFree) {
    }

    /**
     * Submits {@code perQueue} commands on each of {@code n} fresh queues of two priorities, each
     * queue from a thread of its own, and waits (15 s at most) until they end.
     */
    private Load load(int n, int perQueue) throws Exception {
        List<Submission> subs = new CopyOnWriteArrayList<>();
        List<Thread> apps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int prio = i;
            // created on the application's thread too: creating a queue posts an event, and a
            // thread held there must be an application's, never the test's own
            apps.add(Thread.ofPlatform().name("hostile-app-" + i).start(() -> {
                XQueue q = queue("load-" + prio, prio);
                for (int k = 0; k < perQueue; k++) {
                    subs.add(q.submit(Command.spin(200)));
                    // paced as a tenant would be: events farther apart than a storm's are decided
                    // on the thread that posts them when the policy may decide there
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }));
        }
        boolean free = true;
        for (Thread t : apps) {
            t.join(5_000);
            free &= !t.isAlive();
        }
        long end = System.nanoTime() + 15_000_000_000L;
        int ended = 0;
        for (Submission s : subs) {
            try {
                s.stage().toCompletableFuture().get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                ended++;
            } catch (java.util.concurrent.ExecutionException e) {
                ended++; // ended with a cause
            } catch (java.util.concurrent.TimeoutException notEnded) {
                // counted as lost
            }
        }
        return new Load(n * perQueue, ended, free);
    }

    private XQueue queue(String name, int priority) {
        XQueue q = xq.create(QueueOptions.on("sim0").named(name).with(new Hint.Priority(priority)).with(QueueConfig.xsched(4, 2)));
        queues.add(q);
        return q;
    }

    /** Threads XQ does not own that are inside {@code policy} now. */
    private static int foreignThreadsIn(Class<?> policy) {
        int n = 0;
        for (var e : Thread.getAllStackTraces().entrySet()) {
            String name = e.getKey().getName();
            if (name.startsWith("xq-scheduler-") || name.equals("xq-policy-warmup")) {
                continue; // XQ's own: the watchdog replaces a stuck loop thread; a trial thread is XQ's
            }
            if (inside(e.getValue(), policy)) {
                n++;
            }
        }
        return n;
    }

    private static int threadsIn(Class<?> policy) {
        return (int) Thread.getAllStackTraces().values().stream().filter(st -> inside(st, policy)).count();
    }

    private static boolean inside(StackTraceElement[] stack, Class<?> policy) {
        for (StackTraceElement f : stack) {
            if (f.getClassName().equals(policy.getName())) {
                return true;
            }
        }
        return false;
    }

    private String setAside(String name) {
        return scheduler.policies().stream().filter(p -> p.name().equals(name)).map(SchedulerControl.PolicyInfo::setAside)
                .findFirst().orElse("");
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : ctx.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError(symbolicName + " not installed");
    }

    private static Dictionary<String, Object> dict(Map<String, Object> m) {
        return new Hashtable<>(m);
    }

    private static void waitFor(String what, java.util.function.BooleanSupplier c) throws InterruptedException {
        assertTrue(what, XqNode.eventually(10_000, c));
    }

    private static String shorten(String s) {
        return s.length() > 90 ? s.substring(0, 90) + "..." : s;
    }

    /** Adds a row and fails the test when the row breaks a rule (after adding it: the table shows every row). */
    private static void row(String tried, String outcome, int lost, int held, boolean silent) {
        ROWS.add(new String[] {tried, outcome, Integer.toString(lost), Integer.toString(held), silent ? "YES" : "no"});
        writeTable();
        String[] r = ROWS.getLast();
        System.out.println("hostile suite: " + r[0] + "\n    outcome: " + r[1] + "\n    lost: " + r[2] + ", foreign threads held: " + r[3]
                + ", silent: " + r[4]);
        assertEquals(tried + ": commands lost", 0, lost);
        assertEquals(tried + ": threads XQ does not own held inside a policy", 0, held);
        assertTrue(tried + ": silent or wrong: " + outcome, !silent);
    }

    private static void writeTable() {
        StringBuilder t = new StringBuilder("hostile-input suite (issue 18): tried | outcome | lost | foreign threads held | silent\n");
        for (String[] r : ROWS) {
            t.append("- ").append(r[0]).append("\n    outcome: ").append(r[1]).append("\n    lost: ").append(r[2])
                    .append(", foreign threads held: ").append(r[3]).append(", silent: ").append(r[4]).append('\n');
        }
        try {
            Path out = Path.of(System.getProperty("xq.itest.target", "target"), "hostile-suite.txt");
            Files.createDirectories(out.getParent());
            Files.writeString(out, t.toString(), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            System.err.println("hostile suite: could not write its table: " + e);
        }
    }
}
