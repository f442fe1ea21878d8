package dev.xq.hal.kfd;

/** Where the provider's messages go: the OSGi logger in the bundle, nothing or a list in tests. */
interface KfdLog {
    void info(String message);

    void warn(String message, Throwable cause);

    /** Discards everything. */
    KfdLog NONE = new KfdLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message, Throwable cause) {
        }
    };
}
