package dev.xq.hal.hip;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The CPU-backed HIP test double (src/test/c/hipdouble.c), built by Maven (exec-maven-plugin,
 * phase process-test-resources) into target/hipdouble. When a test runs outside Maven and the
 * library is missing, it is built here with the same script.
 */
@SuppressWarnings("restricted") // tests load the double and call its test-only functions
final class HipDouble {

    private static Path dir;
    private static MethodHandle configure;
    private static MethodHandle liveHandles;
    private static MethodHandle liveAllocations;
    private static MethodHandle badFrees;

    private HipDouble() {
    }

    static synchronized Path dir() {
        if (dir == null) {
            Path d = Path.of(System.getProperty("xq.hipdouble.dir", "target/hipdouble")).toAbsolutePath();
            if (!Files.isRegularFile(d.resolve("libamdhip64.so"))) {
                build(d);
            }
            dir = d;
            Arena arena = Arena.global();
            SymbolLookup lookup = SymbolLookup.libraryLookup(d.resolve("libamdhip64.so"), arena);
            Linker linker = Linker.nativeLinker();
            configure = linker.downcallHandle(lookup.findOrThrow("xqdouble_configure"),
                    FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
            liveHandles = linker.downcallHandle(lookup.findOrThrow("xqdouble_live_handles"), FunctionDescriptor.of(JAVA_INT));
            liveAllocations = linker.downcallHandle(lookup.findOrThrow("xqdouble_live_allocations"),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            badFrees = linker.downcallHandle(lookup.findOrThrow("xqdouble_bad_frees"), FunctionDescriptor.of(JAVA_INT));
        }
        return dir;
    }

    private static void build(Path d) {
        Path script = Path.of("src/test/c/build-hipdouble.sh").toAbsolutePath();
        try {
            Process p = new ProcessBuilder("sh", script.toString(), d.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                fail("building the HIP test double with " + script + " failed (it needs gcc: apt-get install -y gcc):\n" + out);
            }
        } catch (IOException e) {
            fail("cannot run " + script + " to build the HIP test double: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted while building the HIP test double");
        }
    }

    static String library() {
        return dir().resolve("libamdhip64.so").toString();
    }

    /** The module blob: a "code object" for the double listing spin, probe, append and trap. */
    static Path module() {
        return dir().resolve("xq-spin.hipdouble");
    }

    /** The double's stand-in for example-host's code object: xq_matmul_tiled and xq_saxpy, with their parameter sizes. */
    static Path matmulModule() {
        return dir().resolve("matmul.hipdouble");
    }

    /** @return live hipMalloc allocations ({@code host} false) or hipHostMalloc ones ({@code host} true) */
    static int liveAllocations(boolean host) {
        dir();
        try {
            return (int) liveAllocations.invokeExact(host ? 1 : 0);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** @return hipFree/hipHostFree calls for memory that was not allocated, or freed already */
    static int badFrees() {
        dir();
        try {
            return (int) badFrees.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Settings that use the double, its module as the spin module and as kernel module "test". */
    static HipSettings settings() {
        return HipSettings.defaults(Map.of()).withLibrary(library()).withSpinModule(module())
                .withModules(Map.of("test", module()));
    }

    /** Sets the double's device count, compute units and stream priority range (least, greatest). */
    static void configure(int devices, int computeUnits, int least, int greatest) {
        dir();
        try {
            configure.invokeExact(devices, computeUnits, least, greatest);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static void reset() {
        configure(1, 4, 1, -1);
    }

    /** @return live streams, events and modules in the double */
    static int liveHandles() {
        dir();
        try {
            return (int) liveHandles.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
