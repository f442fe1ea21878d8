package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.inject.Inject;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * An operator records the node with JFR while it schedules: the runtime's events are in the
 * recording and scheduling goes on (while a recording runs the JDK rewrites event classes to
 * call into jdk.jfr.internal.event, which bundle class loaders must reach through boot delegation;
 * without it every decision used to fail half-way and a suspended queue stayed suspended).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FlightRecorderIT {

    private static final Duration GENEROUS = Duration.ofSeconds(30);

    @Inject
    XQueueService xq;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void eventsAreRecordedAndSchedulingGoesOnWhileARecordingRuns() throws Exception {
        Path file = Files.createTempFile("xq-it", ".jfr");
        Map<String, Integer> seen = new HashMap<>();
        try (Recording rec = new Recording()) {
            for (String e : new String[] {"dev.xq.Decision", "dev.xq.Suspend", "dev.xq.Resume", "dev.xq.Command"}) {
                rec.enable(e);
            }
            rec.start();
            try (XQueue lo = xq.create(QueueOptions.on("sim0").named("it-jfr-lo").with(new Hint.Priority(1)));
                 XQueue hi = xq.create(QueueOptions.on("sim0").named("it-jfr-hi").with(new Hint.Priority(5)))) {
                for (int i = 0; i < 40; i++) {
                    lo.submit(Command.spin(500));
                }
                Thread.sleep(5);
                for (int round = 0; round < 5; round++) {
                    for (int i = 0; i < 4; i++) {
                        hi.submit(Command.spin(200));
                    }
                    hi.waitAll(GENEROUS);
                    Thread.sleep(3);
                }
                lo.waitAll(GENEROUS);
                assertEquals("every low-priority command completed", 40, lo.status().completed());
                assertEquals("every high-priority command completed", 20, hi.status().completed());
            }
            rec.stop();
            rec.dump(file);
        }
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            seen.merge(e.getEventType().getName(), 1, Integer::sum);
            if (e.getEventType().getName().equals("dev.xq.Command")) {
                // a command's host times are in order: entered, submitted, launched, run; the launch
                // call's end is 0 when the command's end was reported before that call returned (its
                // thread held on a busy host: "0: not yet known", SubmissionImpl)
                long enter = e.getLong("enterNanos");
                long submit = e.getLong("submitNanos");
                long begin = e.getLong("launchBeginNanos");
                long end = e.getLong("launchEndNanos");
                assertTrue("times of " + e, 0 < enter && enter <= submit && submit <= begin && (begin <= end || end == 0)
                        && e.getLong("startNanos") <= e.getLong("endNanos") && e.getLong("launchThread") != 0);
                assertTrue("queue of " + e, e.getString("queue").startsWith("it-jfr-"));
            }
        }
        Files.deleteIfExists(file);
        assertTrue("decisions recorded: " + seen, seen.getOrDefault("dev.xq.Decision", 0) > 0);
        assertTrue("the low queue was suspended for the high one: " + seen, seen.getOrDefault("dev.xq.Suspend", 0) > 0);
        assertTrue("and resumed: " + seen, seen.getOrDefault("dev.xq.Resume", 0) > 0);
        assertEquals("one command event per command: " + seen, 60, (int) seen.getOrDefault("dev.xq.Command", 0));
    }
}
