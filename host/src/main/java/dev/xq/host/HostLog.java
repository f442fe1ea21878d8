package dev.xq.host;

/** Where the host's log lines go: the OSGi Log Service in a node, nowhere or a list in tests. */
interface HostLog {

    void info(String message);

    void warn(String message);

    void error(String message, Throwable cause);

    /** Drops everything. */
    HostLog NONE = new HostLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message) {
        }

        @Override
        public void error(String message, Throwable cause) {
        }
    };
}
