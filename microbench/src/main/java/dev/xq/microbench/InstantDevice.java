package dev.xq.microbench;

import dev.xq.api.Command;
import dev.xq.api.PreemptionLevel;
import dev.xq.hal.spi.DeviceDescriptor;
import dev.xq.hal.spi.HwCommand;
import dev.xq.hal.spi.HwQueue;
import dev.xq.hal.spi.HwQueueListener;
import dev.xq.hal.spi.HwQueueOptions;
import dev.xq.hal.spi.XpuDriver;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A device whose commands end the moment they are launched, so that a benchmark sees only XQ's
 * own cost: submit, launch bookkeeping, completion bookkeeping.
 */
final class InstantDevice implements XpuDriver {
    @Override
    public String platform() {
        return "instant";
    }

    @Override
    public String status() {
        return "1 device";
    }

    @Override
    public List<DeviceDescriptor> devices() {
        return List.of(new DeviceDescriptor("i0", "instant", PreemptionLevel.BLOCK, 1, 0, Set.of("spin"), Map.of()));
    }

    @Override
    public HwQueue open(String deviceId, HwQueueOptions options, HwQueueListener listener) {
        return new HwQueue() {
            @Override
            public String platform() {
                return "instant";
            }

            @Override
            public String deviceId() {
                return "i0";
            }


            @Override
            public void check(Command command) {
            }

            @Override
            public void launch(HwCommand command) {
                long t = System.nanoTime();
                listener.completed(command, t, t);
            }

            @Override
            public void close() {
            }
        };
    }
}
