package dev.xq.hal.cuda;

/** Where the adapter's log lines go: the OSGi Log Service in a node, nowhere or a list in tests. */
interface CudaLog {

    void info(String message);

    void warn(String message, Throwable cause);

    /** Drops everything. */
    CudaLog NONE = new CudaLog() {
        @Override
        public void info(String message) {
        }

        @Override
        public void warn(String message, Throwable cause) {
        }
    };
}
