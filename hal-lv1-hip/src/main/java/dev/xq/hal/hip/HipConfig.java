package dev.xq.hal.hip;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of the HIP adapter (PID {@code dev.xq.hal.hip}). */
@ObjectClassDefinition(id = HipConfig.PID, name = "XQ HIP adapter",
        description = "Where libamdhip64 is, which code objects kernel and spin commands use, and how completions are polled")
@interface HipConfig {

    String PID = "dev.xq.hal.hip";

    @AttributeDefinition(name = "Library", required = false,
            description = "Path or file name of libamdhip64. Empty: the environment variable XQ_HIP_LIB, else "
                    + "libamdhip64.so, libamdhip64.so.6, libamdhip64.so.5 and the same under /opt/rocm/lib. "
                    + "The XQ HIP test double is hal-lv1-hip/target/hipdouble/libamdhip64.so")
    String library() default "";

    @AttributeDefinition(name = "Spin module", required = false,
            description = "Path of a code object (HSACO) exporting extern \"C\" __global__ void spin(uint64_t micros); "
                    + "needed for spin commands. Empty: the environment variable XQ_HIP_SPIN_MODULE, else spin "
                    + "commands are refused. With the test double: hal-lv1-hip/target/hipdouble/xq-spin.hipdouble")
    String spinModule() default "";

    @AttributeDefinition(name = "Kernel modules", required = false,
            description = "Code objects that kernel commands may name, each as name=path")
    String[] modules() default {};

    @AttributeDefinition(name = "Spin blocks per compute unit", min = "1", max = "1024",
            description = "A spin command launches this many blocks per compute unit, so that it fills the device")
    int spinBlocksPerCu() default 8;

    @AttributeDefinition(name = "Spin block threads", min = "1", max = "1024",
            description = "Threads per block of a spin command")
    int spinBlockThreads() default 256;

    @AttributeDefinition(name = "Shortest poll interval (us)", min = "1", max = "100000",
            description = "The completion poller waits this long after it saw progress")
    int pollMinMicros() default 5;

    @AttributeDefinition(name = "Longest poll interval (us)", min = "1", max = "100000",
            description = "Without progress the poller's wait doubles up to this; it bounds how late a completion is seen")
    int pollMaxMicros() default 200;
}
