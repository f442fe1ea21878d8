package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.xq.runtime.log.RuntimeLog;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The adapter against the real HIP runtime as Debian ships it (package libamdhip64-5). This
 * machine has no AMD GPU, so the library must load, resolve every symbol the adapter binds,
 * and report "no device". Skipped, saying so, where the library is not installed; CI installs it.
 */
@SuppressWarnings("restricted") // looks the real library up directly
class RealHipLibraryTest {

    private static String library;

    @BeforeAll
    static void findLibrary() {
        for (String name : LibraryLocator.USUAL_NAMES) {
            try (Arena a = Arena.ofConfined()) {
                if (name.contains("/")) {
                    SymbolLookup.libraryLookup(Path.of(name), a);
                } else {
                    SymbolLookup.libraryLookup(name, a);
                }
                library = name;
                return;
            } catch (IllegalArgumentException notThere) {
                // try the next name
            }
        }
    }

    private static void assumeLibrary() {
        assumeTrue(library != null, "the real HIP runtime is not installed (tried " + LibraryLocator.USUAL_NAMES
                + "); install it with: apt-get install -y libamdhip64-5");
    }

    @Test
    void everyBoundSymbolResolves() {
        assumeLibrary();
        try (Arena a = Arena.ofConfined()) {
            SymbolLookup lookup = library.contains("/") ? SymbolLookup.libraryLookup(Path.of(library), a)
                    : SymbolLookup.libraryLookup(library, a);
            List<String> missing = HipApi.SIGNATURES.keySet().stream().filter(s -> lookup.find(s).isEmpty()).toList();
            assertEquals(List.of(), missing, "symbols of " + library + " the adapter binds but cannot find");
        }
    }

    @Test
    void withoutAGpuTheDeviceCountIsTheNoDeviceError() {
        assumeLibrary();
        assumeFalse(Files.exists(Path.of("/dev/kfd")), "this machine has /dev/kfd: a real AMD GPU may be present");
        try (HipApi api = HipApi.load(library)) {
            HipApi.DeviceCount c = api.deviceCount();
            assertEquals(HipApi.ERROR_NO_DEVICE, c.error(), "hipGetDeviceCount: " + api.describe(c.error()));
            assertEquals(0, c.count());
            assertTrue(api.describe(c.error()).startsWith("hipErrorNoDevice (100)"), api.describe(c.error()));
            assertTrue(api.runtimeVersion() >= 50000000, "ROCm 5 or newer: " + api.runtimeVersion());
        }
    }

    @Test
    void theDriverReportsNoDeviceCleanly() {
        assumeLibrary();
        assumeFalse(Files.exists(Path.of("/dev/kfd")), "this machine has /dev/kfd: a real AMD GPU may be present");
        HipPlatform p = HipPlatform.start(HipSettings.defaults(Map.of()), RuntimeLog.NONE);
        try {
            assertTrue(p.status().startsWith("no device: hipGetDeviceCount returned hipErrorNoDevice (100)"), p.status());
            assertTrue(p.status().contains(library), p.status());
            assertEquals(List.of(), p.devices());
        } finally {
            p.close();
        }
    }

    @Test
    void withoutAGpuAllocateAndLoadAreRefusedNamingTheDeviceAndTheCause() {
        assumeLibrary();
        assumeFalse(Files.exists(Path.of("/dev/kfd")), "this machine has /dev/kfd: a real AMD GPU may be present");
        HipPlatform p = HipPlatform.start(HipSettings.defaults(Map.of()), RuntimeLog.NONE);
        try {
            HipMemory memory = new HipMemory(() -> p);
            String e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> memory.allocate("hip0", 16))
                    .getMessage();
            assertTrue(e.startsWith("device 'hip0' is unknown to the hip driver; known: none (no device: hipGetDeviceCount returned"
                    + " hipErrorNoDevice (100)"), e);
            e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> memory.load("hip0", "m",
                    new byte[] {1})).getMessage();
            assertTrue(e.startsWith("device 'hip0' is unknown to the hip driver; known: none (no device:"), e);
        } finally {
            p.close();
        }
    }

    @Test
    void withoutAGpuTheMemoryCallsThemselvesAnswerWithAnErrorNotACrash() {
        assumeLibrary();
        assumeFalse(Files.exists(Path.of("/dev/kfd")), "this machine has /dev/kfd: a real AMD GPU may be present");
        try (HipApi api = HipApi.load(library)) {
            HipApi.Pointer m = api.malloc(16);
            assertTrue(m.error() != HipApi.SUCCESS, "hipMalloc without a GPU: " + api.describe(m.error()));
            assertEquals(null, api.hostMalloc(65536), "hipHostMalloc without a GPU");
            HipApi.ModuleLoad l = api.moduleLoad(new byte[] {1, 2, 3});
            assertTrue(l.error() != HipApi.SUCCESS, "hipModuleLoadData without a GPU: " + api.describe(l.error()));
        }
    }
}
