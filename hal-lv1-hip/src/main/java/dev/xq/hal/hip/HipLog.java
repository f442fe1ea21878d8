package dev.xq.hal.hip;

/** Where the adapter's log lines go: the OSGi Log Service in a node, nowhere or a list in tests. */
interface HipLog {

    void info(String message);

    void warn(String message, Throwable cause);

    /** Drops everything. */
    HipLog NONE = new HipLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message, Throwable cause) {
        }
    };
}
