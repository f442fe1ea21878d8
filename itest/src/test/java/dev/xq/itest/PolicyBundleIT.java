package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.Command;
import dev.xq.api.Hint;
import dev.xq.api.QueueOptions;
import dev.xq.api.SchedulerControl;
import dev.xq.api.Submission;
import dev.xq.api.XQueue;
import dev.xq.api.XQueueService;
import dev.xq.api.XQueueStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/**
 * The deciding policy's bundle goes away and comes back, again and again — stopped and started,
 * updated in place, uninstalled and installed again — while queues keep submitting: no command
 * may be lost and no queue may stay stuck.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class PolicyBundleIT {

    private static final String BUNDLE = "dev.xq.policy.fixedpriority";
    private static final int QUEUES = 4;
    private static final int CYCLES = 5;
    /** Most commands a submitter leaves unfinished, so a starved queue's backlog stays small. */
    private static final int OUTSTANDING = 32;

    @Inject
    BundleContext ctx;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    @Test
    public void stoppingUpdatingAndUninstallingThePolicyBundleUnderLoadLosesNothing() throws Exception {
        scheduler.selectPolicy("hpf");
        Bundle policyBundle = bundle(BUNDLE);
        assertNotNull(BUNDLE + " installed", policyBundle);
        long swapsBefore = scheduler.stats().swaps();

        List<XQueue> queues = new ArrayList<>();
        List<ConcurrentLinkedQueue<Submission>> submitted = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> submitErrors = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> submitters = new ArrayList<>();
        try {
            for (int i = 0; i < QUEUES; i++) {
                XQueue q = xq.create(QueueOptions.on("sim0").named("load-" + i).with(new Hint.Priority(i)));
                queues.add(q);
                ConcurrentLinkedQueue<Submission> subs = new ConcurrentLinkedQueue<>();
                submitted.add(subs);
                Thread t = Thread.ofPlatform().name("submitter-" + i).start(() -> submitLoop(q, subs, stop, submitErrors));
                submitters.add(t);
            }
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                Thread.sleep(150);
                policyBundle.stop();
                assertTrue("cycle " + cycle + ": native takes over when hpf leaves, active " + scheduler.activePolicy(),
                        XqNode.eventually(10_000, () -> SchedulerControl.NATIVE.equals(scheduler.activePolicy())));
                Thread.sleep(150);
                policyBundle.start();
                assertTrue("cycle " + cycle + ": hpf decides again when it is back, active " + scheduler.activePolicy(),
                        XqNode.eventually(10_000, () -> "hpf".equals(scheduler.activePolicy())));
            }
            // Updated in place (what FileInstall does with a new jar), twice, under the same load.
            for (int update = 0; update < 2; update++) {
                Thread.sleep(150);
                policyBundle.update();
                assertTrue("update " + update + ": hpf decides again after the update, active " + scheduler.activePolicy(),
                        XqNode.eventually(10_000, () -> "hpf".equals(scheduler.activePolicy())));
            }
            // The active policy uninstalled: native decides; installed again: hpf is back.
            String location = policyBundle.getLocation();
            Thread.sleep(150);
            policyBundle.uninstall();
            assertTrue("native takes over when the active policy is uninstalled, active " + scheduler.activePolicy(),
                    XqNode.eventually(10_000, () -> SchedulerControl.NATIVE.equals(scheduler.activePolicy())));
            assertEquals("the selection stays", "hpf", scheduler.selectedPolicy());
            Thread.sleep(150);
            policyBundle = ctx.installBundle(location);
            policyBundle.start();
            assertTrue("hpf decides again once reinstalled, active " + scheduler.activePolicy(),
                    XqNode.eventually(10_000, () -> "hpf".equals(scheduler.activePolicy())));
        } finally {
            stop.set(true);
            for (Thread t : submitters) {
                t.join(10_000);
            }
        }
        if (!submitErrors.isEmpty()) {
            fail("submit failed: " + submitErrors.peek());
        }

        List<String> stuck = new ArrayList<>();
        for (XQueue q : queues) {
            try {
                q.waitAll(Duration.ofSeconds(30));
            } catch (TimeoutException e) {
                stuck.add(q.status().toString());
            }
        }
        assertTrue("queues stuck after the load stopped: " + stuck, stuck.isEmpty());

        long total = 0;
        for (int i = 0; i < QUEUES; i++) {
            XQueueStatus st = queues.get(i).status();
            int mine = submitted.get(i).size();
            total += mine;
            assertTrue("queue " + i + " got work", mine > 0);
            for (Submission s : submitted.get(i)) {
                assertTrue("queue " + i + " command " + s.sequence() + " has not ended", s.isDone());
            }
            assertEquals("queue " + i + " counted every submission", mine, st.submitted());
            assertEquals("queue " + i + ": submitted = completed + failed + cancelled: " + st,
                    st.submitted(), st.completed() + st.failed() + st.cancelled());
            assertEquals("queue " + i + ": a policy leaving fails or cancels nothing: " + st, st.submitted(), st.completed());
        }
        assertTrue("some load ran: " + total, total > QUEUES);
        assertTrue("the deciding policy changed at least once per cycle: " + (scheduler.stats().swaps() - swapsBefore),
                scheduler.stats().swaps() - swapsBefore >= CYCLES);
        for (XQueue q : queues) {
            q.close();
        }
    }

    private static void submitLoop(XQueue q, ConcurrentLinkedQueue<Submission> subs, AtomicBoolean stop,
                                   ConcurrentLinkedQueue<Throwable> errors) {
        long ended = 0;
        List<Submission> open = new ArrayList<>();
        try {
            while (!stop.get()) {
                open.removeIf(Submission::isDone);
                if (open.size() >= OUTSTANDING) {
                    Thread.sleep(1);
                    continue;
                }
                Submission s = q.submit(Command.spin(200));
                subs.add(s);
                open.add(s);
                ended++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            errors.add(new IllegalStateException("queue " + q.handle() + " after " + ended + " submissions", e));
        }
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : ctx.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        return null;
    }
}
