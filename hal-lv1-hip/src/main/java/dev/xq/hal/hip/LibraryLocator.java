package dev.xq.hal.hip;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds libamdhip64. A configured library (Config Admin {@code library}, else the environment
 * variable {@code XQ_HIP_LIB}) is the only candidate: quietly falling back to another HIP
 * runtime than the one asked for would hide a mistake. Without one, the usual names are tried:
 * the dynamic loader's search path first, then ROCm's default install prefix.
 */
final class LibraryLocator {

    /** In order: the development symlink, ROCm 6 and ROCm 5 sonames (Debian ships {@code .so.5}). */
    static final List<String> USUAL_NAMES = List.of(
            "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
            "/opt/rocm/lib/libamdhip64.so", "/opt/rocm/lib/libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so.5");

    private LibraryLocator() {
    }

    /** The result: a loaded library, or every attempt with the reason it failed. */
    record Found(HipApi api, List<String> attempts) {
        /** @return e.g. {@code no library: tried libamdhip64.so (cannot open ...), ...} */
        String reason() {
            return "no library: tried " + String.join(", ", attempts);
        }
    }

    static List<String> candidates(String configured) {
        return configured == null ? USUAL_NAMES : List.of(configured);
    }

    /** Loads the first candidate that opens and has every symbol. */
    static Found load(String configured) {
        List<String> attempts = new ArrayList<>();
        for (String candidate : candidates(configured)) {
            try {
                return new Found(HipApi.load(candidate), attempts);
            } catch (RuntimeException e) {
                attempts.add(candidate + " (" + firstLine(e.getMessage()) + ")");
            }
        }
        return new Found(null, attempts);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "unknown error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
