package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.DeviceInfo;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * The HIP adapter end to end through its production FFM code, against the CPU-backed test double
 * of libamdhip64 (no AMD GPU here): the node points the adapter at the double through Config
 * Admin, and {@code hpf} preempts a background tenant at level 1 for a foreground one.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HipDoubleIT {

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Inject
    ConfigurationAdmin cm;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void hpfPreemptsABackgroundTenantOnTheHipDouble() throws Exception {
        Path dir = Path.of(System.getProperty("xq.hipdouble.dir", "../hal-lv1-hip/target/hipdouble"));
        Path lib = dir.resolve("libamdhip64.so");
        Path spin = dir.resolve("xq-spin.hipdouble");
        assertTrue("the HIP test double is built by hal-lv1-hip: " + lib, Files.isRegularFile(lib) && Files.isRegularFile(spin));
        org.osgi.service.cm.Configuration c = cm.getConfiguration("dev.xq.hal.hip", "?");
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("library", lib.toAbsolutePath().toString());
        props.put("spinModule", spin.toAbsolutePath().toString());
        c.update(props);
        try {
            assertTrue("hip0 appears once the adapter uses the double: " + xq.devices(),
                    XqNode.eventually(15_000, () -> xq.devices().stream().map(DeviceInfo::id).anyMatch("hip0"::equals)));
            scheduler.selectPolicy("hpf");
            try (XQueue bg = xq.create(QueueOptions.on("hip0").named("hip-bg").with(new Hint.Priority(1)));
                 XQueue fg = xq.create(QueueOptions.on("hip0").named("hip-fg").with(new Hint.Priority(2)))) {
                List<Submission> bgSubs = new ArrayList<>();
                AtomicBoolean stop = new AtomicBoolean();
                Thread bgLoad = Thread.ofPlatform().name("hip-bg-load").start(() -> {
                    List<Submission> open = new ArrayList<>();
                    while (!stop.get()) {
                        open.removeIf(Submission::isDone);
                        if (open.size() < 16) {
                            Submission s = bg.submit(Command.spin(300));
                            synchronized (bgSubs) {
                                bgSubs.add(s);
                            }
                            open.add(s);
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                });
                boolean sawBgSuspended = false;
                List<Submission> fgSubs = new ArrayList<>();
                for (int task = 0; task < 5; task++) {
                    Thread.sleep(20);
                    Submission last = null;
                    for (int i = 0; i < 10; i++) {
                        last = fg.submit(Command.spin(300));
                        fgSubs.add(last);
                    }
                    long until = System.nanoTime() + 2_000_000_000L;
                    while (!last.isDone() && System.nanoTime() < until) {
                        sawBgSuspended |= bg.status().suspendedByScheduler();
                        Thread.sleep(0, 200_000);
                    }
                    last.await(Duration.ofSeconds(10));
                }
                stop.set(true);
                bgLoad.join(10_000);
                bg.waitAll(Duration.ofSeconds(30));
                fg.waitAll(Duration.ofSeconds(30));
                assertTrue("hpf held the background tenant back while the foreground one had work", sawBgSuspended);
                for (Submission s : fgSubs) {
                    assertTrue("fg device time >= 300 us", s.await(Duration.ZERO).deviceNanos() >= 300_000);
                }
                for (XQueue q : List.of(bg, fg)) {
                    XQueueStatus st = q.status();
                    assertEquals("nothing lost on " + st.name() + ": " + st, st.submitted(), st.completed());
                }
                synchronized (bgSubs) {
                    assertEquals(bgSubs.size(), bg.status().submitted());
                }
            }
        } finally {
            c.delete();
            scheduler.selectPolicy(SchedulerControl.NATIVE);
        }
        assertTrue("without the double the adapter has no device again",
                XqNode.eventually(15_000, () -> xq.devices().stream().map(DeviceInfo::id).noneMatch("hip0"::equals)));
    }
}
