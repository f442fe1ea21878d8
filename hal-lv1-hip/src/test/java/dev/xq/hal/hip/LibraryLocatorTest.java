package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.runtime.log.RuntimeLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibraryLocatorTest {

    @Test
    void withoutConfigurationTheUsualNamesAreTriedInOrder() {
        assertEquals(List.of("libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so",
                "/opt/rocm/lib/libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so.5"), LibraryLocator.candidates(null));
    }

    @Test
    void aConfiguredLibraryIsTheOnlyCandidate() {
        assertEquals(List.of("/x/libamdhip64.so"), LibraryLocator.candidates("/x/libamdhip64.so"));
    }

    @Test
    void aMissingConfiguredLibraryIsReportedWithTheReason(@TempDir Path tmp) {
        String missing = tmp.resolve("libamdhip64.so").toString();
        LibraryLocator.Found f = LibraryLocator.load(missing);
        assertNull(f.api());
        assertEquals(1, f.attempts().size());
        assertTrue(f.reason().startsWith("no library: tried " + missing + " ("), f.reason());

        HipPlatform p = HipPlatform.start(HipSettings.defaults(Map.of()).withLibrary(missing), RuntimeLog.NONE);
        assertEquals(f.reason(), p.status());
        assertEquals(List.of(), p.devices());
        p.close();
    }

    @Test
    void aLibraryWithoutTheHipSymbolsIsRefusedNamingThem(@TempDir Path tmp) throws IOException {
        // libc is a real shared library, just not a HIP runtime
        Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(libc), "needs glibc at " + libc);
        LibraryLocator.Found f = LibraryLocator.load(libc.toString());
        assertNull(f.api());
        assertTrue(f.reason().contains("lacks [hipGetErrorName"), f.reason());
    }

    @Test
    void theDoubleLoadsThroughTheConfiguredPath() {
        LibraryLocator.Found f = LibraryLocator.load(HipDouble.library());
        assertNotNull(f.api(), f.reason());
        assertEquals(HipDouble.library(), f.api().library());
        f.api().close();
    }
}
