package dev.xq.hal.hip;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The adapter's validated settings: {@link HipConfig} with the environment variables
 * {@code XQ_HIP_LIB} and {@code XQ_HIP_SPIN_MODULE} filled in where the configuration is empty.
 *
 * @param library the configured library, or {@code null} to search the usual names
 * @param spinModule the code object with the {@code spin} kernel, or {@code null}
 * @param modules code objects for kernel commands, by the name a command uses
 */
record HipSettings(String library, Path spinModule, Map<String, Path> modules, int spinBlocksPerCu,
                   int spinBlockThreads, int pollMinMicros, int pollMaxMicros) {

    static final String ENV_LIBRARY = "XQ_HIP_LIB";
    static final String ENV_SPIN_MODULE = "XQ_HIP_SPIN_MODULE";

    HipSettings {
        library = blankToNull(library);
        modules = Map.copyOf(modules);
        range("spinBlocksPerCu", spinBlocksPerCu, 1, 1024);
        range("spinBlockThreads", spinBlockThreads, 1, 1024);
        range("pollMinMicros", pollMinMicros, 1, 100_000);
        range("pollMaxMicros", pollMaxMicros, 1, 100_000);
        if (pollMaxMicros < pollMinMicros) {
            throw new IllegalArgumentException("pollMaxMicros=" + pollMaxMicros + " is below pollMinMicros=" + pollMinMicros
                    + "; allowed: pollMinMicros <= pollMaxMicros <= 100000");
        }
    }

    /** Defaults, with the environment applied: what an unconfigured node uses. */
    static HipSettings defaults(Map<String, String> env) {
        return new HipSettings(env.get(ENV_LIBRARY), pathOrNull(env.get(ENV_SPIN_MODULE)), Map.of(), 8, 256, 5, 200);
    }

    /** @throws IllegalArgumentException naming the property, its value and what is allowed */
    static HipSettings from(HipConfig c, Map<String, String> env) {
        String library = blankToNull(c.library());
        String spin = blankToNull(c.spinModule());
        return new HipSettings(library != null ? library : env.get(ENV_LIBRARY),
                pathOrNull(spin != null ? spin : env.get(ENV_SPIN_MODULE)), parseModules(c.modules()),
                c.spinBlocksPerCu(), c.spinBlockThreads(), c.pollMinMicros(), c.pollMaxMicros());
    }

    HipSettings withLibrary(String lib) {
        return new HipSettings(lib, spinModule, modules, spinBlocksPerCu, spinBlockThreads, pollMinMicros, pollMaxMicros);
    }

    HipSettings withSpinModule(Path spin) {
        return new HipSettings(library, spin, modules, spinBlocksPerCu, spinBlockThreads, pollMinMicros, pollMaxMicros);
    }

    HipSettings withModules(Map<String, Path> m) {
        return new HipSettings(library, spinModule, m, spinBlocksPerCu, spinBlockThreads, pollMinMicros, pollMaxMicros);
    }

    /** Parses {@code name=path} entries. */
    static Map<String, Path> parseModules(String[] entries) {
        Map<String, Path> out = new LinkedHashMap<>();
        if (entries == null) {
            return out;
        }
        for (String entry : entries) {
            if (entry == null || entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            String name = eq < 0 ? "" : entry.substring(0, eq).strip();
            String path = eq < 0 ? "" : entry.substring(eq + 1).strip();
            if (name.isEmpty() || path.isEmpty()) {
                throw new IllegalArgumentException("modules entry '" + entry + "' is not name=path (e.g. gemm=/opt/k/gemm.hsaco)");
            }
            if (out.put(name, Path.of(path)) != null) {
                throw new IllegalArgumentException("modules entry '" + entry + "' repeats the name '" + name + "'; names must be unique");
            }
        }
        return out;
    }

    private static void range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " is out of range [" + min + ", " + max + "]");
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    private static Path pathOrNull(String s) {
        String v = blankToNull(s);
        return v == null ? null : Path.of(v);
    }
}
