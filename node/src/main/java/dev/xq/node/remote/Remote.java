package dev.xq.node.remote;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code ./xq queues}, {@code ./xq top}, {@code ./xq policy [NAME]} and {@code ./xq hint ...}:
 * the Gogo commands {@code xq:queues}, {@code xq:top}, {@code xq:policy} and {@code xq:hint}
 * asked of a running node over its HTTP API ({@code /api/v1}), with the same arguments, the
 * same columns and the same words. The node is {@code --node HOST:PORT} or {@code XQ_NODE}
 * (default 127.0.0.1:50000), its token {@code --token T} or {@code XQ_TOKEN}; flags win.
 *
 * <p>Exit codes: 0 done; 1 the node is not there or refused (one line on stderr, the API's own
 * text for a refusal); 2 wrong arguments, found before anything is sent.
 */
public final class Remote {

    /** Wrong arguments: nothing was sent; the message says what is allowed. */
    static final class Usage extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message);
        }
    }

    /** The words this client knows. */
    static final List<String> COMMANDS = List.of("queues", "top", "policy", "hint");

    static final String USAGE = """
            usage: ./xq queues|top|policy|hint [--node HOST:PORT] [--token T] ...
              queues                         open XQueues, as xq:queues
              top [--once] [--interval MS] [--count N]
                                             the queue table with scheduler figures, refreshing until Ctrl-C, as xq:top
              policy [NAME]                  the selected and active policy, or select one, as xq:policy
              hint QUEUE KIND VALUE...       set a hint, as xq:hint (xq:hint fg priority 2, xq:hint q7 deadline 5000)
            the node: --node HOST:PORT or XQ_NODE (default 127.0.0.1:50000); its token: --token T or XQ_TOKEN""";

    /** A parsed command line: the word, its own arguments, and the node to ask. */
    record Invocation(String command, List<String> args, Target target) {
    }

    private Remote() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    /** Runs one command line; @return the exit code */
    static int run(String[] argv, Map<String, String> env, PrintStream out, PrintStream err) {
        Invocation inv;
        try {
            inv = parse(argv, env);
        } catch (Usage e) {
            err.println("xq: " + e.getMessage());
            return 2;
        }
        if (inv == null) {
            out.println(USAGE);
            return 0;
        }
        try {
            execute(inv, new NodeApi(inv.target()), out);
            out.flush();
            return 0;
        } catch (Usage e) {
            err.println("xq: " + e.getMessage());
            return 2;
        } catch (NodeApi.Failure e) {
            out.flush();
            err.println("xq: " + e.getMessage());
            return e.exitCode();
        }
    }

    /**
     * Splits off {@code --node}, {@code --token} (with a space or {@code =}), anywhere before a
     * {@code --}; what is left after the word is the command's own.
     * @return the invocation, or {@code null} when help was asked for
     */
    static Invocation parse(String[] argv, Map<String, String> env) {
        String node = null;
        String token = null;
        List<String> rest = new ArrayList<>();
        boolean options = true;
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (options && a.equals("--")) {
                options = false;
            } else if (options && (a.equals("--node") || a.equals("--token"))) {
                if (i + 1 >= argv.length || argv[i + 1].isEmpty()) {
                    throw new Usage(a + " needs a value: " + (a.equals("--node") ? "--node HOST:PORT" : "--token T"));
                }
                if (a.equals("--node")) {
                    node = argv[++i];
                } else {
                    token = argv[++i];
                }
            } else if (options && (a.startsWith("--node=") || a.startsWith("--token="))) {
                String v = a.substring(a.indexOf('=') + 1);
                if (v.isEmpty()) {
                    throw new Usage(a + " needs a value");
                }
                if (a.startsWith("--node=")) {
                    node = v;
                } else {
                    token = v;
                }
            } else if (options && rest.isEmpty() && (a.equals("--help") || a.equals("-h") || a.equals("help"))) {
                return null;
            } else {
                rest.add(a);
            }
        }
        if (rest.isEmpty()) {
            throw new Usage("no command given; " + USAGE);
        }
        String command = rest.getFirst();
        if (!COMMANDS.contains(command)) {
            throw new Usage("unknown command '" + command + "'; allowed: " + String.join(", ", COMMANDS));
        }
        List<String> args = List.copyOf(rest.subList(1, rest.size()));
        Invocation inv = new Invocation(command, args, Target.of(node, token, env));
        check(inv);
        return inv;
    }

    /** The argument checks that need no node, made before anything is sent. */
    private static void check(Invocation inv) {
        List<String> a = inv.args();
        switch (inv.command()) {
            case "queues" -> {
                if (!a.isEmpty()) {
                    throw new Usage("queues takes no arguments, got '" + String.join(" ", a) + "'");
                }
            }
            case "top" -> TopOptions.parse(a);
            case "hint" -> {
                if (a.size() < 3) {
                    // the kinds are the node's (GET /api/v1/hints); this client, on java.base only, keeps no copy
                    throw new Usage("usage: ./xq hint QUEUE KIND VALUE..., e.g. ./xq hint fg priority 2; "
                            + "the node names the kinds and their values when it refuses one (xq:hint alone, GET /api/v1/hints)");
                }
            }
            default -> {
                // policy: more than one name is refused with the node's list of names
            }
        }
    }

    /** {@code top}'s options, as {@code xq:top} takes them. */
    record TopOptions(boolean once, long intervalMillis, long count) {
        static TopOptions parse(List<String> args) {
            boolean once = false;
            long interval = 1000;
            long count = Long.MAX_VALUE;
            for (int i = 0; i < args.size(); i++) {
                switch (args.get(i)) {
                    case "--once", "-1" -> once = true;
                    case "--interval" -> interval = number(args, ++i, "--interval", 100, 60_000);
                    case "--count" -> count = number(args, ++i, "--count", 1, Integer.MAX_VALUE);
                    default -> throw new Usage("top: unknown option '" + args.get(i)
                            + "'; allowed: --once, --interval MS (100..60000), --count N");
                }
            }
            if (once && count != Long.MAX_VALUE) {
                throw new Usage("top: --once and --count " + count + " together; allowed: one of them (--once is --count 1)");
            }
            return new TopOptions(once, interval, count);
        }

        private static long number(List<String> args, int i, String option, long min, long max) {
            if (i >= args.size()) {
                throw new Usage(option + " needs a value in [" + min + ", " + max + "]");
            }
            long v;
            try {
                v = Long.parseLong(Remote.asciiDigits(args.get(i)));
            } catch (NumberFormatException e) {
                throw new Usage(option + " value '" + args.get(i) + "' is not a whole number; allowed: [" + min + ", " + max + "]");
            }
            if (v < min || v > max) {
                throw new Usage(option + " " + v + " is out of range [" + min + ", " + max + "]");
            }
            return v;
        }
    }

    private static void execute(Invocation inv, NodeApi api, PrintStream out) {
        List<String> a = inv.args();
        switch (inv.command()) {
            case "queues" -> out.print(Views.queueTable(api.get("/api/v1/queues")));
            case "top" -> top(TopOptions.parse(a), api, out);
            case "policy" -> {
                if (a.isEmpty()) {
                    out.println(Views.policy(api.get("/api/v1/policy")));
                } else if (a.size() > 1) {
                    throw new Usage("policy takes at most one name; allowed: " + Views.policyNames(api.get("/api/v1/policies")));
                } else {
                    api.post("/api/v1/policy", "{\"name\":" + quote(a.getFirst()) + "}");
                    out.println(Views.policySelected(a.getFirst()));
                }
            }
            case "hint" -> {
                StringBuilder values = new StringBuilder();
                for (String v : a.subList(2, a.size())) {
                    values.append(values.isEmpty() ? "" : ",").append(quote(v));
                }
                // the values go as the words typed: the node parses them as xq:hint does
                Map<String, Object> answer = api.post("/api/v1/hint",
                        "{\"queue\":" + quote(a.get(0)) + ",\"kind\":" + quote(a.get(1)) + ",\"values\":[" + values + "]}");
                out.println(Views.hintSet(answer, a.get(1)));
            }
            default -> throw new IllegalStateException(inv.command());
        }
    }

    private static String topScreen(NodeApi api) {
        return Views.topHead(api.get("/api/v1/scheduler")) + Views.queueTable(api.get("/api/v1/queues"));
    }

    private static void top(TopOptions o, NodeApi api, PrintStream out) {
        if (o.once()) {
            out.print(topScreen(api));
            return;
        }
        for (long n = 0; n < o.count(); n++) {
            if (n > 0) {
                try {
                    Thread.sleep(o.intervalMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            String screen = topScreen(api);
            out.print("\u001b[H\u001b[2J");
            out.println(screen);
            out.flush();
        }
    }

    /** A JSON string. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** @return {@code text} when it is a whole number in ASCII digits (Java's parsing also takes other scripts' digits) */
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
