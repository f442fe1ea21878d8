package dev.xq.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.annotation.Annotation;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HostSettingsTest {

    static HostConfig config(String path, String group, int slots, int max, boolean enabled) {
        return config(path, group, slots, max, enabled, false);
    }

    static HostConfig config(String path, String group, int slots, int max, boolean enabled, boolean interrupt) {
        return config(path, group, slots, max, enabled, interrupt, HostSettings.DEFAULT_MAX_SESSIONS_PER_USER,
                HostSettings.DEFAULT_MAX_STREAMS_PER_USER);
    }

    static HostConfig config(String path, String group, int slots, int max, boolean enabled, boolean interrupt, int perUserSessions,
                             int perUserStreams) {
        return new HostConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return HostConfig.class;
            }

            @Override
            public String socketPath() {
                return path;
            }

            @Override
            public String socketGroup() {
                return group;
            }

            @Override
            public int slots() {
                return slots;
            }

            @Override
            public int maxSessions() {
                return max;
            }

            @Override
            public int maxSessionsPerUser() {
                return perUserSessions;
            }

            @Override
            public int maxStreamsPerUser() {
                return perUserStreams;
            }

            @Override
            public boolean enabled() {
                return enabled;
            }

            @Override
            public boolean interruptProcesses() {
                return interrupt;
            }

            @Override
            public String mps() {
                return "auto";
            }

            @Override
            public String mpsControl() {
                return "";
            }

            @Override
            public int mpsLatencyPriority() {
                return SpacePlan.DEFAULT_LATENCY_PRIORITY;
            }

            @Override
            public int mpsBestEffortShare() {
                return SpacePlan.DEFAULT_BEST_EFFORT_SHARE;
            }

            @Override
            public boolean mpsHoldBestEffort() {
                return true;
            }

            @Override
            public long mpsHoldBehindMicros() {
                return SpacePlan.DEFAULT_HOLD_BEHIND_MICROS;
            }

            @Override
            public boolean mpsNarrow() {
                return SpacePlan.DEFAULT_NARROW;
            }

            @Override
            public boolean mpsLatencyOwnContext() {
                return SpacePlan.DEFAULT_LATENCY_OWN_CONTEXT;
            }

            @Override
            public boolean mpsNarrowLatency() {
                return SpacePlan.DEFAULT_NARROW_LATENCY;
            }

            @Override
            public boolean mpsLowPriorityBestEffort() {
                return SpacePlan.DEFAULT_LOW_BEST_EFFORT;
            }

            @Override
            public long arrivalWatchMicros() {
                return 0;
            }

            @Override
            public long arrivalWatchQuietMicros() {
                return ArrivalWatch.DEFAULT_QUIET_MICROS;
            }
        };
    }

    @Test
    void defaultPathFollowsTheInterposersRule() {
        assertEquals(Path.of("/run/user/1000/xq/node.sock"), HostSettings.defaultSocketPath(null, "/run/user/1000", 1000));
        assertEquals(Path.of("/run/xq/node.sock"), HostSettings.defaultSocketPath(null, null, 0));
        assertEquals(Path.of("/run/user/0/xq/node.sock"), HostSettings.defaultSocketPath("", "/run/user/0", 0));
        assertEquals(Path.of("/tmp/xq-1000/node.sock"), HostSettings.defaultSocketPath(null, "", 1000));
        assertEquals(Path.of("/srv/x.sock"), HostSettings.defaultSocketPath("/srv/x.sock", "/run/user/1000", 1000));
    }

    @Test
    void configuredPathWinsOverTheProperty() {
        HostSettings s = HostSettings.from(config("/srv/a.sock", "", 64, 256, true), k -> "/srv/b.sock", Map.of(), 1000);
        assertEquals(Path.of("/srv/a.sock"), s.socketPath());
        assertNull(s.group());
        HostSettings p = HostSettings.from(config("", "", 64, 256, true), k -> k.equals("xq.host.socket") ? "/srv/b.sock" : null,
                Map.of("XDG_RUNTIME_DIR", "/run/user/7"), 7);
        assertEquals(Path.of("/srv/b.sock"), p.socketPath());
        HostSettings x = HostSettings.from(config("", "video", 8, 9, false), k -> null, Map.of("XDG_RUNTIME_DIR", "/run/user/7"), 7);
        assertEquals(Path.of("/run/user/7/xq/node.sock"), x.socketPath());
        assertEquals("video", x.group());
        assertEquals(8, x.slots());
        assertEquals(9, x.maxSessions());
        assertEquals(false, x.enabled());
        assertEquals(false, x.interruptProcesses());
        assertEquals(true, HostSettings.from(config("", "", 8, 9, true, true), k -> null, Map.of(), 7).interruptProcesses());
    }

    @Test
    void badValuesAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> HostSettings.from(config("", "", 0, 256, true), k -> null, Map.of(), 0));
        assertTrue(e.getMessage().contains("slots 0 is out of range [1, 1024]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HostSettings.from(config("", "", 1025, 256, true), k -> null, Map.of(), 0));
        assertTrue(e.getMessage().contains("1025"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HostSettings.from(config("", "", 64, 0, true), k -> null, Map.of(), 0));
        assertTrue(e.getMessage().contains("maxSessions 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HostSettings.from(config("rel/node.sock", "", 64, 1, true), k -> null, Map.of(), 0));
        assertTrue(e.getMessage().contains("not an absolute path"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HostSettings.of(Path.of("/tmp/" + "a".repeat(110))));
        assertTrue(e.getMessage().contains("under 108 bytes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HostSettings.of(Path.of("/tmp/a b/node.sock")));
        assertTrue(e.getMessage().contains("space"), e.getMessage());
    }
}
