package dev.xq.hal.kfd;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Test-side control of the LD_PRELOAD fake driver (src/test/c/fakekfd.c) through its test-only
 * control ioctl, on a descriptor of its own: creating queues plays the HIP runtime's part.
 */
final class FakeKfd implements AutoCloseable {

    static final long IOC_CONTROL = KfdAbi.ioc(3, 0xf0, 24);
    // Fake op indices for error injection (fakekfd.c E_*).
    static final int VERSION = 0, RUNTIME_ENABLE = 1, ENABLE = 2, SUSPEND = 3, RESUME = 4, SNAPSHOT = 5;

    private final int fd;

    FakeKfd() {
        Libc.Result r = Libc.open("/dev/kfd", Libc.O_RDWR_CLOEXEC);
        if (r.failed()) {
            throw new IllegalStateException("fake /dev/kfd not preloaded: " + Libc.errnoName(r.errno()));
        }
        fd = r.value();
        control(8, 0, 0); // reset
    }

    /** @return whether this JVM runs with the fake preloaded */
    static boolean preloaded() {
        String p = System.getenv("LD_PRELOAD");
        return p != null && p.contains("libfakekfd");
    }

    int[] control(int cmd, int queueId, int value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment c = arena.allocate(24, 8);
            c.set(JAVA_INT, 0, cmd);
            c.set(JAVA_INT, 4, queueId);
            c.set(JAVA_INT, 8, value);
            Libc.Result r = Libc.ioctl(fd, IOC_CONTROL, c);
            if (r.failed()) {
                throw new IllegalStateException("fake control " + cmd + " failed: " + Libc.errnoName(r.errno()));
            }
            return new int[] {c.get(JAVA_INT, 12), c.get(JAVA_INT, 16), c.get(JAVA_INT, 20)};
        }
    }

    int createQueue(int gpuId) {
        return control(1, 0, gpuId)[0];
    }

    boolean suspended(int queueId) {
        return control(2, queueId, 0)[0] != 0;
    }

    int suspends(int queueId) {
        return control(2, queueId, 0)[1];
    }

    int resumes(int queueId) {
        return control(2, queueId, 0)[2];
    }

    void inject(int op, String errno) {
        control(3, op, errno == null ? 0 : Libc.errnoValue(errno));
    }

    void submit(int queueId, int packets) {
        control(4, queueId, packets);
    }

    void consume(int queueId, int packets) {
        control(5, queueId, packets);
    }

    void hwError(int queueId, boolean on) {
        control(7, queueId, on ? 1 : 0);
    }

    @Override
    public void close() {
        control(8, 0, 0);
        Libc.close(fd);
    }
}
