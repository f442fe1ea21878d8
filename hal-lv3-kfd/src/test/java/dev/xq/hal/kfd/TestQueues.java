package dev.xq.hal.kfd;

import dev.xq.api.Command;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.StreamHandle;
import java.lang.annotation.Annotation;
import java.util.Optional;

/** Test doubles for what the runtime hands a provider: a queue and a configuration. */
final class TestQueues {

    private TestQueues() {
    }

    /**
     * A queue that only reports platform and handle, as a HIP adapter queue would: a {@code Long}
     * handle is the stream address ({@link StreamHandle.Hip} on platform hip, else {@link StreamHandle.Cuda}).
     */
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
            public void check(Command command) {
            }

            @Override
            public void launch(HwCommand command) {
                throw new UnsupportedOperationException("not used by the provider");
            }

            @Override
            public <T> Optional<T> nativeHandle(Class<T> type) {
                Object h = handle instanceof Long a
                        ? ("hip".equals(platform) ? new StreamHandle.Hip(a) : new StreamHandle.Cuda(a))
                        : handle;
                return type.isInstance(h) ? Optional.of(type.cast(h)) : Optional.empty();
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
