package dev.xq.runtime.scheduler;

import dev.xq.api.SchedulerControl;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policies the node knows, by name, and the ones set aside. Several registrations may share a
 * name only when they come from one bundle (two versions overlapping during an update; the
 * scheduler refuses another bundle's); the first that is not set aside decides. Not thread-safe:
 * the scheduler guards it with its monitor.
 */
final class PolicyRegistry {

    /**
     * A registered policy; {@code id} tells re-registrations apart; {@code bounded}: registered as
     * {@link dev.xq.policy.spi.Policy#BOUNDED_PROPERTY}; {@link #inline()}: may decide on a posting
     * thread now (bounded, its bundle trusted with such threads, never overran on one), kept by
     * the selection.
     */
    static final class Registered {
        private final String name;
        private final dev.xq.policy.spi.Policy policy;
        private final String bundle;
        private final long id;
        private final boolean bounded;
        private volatile boolean inline;
        /** Retried after being set aside and not through its clean period yet ({@link RetryBackoff}): decides on the loop only. */
        private volatile boolean probation;
        /** When its clean period ends (the clock of {@link PolicySelection}), while on probation. */
        private volatile long probationEndsNanos;

        Registered(String name, dev.xq.policy.spi.Policy policy, String bundle, long id, boolean bounded) {
            this.name = name;
            this.policy = policy;
            this.bundle = bundle;
            this.id = id;
            this.bounded = bounded;
            boolean space;
            try {
                space = policy.decidesSpace();
            } catch (RuntimeException | LinkageError e) {
                space = false; // a policy built against the SPI before 1.3, or one that fails to say: time only
            }
            this.decidesSpace = space;
        }

        /** Whether the policy decides space itself ({@link dev.xq.policy.spi.Policy#decidesSpace()}), asked once. */
        private final boolean decidesSpace;

        boolean decidesSpace() {
            return decidesSpace;
        }

        String name() {
            return name;
        }

        dev.xq.policy.spi.Policy policy() {
            return policy;
        }

        String bundle() {
            return bundle;
        }

        long id() {
            return id;
        }

        boolean bounded() {
            return bounded;
        }

        boolean inline() {
            return inline;
        }

        void inline(boolean on) {
            inline = on;
        }

        boolean probation() {
            return probation;
        }

        long probationEndsNanos() {
            return probationEndsNanos;
        }

        void probation(boolean on, long endsNanos) {
            probationEndsNanos = endsNanos;
            probation = on;
        }
    }

    private final Map<String, List<Registered>> byName = new LinkedHashMap<>();
    private final Map<Long, String> setAside = new HashMap<>();
    /** Registrations whose trial decision never returned: never tried again, never selectable. */
    private final java.util.Set<Long> stuck = new java.util.HashSet<>();

    void add(Registered r) {
        byName.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(r);
    }

    /** @return the name the registration had, or null if it was not registered */
    String remove(long id) {
        String gone = null;
        for (var it = byName.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getValue().removeIf(r -> r.id() == id)) {
                gone = e.getKey();
                if (e.getValue().isEmpty()) {
                    it.remove();
                }
            }
        }
        setAside.remove(id);
        stuck.remove(id);
        return gone;
    }

    /** @return the registration that decides for {@code name}: the first one not set aside, or null */
    Registered lookup(String name) {
        List<Registered> l = byName.get(name);
        if (l != null) {
            for (Registered r : l) {
                if (!setAside.containsKey(r.id())) {
                    return r;
                }
            }
        }
        return null;
    }

    boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** @return every registration under {@code name} */
    List<Registered> all(String name) {
        List<Registered> l = byName.get(name);
        return l == null ? List.of() : List.copyOf(l);
    }

    void setAside(Registered r, String reason) {
        setAside.put(r.id(), reason);
    }

    /**
     * Selecting a name again is how an operator gives its set-aside registrations another chance;
     * not those stuck in a trial (another try would only leave another thread behind).
     */
    void clearSetAside(String name) {
        for (Registered r : all(name)) {
            if (!stuck.contains(r.id())) {
                setAside.remove(r.id());
            }
        }
    }

    /** The back-off after a trip is over ({@link RetryBackoff}): the registration decides again. */
    void clearSetAside(Registered r) {
        if (!stuck.contains(r.id())) {
            setAside.remove(r.id());
        }
    }

    boolean isSetAside(Registered r) {
        return setAside.containsKey(r.id());
    }

    /** The registration's trial decision never returned. */
    void stuck(Registered r) {
        stuck.add(r.id());
        setAside.put(r.id(), TrialDecisions.STUCK);
    }

    boolean isStuck(Registered r) {
        return stuck.contains(r.id());
    }

    /** @return whether every registration under {@code name} is stuck in a trial (none can ever decide) */
    boolean allStuck(String name) {
        List<Registered> l = all(name);
        return !l.isEmpty() && l.stream().allMatch(this::isStuck);
    }

    String reason(Registered r) {
        return setAside.getOrDefault(r.id(), "");
    }

    /** @return native first, then the registered names in registration order */
    List<String> names() {
        List<String> n = new ArrayList<>();
        n.add(SchedulerControl.NATIVE);
        n.addAll(byName.keySet());
        return n;
    }

    /** One line per name (its first registration), for {@code xq:policies}. */
    List<SchedulerControl.PolicyInfo> infos(String active) {
        List<SchedulerControl.PolicyInfo> out = new ArrayList<>();
        for (var e : byName.entrySet()) {
            Registered r = e.getValue().getFirst();
            String description;
            try {
                description = r.policy().description();
            } catch (RuntimeException ex) {
                description = "(description failed: " + ex + ")";
            }
            out.add(new SchedulerControl.PolicyInfo(e.getKey(), description, r.bundle(), active.equals(e.getKey()), reason(r)));
        }
        return out;
    }
}
