package dev.xq.hal.cuda;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The adapter's settings, checked: what {@link CudaConfig} says, or what a test or the GPU
 * smoke harness builds directly.
 *
 * @param library path or file name of libcuda
 * @param modules kernel modules by name (never {@code spin}: that one is built in)
 * @param completion how completions are detected
 * @param pollEarlyMicros poll mode: how long before a predicted end the thread starts spinning
 * @param pollMaxSleepMicros poll mode: the longest sleep without a prediction
 * @param timerSlackNanos the completion thread's Linux timer slack; 0 keeps the OS default
 * @param stall level 2: whether and when launches carry a guard that a deactivate closes
 * @param stallHoldMillis adaptive stall: how long after its last reactivate a queue's launches stay guarded
 * @param everyStartEvent whether every command gets a start event; false: only a command launched
 *        onto an idle stream does, the others start where their predecessor ended (chained)
 * @param timingChoice whether a command's end is the device's timestamp (a timing event), TRUE;
 *        or when the completion thread saw it (an event without timing, which costs the device
 *        nothing), FALSE; null: automatic, seen under poll completion (its thread spins at each
 *        predicted end, so it sees an end within microseconds), the device's under the others
 * @param pollSpinChoice poll mode: how the completion thread waits between looks while commands
 *        are in flight: TRUE spins, FALSE parks (a timer wakes it); null: automatic, spinning
 *        where the host has {@value #AUTO_SPIN_MIN_HW_THREADS} or more hardware threads
 * @param pollSpinMicros pollWait=spin: the longest spin before a look; a longer wait parks until
 *        this long before the look, so that a wake-up late by less than this costs nothing
 * @param hostFlags level 2: whether the flag words live in page-locked host memory, written by a
 *        store of the deciding thread (no driver call; the device sees it within microseconds),
 *        TRUE; or in device memory, written by cuStreamWriteValue32 on a side stream, FALSE
 */
record CudaSettings(String library, Map<String, Path> modules, CompletionMode completion, int pollEarlyMicros,
                    int pollMaxSleepMicros, int timerSlackNanos, StallMode stall, int stallHoldMillis,
                    boolean everyStartEvent, Boolean timingChoice, Boolean pollSpinChoice, int pollSpinMicros, boolean hostFlags) {

    static final String DEFAULT_LIBRARY = "libcuda.so.1";
    static final String DEFAULT_COMPLETION = "poll";
    static final int DEFAULT_POLL_EARLY_MICROS = 20;
    static final int DEFAULT_POLL_MAX_SLEEP_MICROS = 200;
    static final int DEFAULT_TIMER_SLACK_NANOS = 1000;
    static final String DEFAULT_STALL = "adaptive";
    static final String DEFAULT_STALL_FLAGS = "host";
    static final int DEFAULT_STALL_HOLD_MILLIS = 1000;
    static final String DEFAULT_START_EVENTS = "chained";
    static final String DEFAULT_TIMING = "auto";
    static final String DEFAULT_POLL_WAIT = "auto";
    static final int DEFAULT_POLL_SPIN_MICROS = 5_000;
    /** pollWait=auto spins on hosts with at least this many hardware threads (CUDA's own rule is alike). */
    static final int AUTO_SPIN_MIN_HW_THREADS = 8;
    /** The built-in module's name. */
    static final String SPIN_MODULE = "spin";

    CudaSettings {
        if (library == null || library.isBlank()) {
            throw new IllegalArgumentException("library '" + library + "' is empty; give a path or file name such as "
                    + DEFAULT_LIBRARY);
        }
        modules = Map.copyOf(modules);
        if (modules.containsKey(SPIN_MODULE)) {
            throw new IllegalArgumentException("module name '" + SPIN_MODULE + "' is reserved for the built-in spin module");
        }
        if (completion == null) {
            throw new IllegalArgumentException("completion mode is missing");
        }
        range("pollEarlyMicros", pollEarlyMicros, 0, 100_000);
        range("pollMaxSleepMicros", pollMaxSleepMicros, 1, 100_000);
        range("timerSlackNanos", timerSlackNanos, 0, 50_000);
        range("pollSpinMicros", pollSpinMicros, 1, 1_000_000);
        if (stall == null) {
            throw new IllegalArgumentException("stall mode is missing");
        }
        range("stallHoldMillis", stallHoldMillis, 1, 3_600_000);
    }

    private static void range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " " + value + " is out of range [" + min + ", " + max + "]");
        }
    }

    static CudaSettings defaults() {
        return new CudaSettings(DEFAULT_LIBRARY, Map.of(), CompletionMode.parse(DEFAULT_COMPLETION),
                DEFAULT_POLL_EARLY_MICROS, DEFAULT_POLL_MAX_SLEEP_MICROS, DEFAULT_TIMER_SLACK_NANOS,
                StallMode.parse(DEFAULT_STALL), DEFAULT_STALL_HOLD_MILLIS, false, parseTiming(DEFAULT_TIMING),
                parsePollWait(DEFAULT_POLL_WAIT), DEFAULT_POLL_SPIN_MICROS, parseStallFlags(DEFAULT_STALL_FLAGS));
    }

    /** @throws IllegalArgumentException naming the bad value and what is allowed */
    static CudaSettings from(CudaConfig c) {
        return new CudaSettings(c.library() == null ? DEFAULT_LIBRARY : c.library().strip(), parseModules(c.modules()),
                CompletionMode.parse(c.completion()), c.pollEarlyMicros(), c.pollMaxSleepMicros(), c.timerSlackNanos(),
                StallMode.parse(c.stall()), c.stallHoldMillis(), parseStartEvents(c.startEvents()),
                parseTiming(c.timing()), parsePollWait(c.pollWait()),
                c.pollSpinMicros(), parseStallFlags(c.stallFlags()));
    }

    /**
     * @param value {@code host} or {@code device}
     * @return whether level 2's flag words live in host memory
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static boolean parseStallFlags(String value) {
        String v = value == null ? DEFAULT_STALL_FLAGS : value.strip();
        return switch (v) {
            case "host" -> true;
            case "device" -> false;
            default -> throw new IllegalArgumentException("stallFlags '" + value + "' is not one of host, device");
        };
    }

    /** @param host level 2's flag words in host memory (TRUE) or device memory */
    CudaSettings withStallFlags(boolean host) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis,
                everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, host);
    }

    /**
     * @param value {@code auto}, {@code spin} or {@code park}
     * @return TRUE to spin, FALSE to park, null for automatic
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static Boolean parsePollWait(String value) {
        String v = value == null ? DEFAULT_POLL_WAIT : value.strip();
        return switch (v) {
            case "auto" -> null;
            case "spin" -> Boolean.TRUE;
            case "park" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("pollWait '" + value + "' is not one of auto, spin, park");
        };
    }

    /**
     * @param value {@code auto}, {@code device} or {@code seen}
     * @return TRUE for device timestamps, FALSE for seen, null for automatic
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static Boolean parseTiming(String value) {
        String v = value == null ? DEFAULT_TIMING : value.strip();
        return switch (v) {
            case "auto" -> null;
            case "device" -> Boolean.TRUE;
            case "seen" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("timing '" + value + "' is not one of auto, device, seen");
        };
    }

    /**
     * @param value {@code chained} or {@code every}
     * @return whether every command gets its own start event
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    static boolean parseStartEvents(String value) {
        String v = value == null ? DEFAULT_START_EVENTS : value.strip();
        return switch (v) {
            case "chained" -> false;
            case "every" -> true;
            default -> throw new IllegalArgumentException("startEvents '" + value + "' is not one of chained, every");
        };
    }

    /**
     * @param entries each {@code name=path}
     * @throws IllegalArgumentException for an entry without '=', an empty name or path, or a name given twice
     */
    static Map<String, Path> parseModules(String[] entries) {
        Map<String, Path> out = new LinkedHashMap<>();
        if (entries == null) {
            return out;
        }
        for (String raw : entries) {
            String e = raw == null ? "" : raw.strip();
            if (e.isEmpty()) {
                continue;
            }
            int eq = e.indexOf('=');
            if (eq <= 0 || eq == e.length() - 1) {
                throw new IllegalArgumentException("module entry '" + raw + "' is not name=path (e.g. gemm=/opt/k/gemm.ptx)");
            }
            String name = e.substring(0, eq).strip();
            String path = e.substring(eq + 1).strip();
            if (name.isEmpty() || path.isEmpty()) {
                throw new IllegalArgumentException("module entry '" + raw + "' is not name=path (e.g. gemm=/opt/k/gemm.ptx)");
            }
            if (out.putIfAbsent(name, Path.of(path)) != null) {
                throw new IllegalArgumentException("module name '" + name + "' is given twice");
            }
        }
        return out;
    }

    CudaSettings withLibrary(String l) {
        return new CudaSettings(l, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis, everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    CudaSettings withModules(Map<String, Path> m) {
        return new CudaSettings(library, m, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis, everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    CudaSettings withCompletion(CompletionMode c) {
        return new CudaSettings(library, modules, c, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis, everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    CudaSettings withPolling(int earlyMicros, int maxSleepMicros, int slackNanos) {
        return new CudaSettings(library, modules, completion, earlyMicros, maxSleepMicros, slackNanos, stall, stallHoldMillis, everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    CudaSettings withStall(StallMode mode, int holdMillis) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, mode, holdMillis, everyStartEvent, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    CudaSettings withEveryStartEvent(boolean every) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis,
                every, timingChoice, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    /** @param device TRUE: device timestamps, FALSE: when seen, null: automatic */
    CudaSettings withTiming(Boolean device) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis,
                everyStartEvent, device, pollSpinChoice, pollSpinMicros, hostFlags);
    }

    /** @param spin TRUE: spin, FALSE: park, null: automatic */
    CudaSettings withPollWait(Boolean spin) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis,
                everyStartEvent, timingChoice, spin, pollSpinMicros, hostFlags);
    }

    /** @param micros pollWait=spin: the longest spin before a look */
    CudaSettings withPollSpinMicros(int micros) {
        return new CudaSettings(library, modules, completion, pollEarlyMicros, pollMaxSleepMicros, timerSlackNanos, stall, stallHoldMillis,
                everyStartEvent, timingChoice, pollSpinChoice, micros, hostFlags);
    }

    /** @return whether the poll-mode completion thread spins between looks on a host with {@code hwThreads} */
    boolean pollSpins(int hwThreads) {
        return pollSpinChoice != null ? pollSpinChoice : hwThreads >= AUTO_SPIN_MIN_HW_THREADS;
    }

    /** @return whether a command's end is the device's timestamp (else: when its completion was seen) */
    boolean deviceEndTimes() {
        return timingChoice != null ? timingChoice : completion != CompletionMode.POLL;
    }
}
