package dev.xq.host;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The node's heartbeat in every live session's shared memory (docs/processes.md, "Faults"): run
 * by the host's timer every {@link #PERIOD_MILLIS}, it writes {@code System.nanoTime()} into each
 * header. A node that stops (SIGSTOP, a debugger, a JVM that hangs) keeps its sockets open and says
 * nothing, so a process held in a launch or a synchronisation would wait for ever; the interposer
 * watches the value and, once it stopped moving for a second, lets its held work go and runs
 * unscheduled. No socket traffic: a process that is not waiting pays nothing.
 */
final class Heartbeat implements Runnable {

    /** How often the value moves; the interposer gives up after a second without a move. */
    static final long PERIOD_MILLIS = 100;

    private final Set<SharedMemory> memories = ConcurrentHashMap.newKeySet();

    /** Beats into m from now on (a first beat at once), until it is unmapped. */
    void add(SharedMemory m) {
        if (m.beat(System.nanoTime())) {
            memories.add(m);
        }
    }

    /** @return the mappings beaten into (tests) */
    int watched() {
        return memories.size();
    }

    /** One beat into every mapping; the unmapped ones are forgotten. Never throws: the timer would drop it. */
    @Override
    public void run() {
        try {
            long now = System.nanoTime();
            memories.removeIf(m -> !m.beat(now));
        } catch (RuntimeException e) {
            // a beat is missed; the next one comes 100 ms later
        }
    }
}
