package dev.xq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the Gogo shell hands a {@code String...} command for the command lines the suite documents. */
class GogoArgumentsTest {

    /** Stands in for {@link BenchCommands}: same method shapes, records what arrives. */
    public static final class Recorder {
        volatile List<String> last;

        public String bench(String... args) {
            last = List.of(args);
            return "ok";
        }

        public String demo(String... args) {
            last = List.of(args);
            return "ok";
        }
    }

    private ThreadIOImpl tio;
    private CommandSession session;
    private final Recorder recorder = new Recorder();

    @BeforeEach
    void start() {
        tio = new ThreadIOImpl();
        tio.start();
        CommandProcessorImpl processor = new CommandProcessorImpl(tio);
        processor.addCommand("xq", recorder, "bench");
        processor.addCommand("xq", recorder, "demo");
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()));
    }

    @AfterEach
    void stop() {
        session.close();
        tio.stop();
    }

    private List<String> run(String line) throws Exception {
        recorder.last = null;
        Object r = session.execute(line);
        assertEquals("ok", r, line);
        return recorder.last;
    }

    @Test
    void keyValueArgumentsArriveAsOneWordEach() throws Exception {
        assertEquals(List.of("fixed-priority", "T=100", "n=20", "load=0.2"), run("xq:bench fixed-priority T=100 n=20 load=0.2"));
        assertEquals(List.of("edf", "loads=0.3,0.5"), run("xq:bench edf loads=0.3,0.5"));
    }

    @Test
    void optionsArriveAsTheyAreTyped() throws Exception {
        assertEquals(List.of("drf", "--device", "sim", "--json", "/tmp/out.json", "--plot", "plots"),
                run("xq:bench drf --device sim --json /tmp/out.json --plot plots"));
        assertEquals(List.of("--json", "d.json", "seconds=2"), run("xq:demo --json d.json seconds=2"));
        assertEquals(List.of(), run("xq:demo"));
    }
}
