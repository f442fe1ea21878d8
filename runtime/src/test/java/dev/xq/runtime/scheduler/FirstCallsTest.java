package dev.xq.runtime.scheduler;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No call in the node's decisions pays a bootstrap at its first use: string concatenation is
 * compiled inline (a site's first call through {@code StringConcatFactory} cost 4.6 ms on the build
 * VM), and the records compared or printed in every decision have their methods written out (a
 * record's own, through {@code ObjectMethods}, cost 10-26 ms at the first call, a lambda's about a
 * millisecond: on the H200 the
 * node applied an arrival's decision 6 ms late at such a first call, and a GEMM launched inside a
 * batch's request, 28.5 ms against 8). Read from the compiled classes.
 */
class FirstCallsTest {

    private static Path classes() throws Exception {
        return Path.of(ArrivalGuards.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static boolean holds(Path f, String what) {
        try {
            return new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1).contains(what);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void noStringConcatenationIsBootstrappedInTheRuntime() throws Exception {
        Path root = classes();
        List<String> found;
        try (Stream<Path> s = Files.walk(root)) {
            found = s.filter(p -> p.toString().endsWith(".class")).filter(p -> holds(p, "java/lang/invoke/StringConcatFactory"))
                    .map(p -> root.relativize(p).toString()).toList();
        }
        assertTrue(found.isEmpty(), "classes concatenating through StringConcatFactory (compile with -XDstringConcat=inline): " + found);
    }

    /** The arrival guards decide every launch's fate: no lambda in them either (each site's first call spins a class). */
    @Test
    void theArrivalGuardsBootstrapNothing() throws Exception {
        Path f = classes().resolve("dev/xq/runtime/scheduler/ArrivalGuards.class");
        assertTrue(Files.exists(f), "compiled: " + f);
        for (String b : List.of("java/lang/invoke/LambdaMetafactory", "java/lang/runtime/ObjectMethods", "java/lang/invoke/StringConcatFactory")) {
            assertTrue(!holds(f, b), "ArrivalGuards bootstraps through " + b + " at a first call");
        }
    }

    @Test
    void theRecordsOfEveryDecisionHaveTheirMethodsWrittenOut() throws Exception {
        Path c = classes();
        for (String r : List.of("ArrivalGuards$Guard", "ArrivalGuards$Beat", "TopQueues$Key", "TopQueues$DeviceKey")) {
            Path f = c.resolve("dev/xq/runtime/scheduler/" + r + ".class");
            assertTrue(Files.exists(f), "compiled: " + f);
            assertTrue(!holds(f, "java/lang/runtime/ObjectMethods"), r + " bootstraps its equals, hashCode or toString at the first call");
        }
    }
}
