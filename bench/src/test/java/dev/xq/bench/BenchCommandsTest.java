package dev.xq.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandsTest {

    /** The --json file is replaced whole at each checkpoint: the new text, and no file left beside it. */
    @Test
    void aJsonFileIsReplacedWholeAndNothingIsLeftBeside(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("mix.json");
        BenchCommands.writeWhole(json, "{\"partial\": true}");
        assertEquals("{\"partial\": true}", Files.readString(json));
        BenchCommands.writeWhole(json, "{\"mixes\": []}");
        assertEquals("{\"mixes\": []}", Files.readString(json));
        assertFalse(Files.exists(tmp.resolve("mix.json.part")));
        try (var files = Files.list(tmp)) {
            assertEquals(1, files.count());
        }
    }
}
