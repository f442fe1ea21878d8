package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.junit.jupiter.api.Test;

/** xq:processes as Gogo binds it: the typed forms, and the usage for what they cannot take. */
class ProcessesGogoTest {

    private final HostComponent host = new HostComponent();   // not activated: no server

    private Object gogo(String line) throws Exception {
        ThreadIOImpl io = new ThreadIOImpl();
        io.start();
        try {
            CommandProcessorImpl processor = new CommandProcessorImpl(io);
            processor.addCommand("xq", host, "processes");
            PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
            try (CommandSession session = processor.createSession(new ByteArrayInputStream(new byte[0]), out, out)) {
                return session.execute(line);
            }
        } finally {
            io.stop();
        }
    }

    private String failure(String line) {
        return assertThrows(Exception.class, () -> gogo(line), line).getMessage();
    }

    @Test
    void eachFormBindsAndTheRestIsRefusedWithTheUsage() throws Exception {
        assertEquals("process host: not serving: not started\n", gogo("xq:processes"));
        assertTrue(failure("xq:processes 42").startsWith("xq:processes: process 42 has no session; served processes: none"));
        assertTrue(failure("xq:processes abc").contains("'abc' is not a process id; usage: xq:processes"));
        assertTrue(failure("xq:processes 1 2").startsWith("xq:processes takes at most one argument, got 2; usage:"));
        assertTrue(failure("xq:processes --wait 0").contains("--wait 0 is out of range [1, 100000]"));
        assertTrue(failure("xq:processes --wait").contains("wrong arguments --wait; usage:"));
        assertTrue(failure("xq:processes --wait 1 --timeout").contains("wrong arguments --wait 1 --timeout; usage:"));
        assertTrue(failure("xq:processes --wait 1 --timeout 30").startsWith("xq:processes --wait 1: 0 processes served after 30 ms"));
    }

    @Test
    void everyFormDescribesItselfAndItsParameters() {
        List<Method> ms = Arrays.stream(HostComponent.class.getMethods()).filter(m -> m.getName().equals("processes")).toList();
        assertEquals(4, ms.size());
        for (Method m : ms) {
            assertTrue(m.isAnnotationPresent(Descriptor.class), m + " has a @Descriptor");
            for (java.lang.reflect.Parameter p : m.getParameters()) {
                assertTrue(p.isAnnotationPresent(Descriptor.class), m + ": " + p + " has a @Descriptor");
            }
        }
    }
}
