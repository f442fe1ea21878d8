package dev.xq.bench.args;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One {@code key=value} parameter a scenario accepts: its default, the allowed range and what
 * it means. {@link #parse(String)} checks a value and names the range when it is wrong.
 */
public final class ParamSpec {

    /** What kind of value the parameter takes. */
    public enum Kind { INTEGER, DECIMAL, INTEGER_LIST, DECIMAL_LIST, CHOICE, CHOICE_LIST, TEXT }

    private final String name;
    private final Kind kind;
    private final Object defaultValue;
    private final double min;
    private final double max;
    private final List<String> choices;
    private final String help;
    /** Said after "allowed: ..." when a choice is refused (another way to ask for it), or empty. */
    private final String otherwise;

    private ParamSpec(String name, Kind kind, Object defaultValue, double min, double max, List<String> choices, String help) {
        this(name, kind, defaultValue, min, max, choices, help, "");
    }

    private ParamSpec(String name, Kind kind, Object defaultValue, double min, double max, List<String> choices, String help,
                      String otherwise) {
        this.name = name;
        this.kind = kind;
        this.defaultValue = defaultValue;
        this.min = min;
        this.max = max;
        this.choices = choices;
        this.help = help;
        this.otherwise = otherwise;
    }

    /**
     * @param text what a refused choice's message adds after the allowed ones ("; " and it), such as
     *     another parameter that takes what the choices do not
     * @return this parameter with that said
     */
    public ParamSpec otherwise(String text) {
        return new ParamSpec(name, kind, defaultValue, min, max, choices, help, text == null ? "" : text);
    }

    /** A whole number in [min, max]. */
    public static ParamSpec integer(String name, long def, long min, long max, String help) {
        return new ParamSpec(name, Kind.INTEGER, def, min, max, List.of(), help);
    }

    /** A decimal number in [min, max]. */
    public static ParamSpec decimal(String name, double def, double min, double max, String help) {
        return new ParamSpec(name, Kind.DECIMAL, def, min, max, List.of(), help);
    }

    /** A comma-separated list of whole numbers, each in [min, max]. */
    public static ParamSpec integers(String name, List<Long> def, long min, long max, String help) {
        return new ParamSpec(name, Kind.INTEGER_LIST, List.copyOf(def), min, max, List.of(), help);
    }

    /** A comma-separated list of decimals, each in [min, max]. */
    public static ParamSpec decimals(String name, List<Double> def, double min, double max, String help) {
        return new ParamSpec(name, Kind.DECIMAL_LIST, List.copyOf(def), min, max, List.of(), help);
    }

    /** One of a fixed set of words. */
    public static ParamSpec choice(String name, String def, List<String> choices, String help) {
        return new ParamSpec(name, Kind.CHOICE, def, 0, 0, List.copyOf(choices), help);
    }

    /** A comma-separated list of words, each one of a fixed set (e.g. the mixes or modes to run). */
    public static ParamSpec choices(String name, List<String> def, List<String> choices, String help) {
        return new ParamSpec(name, Kind.CHOICE_LIST, List.copyOf(def), 0, 0, List.copyOf(choices), help);
    }

    /** Free text, such as a path the scenario checks itself; may be empty. */
    public static ParamSpec text(String name, String def, String help) {
        return new ParamSpec(name, Kind.TEXT, def, 0, 0, List.of(), help);
    }

    public String name() {
        return name;
    }

    public Kind kind() {
        return kind;
    }

    public Object defaultValue() {
        return defaultValue;
    }

    /**
     * @return the value of {@code text}: a Long, Double, List of Long/Double, or String
     * @throws IllegalArgumentException naming the value and what is allowed
     */
    public Object parse(String text) {
        return switch (kind) {
            case INTEGER -> parseLong(text);
            case DECIMAL -> parseDouble(text);
            case INTEGER_LIST -> {
                List<Long> out = new ArrayList<>();
                for (String part : splitList(text)) {
                    out.add(parseLong(part));
                }
                yield List.copyOf(out);
            }
            case DECIMAL_LIST -> {
                List<Double> out = new ArrayList<>();
                for (String part : splitList(text)) {
                    out.add(parseDouble(part));
                }
                yield List.copyOf(out);
            }
            case CHOICE -> {
                if (!choices.contains(text)) {
                    throw new IllegalArgumentException(name + "=" + text + " is not allowed; allowed: " + String.join(", ", choices)
                            + (otherwise.isEmpty() ? "" : "; " + otherwise));
                }
                yield text;
            }
            case CHOICE_LIST -> {
                List<String> out = new ArrayList<>();
                for (String part : splitList(text)) {
                    if (!choices.contains(part)) {
                        throw new IllegalArgumentException(name + "=" + text + ": '" + part + "' is not allowed; allowed: "
                                + String.join(", ", choices) + (otherwise.isEmpty() ? "" : "; " + otherwise));
                    }
                    out.add(part);
                }
                yield List.copyOf(out);
            }
            case TEXT -> text;
        };
    }

    private List<String> splitList(String text) {
        List<String> parts = new ArrayList<>();
        for (String p : text.split(",", -1)) {
            String t = p.strip();
            if (t.isEmpty()) {
                throw new IllegalArgumentException(name + "=" + text + " has an empty item; expected a comma-separated list like "
                        + describeDefault());
            }
            parts.add(t);
        }
        return parts;
    }

    private long parseLong(String text) {
        long v;
        try {
            v = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "=" + text + " is not a whole number; allowed: " + range(), e);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + "=" + text + " is out of range; allowed: " + range());
        }
        return v;
    }

    private double parseDouble(String text) {
        double v;
        try {
            v = Double.parseDouble(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "=" + text + " is not a number; allowed: " + range(), e);
        }
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException(name + "=" + text + " is out of range; allowed: " + range());
        }
        return v;
    }

    private String range() {
        return switch (kind) {
            case INTEGER, INTEGER_LIST -> "[" + (long) min + ", " + (long) max + "]";
            case DECIMAL, DECIMAL_LIST -> "[" + num(min) + ", " + num(max) + "]";
            case CHOICE, CHOICE_LIST -> String.join(", ", choices);
            case TEXT -> "any text";
        };
    }

    private static String num(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : String.format(Locale.ROOT, "%s", d);
    }

    private String describeDefault() {
        if (defaultValue instanceof List<?> l) {
            List<String> parts = new ArrayList<>();
            for (Object o : l) {
                parts.add(o instanceof Double d ? num(d) : String.valueOf(o));
            }
            return String.join(",", parts);
        }
        return defaultValue instanceof Double d ? num(d) : String.valueOf(defaultValue);
    }

    /** @return one usage line: {@code name=default  help (allowed: range)} */
    public String usage() {
        String list = kind == Kind.INTEGER_LIST || kind == Kind.DECIMAL_LIST || kind == Kind.CHOICE_LIST ? ", comma-separated" : "";
        return name + "=" + describeDefault() + "  " + help + " (allowed: " + range() + list + ")";
    }
}
