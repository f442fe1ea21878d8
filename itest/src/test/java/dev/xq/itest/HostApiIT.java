package dev.xq.itest;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.CodeModule;
import dev.xq.api.Command;
import dev.xq.api.Command.Arg;
import dev.xq.api.Command.Dim3;
import dev.xq.api.DeviceBuffer;
import dev.xq.api.KernelFunction;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Hashtable;
import java.util.List;
import java.util.function.Supplier;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import javax.inject.Inject;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The host API in a real framework, as a host bundle uses it: buffers, data commands, a module
 * loaded at run time, the refusals; a host bundle uninstalled with its buffers still allocated
 * (they are freed); and the example host bundle's {@code xq:example}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HostApiIT {

    private static final Duration LONG = Duration.ofSeconds(60);
    private static final String PROGRAM = "xq-sim-program 1\nkernel xq_saxpy saxpy_f32\nkernel xq_matmul_tiled matmul_f32\n";

    @Inject
    XQueueService xq;

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    ConfigurationAdmin cm;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void saxpyRunsOnSimThroughTheRegistryService() throws Exception {
        CodeModule module = xq.load("sim0", "it", PROGRAM.getBytes(StandardCharsets.UTF_8));
        KernelFunction saxpy = module.function("xq_saxpy");
        try (XQueue q = xq.create(QueueOptions.on("sim0").named("it-saxpy"));
             DeviceBuffer x = xq.allocate("sim0", 16);
             DeviceBuffer y = xq.allocate("sim0", 16)) {
            assertTrue("the probe's own buffers are listed", xq.buffers().containsAll(List.of(x, y)));
            q.submit(Command.write(x, java.lang.foreign.MemorySegment.ofArray(new float[] {1, 2, 3, 4})));
            q.submit(Command.fill(y, (byte) 0));
            q.submit(new Command.Launch(saxpy, new Dim3(1, 1, 1), new Dim3(256, 1, 1), 0,
                    List.of(new Arg.I32(4), new Arg.F32(0.5f), new Arg.Buf(x), new Arg.Buf(y))));
            float[] out = new float[4];
            q.submit(Command.read(y, java.lang.foreign.MemorySegment.ofArray(out))).await(LONG);
            assertArrayEquals(new float[] {0.5f, 1, 1.5f, 2}, out, 0f);
            // refusals name the value and change nothing
            try {
                q.submit(new Command.Fill(y, 8, 9, (byte) 1));
                fail("an out-of-range fill was accepted");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("fill of 9 bytes at offset 8 is out of range"));
            }
            try {
                q.submit(new Command.Launch(saxpy, new Dim3(1, 1, 1), new Dim3(1, 1, 1), 0, List.of(new Arg.I32(4))));
                fail("a launch with one argument of four was accepted");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("takes 4 parameters"));
            }
            assertEquals("the refused commands were not submitted", 4, q.status().submitted());
        } finally {
            module.close();
        }
    }

    @Test
    public void aBufferOfAnotherDeviceIsRefused() throws Exception {
        org.osgi.service.cm.Configuration c = cm.createFactoryConfiguration("dev.xq.hal.sim.device", "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("id", "simit");
        c.update(props);
        try {
            assertTrue("simit appears", XqNode.eventually(10_000, () -> xq.devices().stream().anyMatch(d -> d.id().equals("simit"))));
            try (XQueue q = xq.create(QueueOptions.on("sim0").named("it-other"));
                 DeviceBuffer elsewhere = xq.allocate("simit", 64)) {
                q.submit(Command.read(elsewhere, java.lang.foreign.MemorySegment.ofArray(new byte[64])));
                fail("a buffer of simit was accepted on a queue of sim0");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("is on simit, but queue 'it-other' is on sim0"));
            }
        } finally {
            c.delete();
        }
    }

    @Test
    public void uninstallingAHostBundleFreesItsBuffers() throws Exception {
        String before = simDevices();
        Path jar = Files.createTempFile("xq-holder", ".jar");
        Manifest mf = new Manifest();
        Attributes a = mf.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", "dev.xq.itest.holder");
        a.putValue("Bundle-Version", "1.0.0");
        a.putValue("Bundle-Activator", BufferHolder.class.getName());
        a.putValue("Import-Package", "dev.xq.api,org.osgi.framework");
        String entry = BufferHolder.class.getName().replace('.', '/') + ".class";
        try (OutputStream f = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(f, mf);
             InputStream cls = BufferHolder.class.getClassLoader().getResourceAsStream(entry)) {
            assertNotNull(entry, cls);
            out.putNextEntry(new JarEntry(entry));
            cls.transferTo(out);
            out.closeEntry();
        }
        Bundle holder = context.installBundle(jar.toUri().toString());
        holder.start();
        ServiceReference<?>[] refs = context.getServiceReferences(Supplier.class.getName(), "(" + BufferHolder.PROPERTY + "=true)");
        assertNotNull("the holder shows its buffers", refs);
        @SuppressWarnings("unchecked")
        List<DeviceBuffer> held = ((Supplier<List<DeviceBuffer>>) context.getService(refs[0])).get();
        context.ungetService(refs[0]);
        assertEquals(3, held.size());
        assertTrue("the holder's queue is open", xq.queues().stream().anyMatch(q -> q.status().name().equals(BufferHolder.QUEUE)));
        String during = simDevices();
        assertTrue(during, allocated(during) == allocated(before) + 3L * (1 << 20));
        assertTrue(during, modules(during) == modules(before) + 1);
        for (DeviceBuffer b : held) {
            assertTrue(b.isOpen());
            assertFalse("the probe does not own the holder's buffers", xq.buffers().contains(b));
        }
        holder.uninstall();
        for (DeviceBuffer b : held) {
            assertFalse(b + " still open after its bundle was uninstalled", b.isOpen());
        }
        assertTrue("the holder's queue outlived its bundle", xq.queues().stream().noneMatch(q -> q.status().name().equals(BufferHolder.QUEUE)));
        String after = simDevices();
        assertEquals("sim0's memory is back: " + after, allocated(before), allocated(after));
        assertEquals("the module was unloaded: " + after, modules(before), modules(after));
        Files.deleteIfExists(jar);
    }

    @Test
    public void theExampleHostBundleComputesAndChecks() throws Exception {
        String out = run("xq:example tasks=5 size=32 bgsize=64");
        assertTrue(out, out.contains("check: PASSED (15 of 15 results equal to the CPU's, bit for bit)"));
        assertTrue(out, out.contains("hpf      hpf"));
        try {
            run("xq:example --device rocm");
            fail("--device rocm was accepted");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("--device rocm is not allowed: sim, cuda or hip"));
        }
    }

    private String simDevices() throws Exception {
        return run("sim:devices").lines().filter(l -> l.startsWith("sim0 ")).findFirst().orElseThrow();
    }

    private static long allocated(String line) {
        return Long.parseLong(line.replaceAll(".* allocated=(\\d+).*", "$1"));
    }

    private static long modules(String line) {
        return Long.parseLong(line.replaceAll(".* modules=(\\d+).*", "$1"));
    }

    private String run(String line) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(printed, true, StandardCharsets.UTF_8);
        CommandSession session = processor.createSession(InputStream.nullInputStream(), ps, ps);
        try {
            String scope = line.substring(0, line.indexOf(':'));
            assertTrue(scope + " commands registered", XqNode.eventually(10_000, () -> {
                try {
                    session.execute(scope.equals("sim") ? "sim:devices" : "help xq:example");
                    return true;
                } catch (Exception notYet) {
                    return false;
                }
            }));
            Object r = session.execute(line);
            return printed.toString(StandardCharsets.UTF_8) + (r == null ? "" : session.format(r, 0));
        } finally {
            session.close();
        }
    }
}
