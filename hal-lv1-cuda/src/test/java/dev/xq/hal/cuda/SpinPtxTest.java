package dev.xq.hal.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SpinPtxTest {

    private final String ptx = CudaDevice.spinPtx();

    /** The PTX text with // comments removed, so that the checks see directives only. */
    private String code() {
        return ptx.replaceAll("//[^\n]*", "");
    }

    @Test
    void declaresVersionTargetAndAddressSize() {
        String c = code();
        Matcher v = Pattern.compile("\\.version\\s+(\\d+)\\.(\\d+)").matcher(c);
        assertTrue(v.find(), "no .version directive");
        int major = Integer.parseInt(v.group(1));
        assertTrue(major >= 7, "PTX ISA " + v.group(1) + "." + v.group(2) + " is older than 7.0");
        Matcher t = Pattern.compile("\\.target\\s+sm_(\\d+)").matcher(c);
        assertTrue(t.find(), "no .target directive");
        assertTrue(Integer.parseInt(t.group(1)) <= 90, "target sm_" + t.group(1) + " would not JIT for sm_90");
        assertTrue(c.contains(".address_size 64"));
    }

    @Test
    void spinEntryTakesNanosecondsAndReadsTheGlobalTimer() {
        String c = code();
        Matcher e = Pattern.compile("\\.visible\\s+\\.entry\\s+" + CudaDevice.SPIN_FUNCTION + "\\s*\\(([^)]*)\\)\\s*\\{([^}]*)\\}")
                .matcher(c);
        assertTrue(e.find(), "no .entry " + CudaDevice.SPIN_FUNCTION);
        assertEquals(1, e.group(1).split(",").length, "xq_spin takes one parameter: " + e.group(1));
        assertTrue(e.group(1).contains(".param .u64"), e.group(1));
        assertTrue(e.group(2).contains("%globaltimer"), "xq_spin must spin on %globaltimer (wall time)");
        assertFalse(e.group(2).contains("clock64"), "clock64 counts cycles, not time");
        assertTrue(e.group(2).contains("bra"), "xq_spin must loop");
    }

    @Test
    void probeEntryHasFiveParameters() {
        Matcher e = Pattern.compile("\\.entry\\s+" + CudaDevice.PROBE_FUNCTION + "\\s*\\(([^)]*)\\)").matcher(code());
        assertTrue(e.find());
        assertEquals(5, e.group(1).split(",").length);
    }

    /** Where the CUDA toolkit's assembler is installed (not on CI), it must accept the module for Hopper. */
    @Test
    void ptxasAssemblesItForSm90WhereInstalled() throws Exception {
        java.nio.file.Path ptxas = null;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            java.nio.file.Path p = java.nio.file.Path.of(dir, "ptxas");
            if (java.nio.file.Files.isExecutable(p)) {
                ptxas = p;
                break;
            }
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(ptxas != null, "ptxas is not installed here");
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("xq-ptx");
        java.nio.file.Path src = java.nio.file.Files.writeString(dir.resolve("spin.ptx"), ptx);
        Process p = new ProcessBuilder(ptxas.toString(), "-arch=sm_90", src.toString(), "-o", dir.resolve("spin.cubin").toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), "ptxas refused spin.ptx: " + out);
    }

    @Test
    void bracesBalance() {
        String c = code();
        int depth = 0;
        for (char ch : c.toCharArray()) {
            depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
            assertTrue(depth >= 0, "a } closes nothing");
        }
        assertEquals(0, depth);
    }
}
