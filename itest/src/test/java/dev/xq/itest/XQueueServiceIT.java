package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Command;
import dev.xq.api.CommandCancelledException;
import dev.xq.api.CommandResult;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/** A host application's view: the {@link XQueueService} found in the registry, on the simulated device. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class XQueueServiceIT {

    private static final Duration GENEROUS = Duration.ofSeconds(30);

    @Inject
    XQueueService xq;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void spinCommandsCompleteInOrder() throws Exception {
        try (XQueue q = xq.create(QueueOptions.on("sim0").named("it-order").with(new Hint.Priority(1)))) {
            assertEquals("sim0", q.device());
            assertTrue("the new queue is listed", xq.queues().stream().anyMatch(x -> x.handle() == q.handle()));
            List<Submission> subs = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                subs.add(q.submit(Command.spin(200)));
            }
            q.waitAll(GENEROUS);
            long lastEnd = Long.MIN_VALUE;
            for (int i = 0; i < subs.size(); i++) {
                CommandResult r = subs.get(i).await(GENEROUS);
                assertEquals("sequence of command " + i, i + 1, r.sequence());
                assertTrue("a 200 us spin takes at least 200 us of device time: " + r, r.deviceNanos() >= 200_000);
                assertTrue("starts no earlier than submitted: " + r, r.startNanos() >= r.submitNanos());
                assertTrue("commands of one queue run in order: " + r, r.endNanos() >= lastEnd);
                lastEnd = r.endNanos();
            }
            XQueueStatus st = q.status();
            assertEquals(25, st.submitted());
            assertEquals(25, st.completed());
            assertEquals(0, st.failed() + st.cancelled() + st.pending() + st.inFlight());
            assertTrue("device time accounted: " + st.runMicros(), st.runMicros() > 0);
        }
    }

    @Test
    public void closedQueueIsGoneAndRefusesWork() {
        XQueue q = xq.create(QueueOptions.on("sim0").named("it-closed"));
        long handle = q.handle();
        q.close();
        q.close(); // idempotent
        assertFalse("closed queue still listed", xq.find(handle).isPresent());
        try {
            q.submit(Command.spin(10));
            fail("a closed queue accepted a command");
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("closed"));
        }
    }

    @Test
    public void closeEndsEveryPendingCommand() throws Exception {
        XQueue q = xq.create(QueueOptions.on("sim0").named("it-close-pending"));
        List<Submission> subs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            subs.add(q.submit(Command.spin(5_000)));
        }
        q.close();
        int completed = 0;
        int cancelled = 0;
        for (Submission s : subs) {
            try {
                s.await(GENEROUS);
                completed++;
            } catch (CommandCancelledException e) {
                cancelled++;
            } catch (TimeoutException e) {
                fail("command " + s.sequence() + " did not end after close");
            }
        }
        assertEquals("every command ended", subs.size(), completed + cancelled);
        assertTrue("40 x 5 ms cannot all have run before close: cancelled " + cancelled, cancelled > 0);
        XQueueStatus st = q.status();
        assertEquals(st.submitted(), st.completed() + st.failed() + st.cancelled());
    }

    @Test
    public void unknownDeviceNamesTheKnownOnesAndCreatesNothing() {
        int before = xq.queues().size();
        try {
            xq.create(QueueOptions.on("gpu-that-is-not-there"));
            fail("a queue was created on an unknown device");
        } catch (IllegalArgumentException expected) {
            String m = expected.getMessage();
            assertTrue(m, m.contains("gpu-that-is-not-there"));
            assertTrue("lists the known devices: " + m, m.contains("sim0"));
        }
        assertEquals("no queue was created", before, xq.queues().size());
    }

    @Test
    public void devicesListTheSimulator() {
        assertTrue(xq.devices().toString(), xq.devices().stream().anyMatch(d -> d.id().equals("sim0") && d.platform().equals("sim")));
        assertTrue(xq.drivers().toString(), xq.drivers().stream().anyMatch(d -> d.platform().equals("sim")));
    }
}
