package dev.xq.http;

/** Settings for tests. */
final class Securities {
    static final String TOKEN = "0123456789abcdef-token";
    /** The uid the node runs as in tests. */
    static final int NODE_UID = 1000;
    /** Every connection is the node's own user's (as xcli's is when the operator runs it). */
    static final LoopbackPeers SAME_USER = peerIs(NODE_UID);

    private Securities() {
    }

    static HttpSettings loopback() {
        return new HttpSettings(true, 0, "127.0.0.1", true, "", false, 4096, java.util.List.of("xq-node.example"), HttpSettings.DEFAULT_MAX_CONNECTIONS,
                HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER, HttpSettings.DEFAULT_THREAD_NICE, HttpSettings.DEFAULT_PEN_CONNECTIONS,
                HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS);
    }

    static HttpSettings withToken(boolean onLoopback) {
        return new HttpSettings(true, 0, "0.0.0.0", false, TOKEN, onLoopback, 4096, java.util.List.of(), HttpSettings.DEFAULT_MAX_CONNECTIONS,
                HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER, HttpSettings.DEFAULT_THREAD_NICE, HttpSettings.DEFAULT_PEN_CONNECTIONS,
                HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS);
    }

    /** A node of {@link #NODE_UID} whose every loopback connection belongs to {@code uid}. */
    static LoopbackPeers peerIs(int uid) {
        return new LoopbackPeers(NODE_UID, c -> LoopbackPeers.Owner.of(uid));
    }

    /** Loopback, no token required there, but one configured (for other hosts and other local users). */
    static HttpSettings loopbackWithToken() {
        return new HttpSettings(true, 0, "127.0.0.1", true, TOKEN, false, 4096, java.util.List.of(), HttpSettings.DEFAULT_MAX_CONNECTIONS,
                HttpSettings.DEFAULT_MAX_CONNECTIONS_PER_USER, HttpSettings.DEFAULT_THREAD_NICE, HttpSettings.DEFAULT_PEN_CONNECTIONS,
                HttpSettings.DEFAULT_REFUSAL_DELAY_MILLIS);
    }
}
