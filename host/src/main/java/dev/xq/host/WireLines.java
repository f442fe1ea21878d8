package dev.xq.host;

import dev.xq.api.Hint;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The wire protocol's line and field rules (docs/processes.md, "Wire protocol"): what a line may
 * hold, how it splits into fields, and the formats of the fields that several requests share.
 * Each check throws an {@link IllegalArgumentException} whose message is the reason the session
 * refuses the line for.
 */
final class WireLines {

    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:/+-]+");
    static final Pattern KEY = Pattern.compile("(0[xX])?[0-9a-fA-F]{1,16}");

    /** Capabilities a HELLO may name (docs/processes.md). */
    static final List<String> CAPABILITIES = List.of("cuda", "hip", "lv2", "lv3", "mps", "narrow");

    private WireLines() {
    }

    /** @return whether the line (without its {@code \n}) is a WAKE line, which has a flood limit of its own */
    static boolean isWake(byte[] bytes, int len) {
        return len > 5 && bytes[0] == 'W' && bytes[1] == 'A' && bytes[2] == 'K' && bytes[3] == 'E' && bytes[4] == ' ';
    }

    /**
     * @return the fields of a line (without its {@code \n}): printable ASCII, separated by exactly one space
     * @throws IllegalArgumentException naming what is wrong with the line
     */
    static String[] fields(byte[] bytes, int len) {
        if (len == 0) {
            throw new IllegalArgumentException("empty line");
        }
        for (int i = 0; i < len; i++) {
            int b = bytes[i] & 0xff;
            if (b < 0x20 || b > 0x7e) {
                throw new IllegalArgumentException(String.format("byte 0x%02x at column %d is not printable ASCII", b, i + 1));
            }
        }
        String text = new String(bytes, 0, len, StandardCharsets.US_ASCII);
        String[] f = text.split(" ", -1);
        for (String s : f) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("fields must be separated by exactly one space: '" + shorten(text) + "'");
            }
        }
        return f;
    }

    /**
     * HELLO's and SPACE's priority field.
     *
     * @return the priority, or null for none ({@code -})
     * @throws IllegalArgumentException naming what is allowed
     */
    static Integer priority(String field) {
        if (field.equals("-")) {
            return null;
        }
        int priority;
        try {
            priority = Integer.parseInt(asciiDigits(field));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("priority '" + shorten(field) + "' is neither '-' nor a whole number in ["
                    + Hint.MIN_PRIORITY + ", " + Hint.MAX_PRIORITY + "]");
        }
        if (priority < Hint.MIN_PRIORITY || priority > Hint.MAX_PRIORITY) { // refused, not clamped: the sender meant something else
            throw new IllegalArgumentException("priority " + priority + " is out of range; allowed: '-' or a whole number in ["
                    + Hint.MIN_PRIORITY + ", " + Hint.MAX_PRIORITY + "]");
        }
        return priority;
    }

    /**
     * HELLO's capability field: {@link #CAPABILITIES}, comma-separated, each once, in combinations
     * that one interposer offers.
     *
     * @throws IllegalArgumentException naming the capability and what is allowed
     */
    static List<String> capabilities(String field) {
        List<String> caps = List.of(field.split(",", -1));
        for (int i = 0; i < caps.size(); i++) {
            String c = caps.get(i);
            if (!CAPABILITIES.contains(c)) {
                throw new IllegalArgumentException("capability '" + shorten(c) + "' is not known; allowed: "
                        + String.join(", ", CAPABILITIES) + ", comma-separated, each once");
            }
            if (caps.indexOf(c) != i) {
                throw new IllegalArgumentException("capability '" + c + "' is named twice; allowed: " + String.join(", ", CAPABILITIES)
                        + ", comma-separated, each once");
            }
        }
        if (caps.contains("cuda") && caps.contains("hip")) {
            throw new IllegalArgumentException(
                    "capabilities 'cuda' and 'hip' together; a process speaks for one runtime (one interposer each)");
        }
        if (caps.contains("lv2") && !caps.contains("cuda")) {
            throw new IllegalArgumentException(
                    "capability 'lv2' without 'cuda'; level 2 inside a process is the CUDA interposer's (XQ_STALL=1)");
        }
        if (caps.contains("narrow") && !caps.contains("mps")) {
            throw new IllegalArgumentException(
                    "capability 'narrow' without 'mps'; a process is narrowed only as a client of the node's MPS server");
        }
        if (caps.contains("lv3") && !caps.contains("hip")) {
            throw new IllegalArgumentException(
                    "capability 'lv3' without 'hip'; Lv3 for processes is the HIP interposer's (KFD debugger API)");
        }
        if (caps.contains("mps") && !caps.contains("cuda")) {
            throw new IllegalArgumentException("capability 'mps' without 'cuda'; only CUDA processes join the node's MPS server");
        }
        return caps;
    }

    static String shorten(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }

    /**
     * @return {@code text} when it is a whole number written in ASCII digits (an optional sign, then
     *         0-9 only); Java's own parsing also takes other scripts' digits (Arabic-Indic, Devanagari...)
     * @throws NumberFormatException otherwise
     */
    static String asciiDigits(String text) {
        // a loop, not a regular expression: the process protocol parses every WAKE line with it
        int n = text == null ? 0 : text.length();
        int i = n > 0 && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        if (i == n) {
            throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
        }
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("'" + text + "' is not a whole number in ASCII digits");
            }
        }
        return text;
    }
}
