package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * No package cycle among XQ's packages, across every XQ bundle the node runs: the JDK's jdeps
 * reads the bundles' class files (what was built, not the sources) and lists which package uses
 * which; a cycle is a strongly connected set of two or more packages.
 */
public class PackageCyclesTest {

    private static final Pattern EDGE = Pattern.compile("^\\s+(dev\\.xq\\.[\\w.]+)\\s+->\\s+(dev\\.xq\\.[\\w.]+)\\s");

    @Test
    public void noPackageCycleAmongTheXqBundles() throws IOException {
        Path dir = Path.of(System.getProperty("xq.itest.bundles", "target/bundles"));
        List<String> jars;
        try (Stream<Path> s = Files.list(dir)) {
            jars = s.map(Path::toString).filter(n -> n.matches(".*/dev\\.xq\\.[^/]*\\.jar")).sorted().toList();
        }
        assertTrue("XQ bundles in " + dir + ": " + jars, jars.size() >= 10);
        Map<String, Set<String>> graph = packageGraph(jars);
        assertTrue("packages seen: " + graph.keySet(), graph.containsKey("dev.xq.runtime.engine")
                && graph.containsKey("dev.xq.runtime.scheduler") && graph.containsKey("dev.xq.hal.spi"));
        assertEquals("package cycles", List.of(), cycles(graph));
    }

    @Test
    public void theCycleFinderSeesACycle() {
        Map<String, Set<String>> g = new TreeMap<>();
        g.put("a", new TreeSet<>(Set.of("b")));
        g.put("b", new TreeSet<>(Set.of("c", "d")));
        g.put("c", new TreeSet<>(Set.of("a")));
        g.put("d", new TreeSet<>());
        assertEquals(List.of(List.of("a", "b", "c")), cycles(g));
        g.get("c").clear();
        assertEquals(List.of(), cycles(g));
    }

    /** package -> the other XQ packages its classes use */
    static Map<String, Set<String>> packageGraph(List<String> jars) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps in this JDK"));
        List<String> args = new ArrayList<>(List.of("-verbose:package", "-filter:none", "--multi-release", "25"));
        args.addAll(jars);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
        assertEquals("jdeps " + args + ": " + err, 0, rc);
        Map<String, Set<String>> g = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (m.find()) {
                g.computeIfAbsent(m.group(1), k -> new TreeSet<>());
                g.computeIfAbsent(m.group(2), k -> new TreeSet<>());
                if (!m.group(1).equals(m.group(2))) {
                    g.get(m.group(1)).add(m.group(2));
                }
            }
        }
        return g;
    }

    /** The strongly connected sets of two or more packages (Tarjan), each sorted. */
    static List<List<String>> cycles(Map<String, Set<String>> g) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        List<String> stack = new ArrayList<>();
        Set<String> onStack = new TreeSet<>();
        List<List<String>> out = new ArrayList<>();
        int[] next = {0};
        for (String v : g.keySet()) {
            if (!index.containsKey(v)) {
                connect(v, g, index, low, stack, onStack, out, next);
            }
        }
        return out;
    }

    private static void connect(String v, Map<String, Set<String>> g, Map<String, Integer> index, Map<String, Integer> low,
                                List<String> stack, Set<String> onStack, List<List<String>> out, int[] next) {
        index.put(v, next[0]);
        low.put(v, next[0]);
        next[0]++;
        stack.add(v);
        onStack.add(v);
        for (String w : g.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                connect(w, g, index, low, stack, onStack, out, next);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> scc = new ArrayList<>();
            String w;
            do {
                w = stack.removeLast();
                onStack.remove(w);
                scc.add(w);
            } while (!w.equals(v));
            if (scc.size() > 1) {
                scc.sort(null);
                out.add(scc);
            }
        }
    }
}
