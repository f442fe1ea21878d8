package dev.xq.hal.kfd;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Compares every Java layout and ioctl number of {@link KfdAbi} with what gcc computes from the
 * C declarations in {@code src/test/c/kfd_abi.c} (upstream KFD 1.13+ structs restated as test
 * data; GET_VERSION from the system's {@code linux/kfd_ioctl.h} when installed).
 */
class KfdAbiTest {

    private static Map<String, String> gcc;

    @BeforeAll
    static void runGccProgram() throws Exception {
        Path exe = NativeBuild.compile(Path.of("src/test/c/kfd_abi.c"), Path.of("target/native/kfd_abi"));
        gcc = new LinkedHashMap<>();
        for (String line : NativeBuild.run(List.of(exe.toAbsolutePath().toString())).split("\n")) {
            String[] kv = line.trim().split(" ");
            gcc.put(kv[0], kv[1]);
        }
    }

    private static long num(String key) {
        String v = gcc.get(key);
        assertNotNull(v, "gcc program printed no " + key);
        return v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v);
    }

    private static void checkStruct(String cName, GroupLayout layout) {
        assertEquals(num("sizeof." + cName), layout.byteSize(), "sizeof " + cName);
        int fields = 0;
        for (MemoryLayout member : layout.memberLayouts()) {
            String field = member.name().orElseThrow();
            assertEquals(num("offsetof." + cName + "." + field), layout.byteOffset(groupElement(field)),
                    "offsetof " + cName + "." + field);
            fields++;
        }
        assertTrue(fields > 0);
    }

    @Test
    void plainStructsMatchGcc() {
        checkStruct("kfd_ioctl_get_version_args", KfdAbi.GET_VERSION_ARGS);
        checkStruct("kfd_ioctl_runtime_enable_args", KfdAbi.RUNTIME_ENABLE_ARGS);
        checkStruct("kfd_runtime_info", KfdAbi.RUNTIME_INFO);
        checkStruct("kfd_queue_snapshot_entry", KfdAbi.QUEUE_SNAPSHOT_ENTRY);
        checkStruct("xq_patched_preempt_queue_args", KfdAbi.PATCHED_PREEMPT_ARGS);
        assertEquals(num("sizeof.kfd_ioctl_dbg_trap_enable_args"), KfdAbi.DBG_ENABLE.byteSize());
        assertEquals(num("sizeof.kfd_ioctl_dbg_trap_suspend_queues_args"), KfdAbi.DBG_SUSPEND.byteSize());
        assertEquals(num("sizeof.kfd_ioctl_dbg_trap_resume_queues_args"), KfdAbi.DBG_RESUME.byteSize());
        assertEquals(num("sizeof.kfd_ioctl_dbg_trap_queue_snapshot_args"), KfdAbi.DBG_QUEUE_SNAPSHOT.byteSize());
    }

    @Test
    void dbgTrapArgsAndEveryUnionFieldMatchGcc() {
        assertEquals(num("sizeof.kfd_ioctl_dbg_trap_args"), KfdAbi.DBG_TRAP_ARGS.byteSize());
        assertEquals(num("offsetof.kfd_ioctl_dbg_trap_args.pid"), KfdAbi.DBG_TRAP_ARGS.byteOffset(groupElement("pid")));
        assertEquals(num("offsetof.kfd_ioctl_dbg_trap_args.op"), KfdAbi.DBG_TRAP_ARGS.byteOffset(groupElement("op")));
        int checked = 0;
        for (MemoryLayout member : KfdAbi.DBG_UNION.memberLayouts()) {
            String m = member.name().orElseThrow();
            for (MemoryLayout field : ((GroupLayout) member).memberLayouts()) {
                String f = field.name().orElseThrow();
                assertEquals(num("offsetof.kfd_ioctl_dbg_trap_args." + m + "." + f), KfdAbi.unionOffset(m, f),
                        "offsetof kfd_ioctl_dbg_trap_args." + m + "." + f);
                checked++;
            }
        }
        assertEquals(15, checked, "union fields compared");
    }

    @Test
    void ioctlNumbersMatchGcc() {
        assertEquals(num("ioctl.GET_VERSION"), KfdAbi.IOC_GET_VERSION);
        assertEquals(num("ioctl.RUNTIME_ENABLE"), KfdAbi.IOC_RUNTIME_ENABLE);
        assertEquals(num("ioctl.DBG_TRAP"), KfdAbi.IOC_DBG_TRAP);
        assertEquals(num("ioctl.PATCHED_PREEMPT"), KfdAbi.IOC_PATCHED_PREEMPT);
        assertEquals(num("ioctl.PATCHED_RESUME"), KfdAbi.IOC_PATCHED_RESUME);
        assertEquals(num("ioctl.PATCHED_PREEMPT_W"), KfdAbi.IOC_PATCHED_PREEMPT_W);
        assertEquals(num("ioctl.PATCHED_RESUME_W"), KfdAbi.IOC_PATCHED_RESUME_W);
        // The facts file's figures, as a second independent source.
        assertEquals(0x80084b01L, KfdAbi.IOC_GET_VERSION);
        assertEquals(0xc0104b25L, KfdAbi.IOC_RUNTIME_ENABLE);
        assertEquals(0xc0204b26L, KfdAbi.IOC_DBG_TRAP);
    }

    @Test
    void statusBitsAndExceptionMaskMatchGcc() {
        assertEquals(num("const.QUEUE_ERROR_BIT"), KfdAbi.QUEUE_ERROR_BIT & 0xffffffffL);
        assertEquals(num("const.QUEUE_INVALID_BIT"), KfdAbi.QUEUE_INVALID_BIT & 0xffffffffL);
        assertEquals(num("const.EC_QUEUE_NEW_MASK"), KfdAbi.EC_QUEUE_NEW_MASK);
    }
}
