package dev.xq.bench.args;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parsed command line of {@code xq:bench} or {@code xq:demo}:
 * {@code [SCENARIO] [--device sim|cuda|hip] [--json FILE] [--plot DIR] [--wide] [key=value ...]}.
 *
 * @param scenario the scenario name ({@code demo} for the demo)
 * @param device {@code sim}, {@code cuda} or {@code hip}
 * @param json where to write the JSON figures, or null
 * @param plotDir where to write PNG charts, or null
 * @param help whether only the usage was asked for
 */
public record BenchArguments(String scenario, String device, Path json, Path plotDir, Params params, boolean help, boolean wide) {

    public BenchArguments(String scenario, String device, Path json, Path plotDir, Params params, boolean help) {
        this(scenario, device, json, plotDir, params, help, false);
    }

    /** The device choices of {@code --device}. */
    public static final List<String> DEVICES = List.of("sim", "cuda", "hip");

    /**
     * Parses the arguments of {@code xq:bench}.
     * @param scenarios scenario name -> its parameters, in the order the usage lists them
     * @throws UsageException naming the bad argument, with the usage text
     */
    public static BenchArguments parseBench(List<String> args, Map<String, List<ParamSpec>> scenarios) {
        if (args.isEmpty()) {
            throw new UsageException("no scenario given; allowed: " + String.join(", ", scenarios.keySet()));
        }
        String first = args.getFirst();
        if (first.equals("--help") || first.equals("-h") || first.equals("help")) {
            return new BenchArguments("", "sim", null, null, new Params(Map.of()), true);
        }
        List<ParamSpec> specs = scenarios.get(first);
        if (specs == null) {
            throw new UsageException("scenario '" + first + "' is unknown; allowed: " + String.join(", ", scenarios.keySet()));
        }
        return parseRest(first, args.subList(1, args.size()), specs);
    }

    /**
     * Parses the arguments of {@code xq:demo}.
     * @throws UsageException naming the bad argument, with the usage text
     */
    public static BenchArguments parseDemo(List<String> args, List<ParamSpec> specs) {
        if (!args.isEmpty() && (args.getFirst().equals("--help") || args.getFirst().equals("-h"))) {
            return new BenchArguments("demo", "sim", null, null, new Params(Map.of()), true);
        }
        return parseRest("demo", args, specs);
    }

    private static BenchArguments parseRest(String scenario, List<String> args, List<ParamSpec> specs) {
        Map<String, ParamSpec> byName = new LinkedHashMap<>();
        for (ParamSpec s : specs) {
            byName.put(s.name(), s);
        }
        Map<String, Object> given = new LinkedHashMap<>();
        String device = null;
        Path json = null;
        Path plot = null;
        boolean wide = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--wide")) { // every figure in the table, not only the ones users compare
                if (wide) {
                    throw new UsageException("--wide is given twice");
                }
                wide = true;
                continue;
            }
            if (a.startsWith("--")) {
                String opt = a;
                String value;
                int eq = a.indexOf('=');
                if (eq > 0) {
                    opt = a.substring(0, eq);
                    value = a.substring(eq + 1);
                } else if (opt.equals("--help")) {
                    return new BenchArguments(scenario, "sim", null, null, new Params(Map.of()), true);
                } else {
                    if (i + 1 >= args.size()) {
                        throw new UsageException(opt + " needs a value");
                    }
                    value = args.get(++i);
                }
                if (value.isEmpty()) {
                    throw new UsageException(opt + " needs a non-empty value");
                }
                switch (opt) {
                    case "--device" -> {
                        if (device != null) {
                            throw new UsageException("--device is given twice");
                        }
                        if (!DEVICES.contains(value)) {
                            throw new UsageException("--device " + value + " is unknown; allowed: " + String.join(", ", DEVICES));
                        }
                        device = value;
                    }
                    case "--json" -> {
                        if (json != null) {
                            throw new UsageException("--json is given twice");
                        }
                        json = toPath(opt, value);
                    }
                    case "--plot" -> {
                        if (plot != null) {
                            throw new UsageException("--plot is given twice");
                        }
                        plot = toPath(opt, value);
                    }
                    default -> throw new UsageException("option " + opt + " is unknown; allowed: --device sim|cuda|hip, --json FILE, --plot DIR, --wide");
                }
                continue;
            }
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("argument '" + a + "' is not key=value; allowed keys for " + scenario + ": "
                        + String.join(", ", byName.keySet()));
            }
            String key = a.substring(0, eq);
            ParamSpec spec = byName.get(key);
            if (spec == null) {
                throw new UsageException("parameter '" + key + "' is unknown for " + scenario + "; allowed: "
                        + String.join(", ", byName.keySet()));
            }
            if (given.containsKey(key)) {
                throw new UsageException("parameter '" + key + "' is given twice");
            }
            try {
                given.put(key, spec.parse(a.substring(eq + 1)));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (ParamSpec s : specs) {
            values.put(s.name(), given.getOrDefault(s.name(), s.defaultValue()));
        }
        return new BenchArguments(scenario, device == null ? "sim" : device, json, plot, new Params(values), false, wide);
    }

    private static Path toPath(String opt, String value) {
        try {
            return Path.of(value);
        } catch (RuntimeException e) {
            throw new UsageException(opt + " " + value + " is not a valid path: " + e.getMessage());
        }
    }

    /** @return the usage text of a scenario (or the demo) and its parameters */
    public static String usage(String scenario, String summary, List<ParamSpec> specs) {
        List<String> lines = new ArrayList<>();
        lines.add("  " + scenario + ": " + summary);
        for (ParamSpec s : specs) {
            lines.add("      " + s.usage());
        }
        return String.join("\n", lines);
    }
}
