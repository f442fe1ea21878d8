package dev.xq.runtime.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConfigCheckTest {

    /** A configuration type as the bundles write them. */
    @interface Sample {
        boolean tokenOnLoopback() default false;

        int port() default 50000;

        long windowMicros() default 0;

        double share() default 0.5;

        String token() default "";

        int dotted_key() default 1;
    }

    @Test
    void valuesAsWrittenPass() {
        assertEquals(List.of(), ConfigCheck.problems(Sample.class, Map.of("tokenOnLoopback", "TRUE", "port", " 50001 ",
                "windowMicros", 5L, "share", "0.25", "token", "anything", "dotted.key", "3")));
        assertEquals(List.of(), ConfigCheck.problems(Sample.class, Map.of("tokenOnLoopback", Boolean.TRUE, "port", 7)));
        assertNull(ConfigCheck.describe("dev.xq.x", Sample.class, Map.of("port", "1", "service.pid", "dev.xq.x",
                "felix.fileinstall.filename", "file:/x.cfg"), Set.of()));
    }

    @Test
    void aBooleanNotTrueOrFalseIsNamed() {
        // read by Declarative Services as false without a word
        assertEquals(List.of("tokenOnLoopback 'yes' is not true or false"), ConfigCheck.problems(Sample.class, Map.of("tokenOnLoopback", "yes")));
        assertEquals(List.of("tokenOnLoopback '1' is not true or false"), ConfigCheck.problems(Sample.class, Map.of("tokenOnLoopback", 1L)));
    }

    @Test
    void numbersThatDoNotParseOrFitAreNamed() {
        assertEquals(List.of("port 'abc' is not a whole number"), ConfigCheck.problems(Sample.class, Map.of("port", "abc")));
        assertEquals(List.of("port '1.5' is not a whole number"), ConfigCheck.problems(Sample.class, Map.of("port", "1.5")));
        assertEquals(List.of("port '3000000000' does not fit: allowed: a whole number in [-2147483648, 2147483647]"),
                ConfigCheck.problems(Sample.class, Map.of("port", "3000000000")));
        assertEquals(List.of("share 'half' is not a number"), ConfigCheck.problems(Sample.class, Map.of("share", "half")));
        assertEquals(List.of("dotted.key 'x' is not a whole number"), ConfigCheck.problems(Sample.class, Map.of("dotted.key", "x")));
    }

    @Test
    void keysThatNameNoSettingAreSaidWithWhatIsAllowed() {
        assertEquals(Set.of("prot"), ConfigCheck.unknown(Sample.class, Map.of("prot", "50001", "service.pid", "p"), Set.of()));
        assertEquals(Set.of(), ConfigCheck.unknown(Sample.class, Map.of("own.file", "x"), Set.of("own.file")));
        // a component's own service properties come with its configuration (every node start
        // warned of bandwidth's xq.policy and xq.policy.bounded in session 103's build)
        assertEquals(Set.of(), ConfigCheck.unknown(Sample.class, Map.of("xq.policy", "bandwidth", "xq.policy.bounded", true,
                "xq.platform", "cuda", "component.name", "c"), Set.of()));
        String d = ConfigCheck.describe("dev.xq.http", Sample.class, Map.of("prot", "50001", "tokenOnLoopback", "yes"), Set.of());
        assertEquals("dev.xq.http: tokenOnLoopback 'yes' is not true or false; key prot is no setting here; allowed: dotted.key, port, "
                + "share, token, tokenOnLoopback, windowMicros", d);
        assertTrue(ConfigCheck.keys(Sample.class).contains("dotted.key"));
        List<String> said = new java.util.ArrayList<>();
        ConfigCheck.warnUnknown("dev.xq.x", Sample.class, Map.of("port", "1", "felix.fileinstall.filename", "f"), said::add);
        assertEquals(List.of(), said, "nothing unknown, nothing said");
        ConfigCheck.warnUnknown("dev.xq.x", Sample.class, Map.of("prot", "1"), said::add);
        assertEquals(List.of("dev.xq.x: prot is no setting here, ignored; allowed: dotted.key, port, share, token, tokenOnLoopback, windowMicros"),
                said);
    }
}
