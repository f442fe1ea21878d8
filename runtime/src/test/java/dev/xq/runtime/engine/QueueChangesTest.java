package dev.xq.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.xq.api.Hint;
import dev.xq.external.spi.ExternalQueue;
import dev.xq.external.spi.ExternalQueueSpec;
import dev.xq.runtime.log.RuntimeLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The node's record of opens and closes, which the scheduler's awake list follows (Scheduler.Source#queueChangesSince). */
class QueueChangesTest {

    private final XqCore core = new XqCore(RuntimeLog.NONE); // not started

    @AfterEach
    void stop() {
        core.stop();
    }

    private ExternalQueue open(String name) {
        return core.open(new ExternalQueueSpec(name, "cuda0", "7:p", 7, List.of(new Hint.Priority(1)), null),
                new ContentionScaleTest.Counted(new AtomicLong()));
    }

    @Test
    void opensAndClosesAfterAVersionInOrderAndNoneBeyondTheRecord() {
        open("p/a");
        long v = core.queuesVersion();
        ExternalQueue b = open("p/b");
        core.find(b.handle()).orElseThrow().close();
        var c = core.queueChangesSince(v);
        assertEquals(core.queuesVersion(), c.version());
        assertEquals(List.of(true, false), c.opened());
        assertEquals(List.of(b.handle(), b.handle()), c.queues().stream().map(q -> q.handle()).toList());
        assertEquals(0, core.queueChangesSince(core.queuesVersion()).queues().size(), "nothing since now");
        assertNull(core.queueChangesSince(core.queuesVersion() + 5), "a version this node never gave: read the whole list");
        // more changes than the record keeps: the oldest versions are no longer covered
        long old = core.queuesVersion();
        List<ExternalQueue> many = new ArrayList<>();
        for (int i = 0; i < XqCore.CHANGES_KEPT / 2 + 1; i++) {
            ExternalQueue q = open("p/m" + i);
            many.add(q);
        }
        for (ExternalQueue q : many) {
            core.find(q.handle()).orElseThrow().close();
        }
        assertNull(core.queueChangesSince(old), "older than the record");
        assertEquals(1, core.queueChangesSince(core.queuesVersion() - 1).queues().size());
    }
}
