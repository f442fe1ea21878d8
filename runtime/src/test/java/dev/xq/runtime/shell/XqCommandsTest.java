package dev.xq.runtime.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.Hint;
import dev.xq.api.PreemptionLevel;
import dev.xq.api.QueueConfig;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import dev.xq.runtime.engine.XqCore;
import dev.xq.runtime.log.RuntimeLog;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Bad input in the shell and the API: a clear message naming value and range, and no change. */
class XqCommandsTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE);
    private XqCommands shell;
    private XQueue q;

    @BeforeEach
    void setUp() {
        core.addDriver(new XpuDriver() {
            @Override
            public String platform() {
                return "idle";
            }

            @Override
            public String status() {
                return "1 device";
            }

            @Override
            public List<DeviceDescriptor> devices() {
                return List.of(new DeviceDescriptor("d0", "idle device", PreemptionLevel.DEACTIVATE, 4, 1L << 30, Set.of("spin"), Map.of()));
            }

            @Override
            public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
                return new HwQueue() {
                    @Override
                    public String platform() {
                        return "idle";
                    }

                    @Override
                    public String deviceId() {
                        return "d0";
                    }

                    @Override
                    public java.util.Optional<dev.xq.hal.spi.Preemption> preemption() {
                        return java.util.Optional.of(new dev.xq.hal.spi.Preemption() {
                            @Override
                            public PreemptionLevel level() {
                                return PreemptionLevel.DEACTIVATE;
                            }

                            @Override
                            public List<dev.xq.hal.spi.HwCommand> deactivate() {
                                return List.of();
                            }

                            @Override
                            public void reactivate() {
                            }

                            @Override
                            public void interrupt() {
                                throw new UnsupportedOperationException("level 2 only");
                            }

                            @Override
                            public void restore() {
                                throw new UnsupportedOperationException("level 2 only");
                            }
                        });
                    }

                    @Override
                    public void check(dev.xq.api.Command command) {
                    }

                    @Override
                    public void launch(dev.xq.hal.spi.HwCommand command) {
                    }

                    @Override
                    public void close() {
                    }
                };
            }
        });
        shell = new XqCommands(core, core);
        q = core.create(QueueOptions.on("d0").named("fg").with(new Hint.Priority(2)));
    }

    @AfterEach
    void tearDown() {
        core.stop();
    }

    private static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "'" + e.getMessage() + "' should contain '" + p + "'");
        }
    }

    @Test
    void hintOutOfRangeNamesValueAndRangeAndKeepsTheOldHint() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "priority", "5000")), "5000", "[-1000, 1000]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "colour", "red")), "'colour'", "priority, deadline");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "utilization", "0")), "0%", "[1, 100]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("fg", "deadline", "soon")), "soon", "not a whole number");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.hint("nope", "priority", "1")), "'nope'", "fg");
        assertEquals(List.of(new Hint.Priority(2)), q.hints());
        assertTrue(shell.hint("fg", "priority", "7").contains("priority=7"));
        assertEquals(List.of(new Hint.Priority(7)), q.hints());
    }

    @Test
    void badConfigNamesValueAndRangeAndKeepsTheOldConfig() {
        QueueConfig before = q.status().config();
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "threshold", "0")), "threshold 0", "[1, 1048576]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "batch", "99")), "batch 99", "threshold=16");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "level", "4")), "level 4", "1 (block)");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "window", "-5")), "window -5", "[0, 60000000]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.config("fg", "speed", "9")), "'speed'", "level, threshold, batch, window");
        assertEquals(before, q.status().config());
        shell.config("fg", "window", "250");
        assertEquals(250, q.status().config().windowMicros());
    }

    @Test
    void policyAndTopRefuseWhatTheyDoNotKnow() {
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.policy("fifo")), "'fifo'", "native");
        assertEquals("native", core.selectedPolicy());
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.top("--fast")), "--fast", "--once");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.top(false, "5", "")), "--interval 5", "[100, 60000]");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> shell.top(false, "1000", "none")), "'none'", "not a whole number");
    }

    @Test
    void tablesShowDevicesQueuesAndPolicies() throws Exception {
        assertTrue(shell.devices().contains("d0"), shell.devices());
        assertTrue(shell.devices().contains("idle") && shell.devices().contains("1 device"));
        assertTrue(shell.queues().contains("fg") && shell.queues().contains("priority=2"), shell.queues());
        assertTrue(shell.policies().contains("native"));
        assertTrue(shell.top(true, "1000", "").contains("policy native"));
        shell.suspend("fg");
        assertTrue(q.status().suspendedByApp());
        shell.resume(String.valueOf(q.handle()));
        assertTrue(!q.status().suspendedByApp());
    }

    // ------------------------------------------------------------------ through Gogo, as the shell calls them

    /** @return what {@code line} returns in a Gogo session with these commands, as text */
    private Object gogo(String line) throws Exception {
        ThreadIOImpl io = new ThreadIOImpl();
        io.start();
        try {
            CommandProcessorImpl processor = new CommandProcessorImpl(io);
            for (String f : functions()) {
                processor.addCommand("xq", shell, f);
            }
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
            try (CommandSession session = processor.createSession(new ByteArrayInputStream(new byte[0]), out, out)) {
                return session.execute(line);
            }
        } finally {
            io.stop();
        }
    }

    private String gogoFailure(String line) {
        Exception e = assertThrows(Exception.class, () -> gogo(line), line);
        return e.getMessage();
    }

    /** The functions the component registers: {@code osgi.command.function} of the DS descriptor bnd wrote. */
    private static List<String> functions() throws Exception {
        String xml;
        try (var in = XqCommands.class.getClassLoader().getResourceAsStream("OSGI-INF/" + XqCommands.class.getName() + ".xml")) {
            assertTrue(in != null, "bnd wrote the component's descriptor into target/classes");
            xml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher m = Pattern.compile("<property name=\"osgi.command.function\" type=\"String\">([^<]*)</property>").matcher(xml);
        assertTrue(m.find(), xml);
        return List.of(m.group(1).trim().split("\\s+"));
    }

    @Test
    void gogoBindsTheTypedFormsAndRefusesTheRestWithTheUsage() throws Exception {
        assertTrue(String.valueOf(gogo("xq:hint fg priority 7")).contains("priority=7"));
        assertEquals(List.of(new Hint.Priority(7)), q.hints());
        assertTrue(String.valueOf(gogo("xq:hint fg laxity 1000 1 5")).contains("laxity=1000us/1/5"));
        for (String line : List.of("xq:hint", "xq:hint fg", "xq:hint fg priority")) {
            String m = gogoFailure(line);
            assertTrue(m.startsWith("usage: xq:hint QUEUE KIND VALUE...; kinds: priority N, deadline US, laxity US PRIO CRITICAL_PRIO"), line + ": " + m);
        }
        assertTrue(gogoFailure("xq:hint fg priority 5000").contains("[-1000, 1000]"));
        assertTrue(gogoFailure("xq:hint fg laxity 1000 1").contains("laxity takes 3 values (US PRIO CRITICAL_PRIO), got 2"));

        assertTrue(String.valueOf(gogo("xq:top --once")).contains("policy native"));
        assertTrue(String.valueOf(gogo("xq:top -1 --interval 200")).contains("policy native"));
        assertEquals(null, gogo("xq:top --count 1 --interval 100"), "screens go to System.out");
        assertEquals("xq:top: unknown option '--fast'; allowed: --once, --interval MS (100..60000), --count N", gogoFailure("xq:top --fast"));
        assertEquals("xq:top: unknown option 'x'; allowed: --once, --interval MS (100..60000), --count N", gogoFailure("xq:top --once x"));
        assertTrue(gogoFailure("xq:top --interval 5").contains("--interval 5 is out of range [100, 60000]"));
        assertTrue(gogoFailure("xq:top --interval").contains("need a value"));

        assertTrue(String.valueOf(gogo("xq:policy")).startsWith("selected: native"));
        assertTrue(gogoFailure("xq:policy fifo").contains("'fifo'"));
        assertTrue(gogoFailure("xq:policy a b").startsWith("xq:policy takes at most one name; allowed: native"));

        assertTrue(String.valueOf(gogo("xq:config fg")).contains("threshold"));
        assertTrue(String.valueOf(gogo("xq:config fg window 250")).contains("window"));
        assertEquals(250, q.status().config().windowMicros());
        for (String line : List.of("xq:config", "xq:config fg window", "xq:config fg window 1 2")) {
            assertTrue(gogoFailure(line).startsWith("usage: xq:config QUEUE"), line);
        }

        assertTrue(String.valueOf(gogo("xq:suspend fg")).endsWith("suspended"));
        assertTrue(q.status().suspendedByApp());
        assertTrue(String.valueOf(gogo("xq:resume " + q.handle())).endsWith("resumed"));
        for (String c : List.of("suspend", "resume")) {
            assertEquals("usage: xq:" + c + " QUEUE (QUEUE is a handle or a name; xq:queues lists them)", gogoFailure("xq:" + c));
            assertEquals("usage: xq:" + c + " QUEUE (QUEUE is a handle or a name; xq:queues lists them)", gogoFailure("xq:" + c + " fg fg"));
        }
        assertTrue(String.valueOf(gogo("xq:devices")).contains("d0"));
        assertTrue(String.valueOf(gogo("xq:queues")).contains("priority=7"));
        assertTrue(String.valueOf(gogo("xq:policies")).contains("native"));
    }

    /** What {@code help xq:NAME} prints comes from these: every command and every parameter says what it is. */
    @Test
    void everyCommandDescribesItselfAndEachOfItsParameters() throws Exception {
        List<String> functions = functions();
        assertEquals(List.of("devices", "queues", "top", "policy", "policies", "hint", "config", "suspend", "resume"), functions);
        for (String f : functions) {
            List<Method> ms = Arrays.stream(XqCommands.class.getMethods()).filter(m -> m.getName().equals(f)).toList();
            assertTrue(!ms.isEmpty(), "xq:" + f + " has a method");
            for (Method m : ms) {
                Descriptor d = m.getAnnotation(Descriptor.class);
                assertTrue(d != null && !d.value().isBlank(), m + " has a @Descriptor");
                for (java.lang.reflect.Parameter p : m.getParameters()) {
                    assertTrue(p.getAnnotation(Descriptor.class) != null, m + ": parameter " + p + " has a @Descriptor");
                }
            }
        }
        Method top = Arrays.stream(XqCommands.class.getMethods())
                .filter(m -> m.getName().equals("top") && m.getParameterCount() == 3).findFirst().orElseThrow();
        List<String> options = Arrays.stream(top.getParameters()).map(p -> p.getAnnotation(Parameter.class))
                .map(p -> String.join("|", p.names())).toList();
        assertEquals(List.of("--once|-1", "--interval", "--count"), options);
    }
}
