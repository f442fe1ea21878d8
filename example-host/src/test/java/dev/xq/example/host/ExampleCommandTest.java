package dev.xq.example.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.xq.api.DeviceInfo;
import dev.xq.api.PreemptionLevel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The example's arguments and its check, without a node. */
class ExampleCommandTest {

    private static final List<DeviceInfo> SIM = List.of(new DeviceInfo("sim0", "sim", "simulated XPU", PreemptionLevel.of(3), 1, 1L << 34, 0));
    private static final List<DeviceInfo> BOTH = List.of(SIM.get(0),
            new DeviceInfo("cuda0", "cuda", "NVIDIA H100", PreemptionLevel.of(1), 132, 80L << 30, 0));

    @Test
    void defaultsSuitTheDevice() {
        MatmulExample.Settings sim = ExampleCommand.parse(List.of(), SIM).settings();
        assertEquals("sim0", sim.device());
        assertEquals(64, sim.size());
        MatmulExample.Settings cuda = ExampleCommand.parse(List.of("--device", "cuda", "tasks=7", "policies=hpf"), BOTH).settings();
        assertEquals("cuda0", cuda.device());
        assertEquals(512, cuda.size());
        assertEquals(7, cuda.tasks());
        assertEquals(List.of("hpf"), cuda.policies());
    }

    @Test
    void aHipDeviceTakesTheCodeObjectGivenOrTheBundles(@TempDir Path dir) throws Exception {
        List<DeviceInfo> hip = List.of(SIM.get(0), new DeviceInfo("hip0", "hip", "AMD Instinct", PreemptionLevel.of(1), 304, 192L << 30, 0));
        MatmulExample.Settings s = ExampleCommand.parse(List.of("--device", "hip"), hip).settings();
        assertEquals("hip0", s.device());
        assertEquals(512, s.size());
        assertNull(s.code());
        assertEquals("hip/matmul.co", MatmulExample.codeFor("hip"));
        Path co = Files.writeString(dir.resolve("matmul.co"), "a code object");
        assertEquals(co, ExampleCommand.parse(List.of("--device", "hip", "code=" + co), hip).settings().code());
    }

    @Test
    void badArgumentsNameTheValueAndWhatIsAllowed() {
        String e0;
        assertEquals("--device rocm is not allowed: sim, cuda or hip",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("--device", "rocm"), SIM)).getMessage());
        assertEquals("device hip0 (--device hip) is not on this node; devices: [sim0]",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("--device", "hip"), SIM)).getMessage());
        e0 = assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("code=/nonexistent/matmul.co"), SIM))
                .getMessage();
        assertTrue(e0.startsWith("code=/nonexistent/matmul.co is not a file; give the device code to load"), e0);
        assertEquals("tasks 0 is out of range; allowed: 1..1000000",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("tasks=0"), SIM)).getMessage());
        assertEquals("size 'big' is not a whole number; allowed: 1..8192",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("size=big"), SIM)).getMessage());
        String e = assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("speed=2"), SIM)).getMessage();
        assertTrue(e.startsWith("key 'speed' is unknown; allowed: size"), e);
        e = assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("--device", "cuda"), SIM)).getMessage();
        assertEquals("device cuda0 (--device cuda) is not on this node; devices: [sim0]", e);
        assertEquals("policies 'hpf,hpf' names a policy twice; allowed: each policy once",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.parse(List.of("policies=hpf,hpf"), SIM)).getMessage());
        // checked before any run: a misspelt policy is refused at once
        assertEquals("policy 'bogus' is not registered on this node; allowed: edf, hpf, native",
                assertThrows(IllegalArgumentException.class, () -> ExampleCommand.checkPolicies(List.of("native", "bogus"), List.of("hpf", "edf")))
                        .getMessage());
        ExampleCommand.checkPolicies(List.of("native", "hpf"), List.of("hpf", "edf"));
    }

    @Test
    void theCheckSeesOneWrongBitAndTheCpuProductIsExact() {
        int n = 24;
        float[] a = MatmulExample.smallIntegers(1, n * n);
        float[] b = MatmulExample.smallIntegers(2, n * n);
        float[] c = MatmulExample.cpuMatmul(a, b, n);
        // whole numbers: the product is exact, whatever the order of the sums
        double[] d = new double[n * n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                for (int p = 0; p < n; p++) {
                    d[i * n + j] += (double) a[i * n + p] * b[p * n + j];
                }
            }
        }
        for (int i = 0; i < c.length; i++) {
            assertEquals(d[i], c[i], 0.0);
        }
        assertNull(MatmulExample.mismatch(c.clone(), c, n));
        float[] wrong = c.clone();
        wrong[n + 3] = Math.nextUp(wrong[n + 3]);
        assertTrue(MatmulExample.mismatch(wrong, c, n).startsWith("c[1][3] = "));
        wrong = c.clone();
        wrong[0] = Float.NaN;
        assertTrue(MatmulExample.mismatch(wrong, c, n).startsWith("c[0][0] = NaN"));
    }

    @Test
    void kernelsForCudaHipAndSimOnly() {
        assertEquals("ptx/matmul.ptx", MatmulExample.codeFor("cuda"));
        assertEquals("sim/matmul.xqsim", MatmulExample.codeFor("sim"));
        assertEquals("hip/matmul.co", MatmulExample.codeFor("hip"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> MatmulExample.codeFor("tpu")).getMessage().contains("'tpu' has none"));
    }
}
