package dev.xq.hal.kfd;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import java.lang.annotation.Annotation;

/** Test doubles for what the runtime hands a provider: a queue and a configuration. */
final class TestQueues {

    private TestQueues() {
    }

    /** A queue that only reports platform and handle, as a HIP adapter queue would. */
    static HwQueue queue(String platform, Object handle) {
        return new HwQueue() {
            @Override
            public String platform() {
                return platform;
            }

            @Override
            public String deviceId() {
                return platform + ":0";
            }

            @Override
            public PreemptionLevel maxLevel() {
                return PreemptionLevel.BLOCK;
            }

            @Override
            public void check(Command command) {
            }

            @Override
            public void launch(HwCommand command) {
                throw new UnsupportedOperationException("not used by the provider");
            }

            @Override
            public Object nativeHandle() {
                return handle;
            }

            @Override
            public void close() {
            }
        };
    }

    static KfdConfig config(String device, int graceMicros, int intervalMicros, String mode) {
        return new KfdConfig() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return KfdConfig.class;
            }

            @Override
            public String device() {
                return device;
            }

            @Override
            public int gracePeriodMicros() {
                return graceMicros;
            }

            @Override
            public int minSuspendIntervalMicros() {
                return intervalMicros;
            }

            @Override
            public String mode() {
                return mode;
            }
        };
    }
}
