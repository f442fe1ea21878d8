package dev.xq.hal.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HipSettingsTest {

    /** A configuration as Config Admin would hand it to the component. */
    static HipConfig config(String library, String spinModule, String[] modules, int pollMin, int pollMax) {
        return new HipConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return HipConfig.class;
            }

            @Override
            public String library() {
                return library;
            }

            @Override
            public String spinModule() {
                return spinModule;
            }

            @Override
            public String[] modules() {
                return modules;
            }

            @Override
            public int spinBlocksPerCu() {
                return 8;
            }

            @Override
            public int spinBlockThreads() {
                return 256;
            }

            @Override
            public int pollMinMicros() {
                return pollMin;
            }

            @Override
            public int pollMaxMicros() {
                return pollMax;
            }
        };
    }

    @Test
    void configurationWinsOverTheEnvironment() {
        Map<String, String> env = Map.of("XQ_HIP_LIB", "/env/libamdhip64.so", "XQ_HIP_SPIN_MODULE", "/env/spin.hsaco");
        HipSettings s = HipSettings.from(config("/cfg/libamdhip64.so", "/cfg/spin.hsaco", new String[0], 5, 200), env);
        assertEquals("/cfg/libamdhip64.so", s.library());
        assertEquals(Path.of("/cfg/spin.hsaco"), s.spinModule());
    }

    @Test
    void theEnvironmentFillsAnEmptyConfiguration() {
        Map<String, String> env = Map.of("XQ_HIP_LIB", "/env/libamdhip64.so", "XQ_HIP_SPIN_MODULE", "/env/spin.hsaco");
        HipSettings s = HipSettings.from(config(" ", "", new String[0], 5, 200), env);
        assertEquals("/env/libamdhip64.so", s.library());
        assertEquals(Path.of("/env/spin.hsaco"), s.spinModule());
        HipSettings none = HipSettings.from(config("", "", new String[0], 5, 200), Map.of());
        assertNull(none.library());
        assertNull(none.spinModule());
    }

    @Test
    void modulesAreNameEqualsPath() {
        HipSettings s = HipSettings.from(config("", "", new String[] {"gemm = /k/gemm.hsaco", "", "fft=/k/fft.hsaco"}, 5, 200), Map.of());
        assertEquals(Map.of("gemm", Path.of("/k/gemm.hsaco"), "fft", Path.of("/k/fft.hsaco")), s.modules());
    }

    @Test
    void badModuleEntriesAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HipSettings.parseModules(new String[] {"gemm"}));
        assertTrue(e.getMessage().contains("'gemm'") && e.getMessage().contains("name=path"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HipSettings.parseModules(new String[] {"a=/x", "a=/y"}));
        assertTrue(e.getMessage().contains("repeats the name 'a'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HipSettings.parseModules(new String[] {"=/x"}));
    }

    @Test
    void numbersOutOfRangeAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HipSettings.from(config("", "", new String[0], 0, 200), Map.of()));
        assertEquals("pollMinMicros=0 is out of range [1, 100000]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HipSettings.from(config("", "", new String[0], 50, 10), Map.of()));
        assertTrue(e.getMessage().contains("pollMaxMicros=10 is below pollMinMicros=50"), e.getMessage());
    }
}
