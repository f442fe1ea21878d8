package dev.xq.apibaseline;

import static java.lang.constant.ConstantDescs.CD_String;
import static java.lang.constant.ConstantDescs.CD_void;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import aQute.bnd.differ.Baseline;
import aQute.bnd.differ.DiffPluginImpl;
import aQute.bnd.osgi.EmbeddedResource;
import aQute.bnd.osgi.Jar;
import aQute.bnd.osgi.Processor;
import aQute.bnd.service.diff.Delta;
import aQute.bnd.version.Version;
import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassTransform;
import java.lang.constant.MethodTypeDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The baseline check that the build runs (bnd-baseline-maven-plugin, docs/api-versioning.md)
 * bites: bndlib's baseliner, the one the plugin runs, given the newest committed baseline jar
 * and a copy of it with one seeded change, flags a method added to a {@code @ConsumerType}
 * interface without a major bump and one added to a {@code @ProviderType} interface without a
 * minor bump, and accepts the same change once the package version is bumped. Fails if the
 * annotations went missing or were swapped (the delta would be wrong), or if the baseline
 * repository could not be read.
 */
class BaselineBitesTest {

    private static final Path REPO = Path.of(System.getProperty("basedir", "."), "baseline-repo/dev/xq/dev.xq.api");

    /** What one baseline run found: the package's result and whether the bundle version fails. */
    record Outcome(Baseline.Info pkg, boolean bundleMismatch, Version bundleSuggested) {
    }

    @Test
    void anUnchangedCopyOfTheBaselinePasses() throws Exception {
        Outcome o = baseline("dev.xq.hal.spi", null, null);
        assertEquals(Delta.UNCHANGED, o.pkg().packageDiff.getDelta());
        assertFalse(o.pkg().mismatch);
        assertFalse(o.bundleMismatch());
    }

    @Test
    void aMethodAddedToAConsumerTypeNeedsAMajorBump() throws Exception {
        Outcome o = baseline("dev.xq.hal.spi", "dev/xq/hal/spi/XpuDriver.class", null);
        assertEquals(Delta.MAJOR, o.pkg().packageDiff.getDelta(), "XpuDriver is @ConsumerType: " + o.pkg().packageDiff);
        assertTrue(o.pkg().mismatch, "no bump: the build must fail");
        assertEquals(new Version(o.pkg().olderVersion.getMajor() + 1, 0, 0), o.pkg().suggestedVersion);
        assertTrue(o.bundleMismatch(), "the bundle version must move too, to " + o.bundleSuggested());
        // a minor bump is not enough
        Version minor = new Version(o.pkg().olderVersion.getMajor(), o.pkg().olderVersion.getMinor() + 1, 0);
        assertTrue(baseline("dev.xq.hal.spi", "dev/xq/hal/spi/XpuDriver.class", minor).pkg().mismatch);
        assertFalse(baseline("dev.xq.hal.spi", "dev/xq/hal/spi/XpuDriver.class", o.pkg().suggestedVersion).pkg().mismatch);
    }

    @Test
    void aMethodAddedToAProviderTypeNeedsAMinorBump() throws Exception {
        Outcome o = baseline("dev.xq.hal.spi", "dev/xq/hal/spi/HwQueueListener.class", null);
        assertEquals(Delta.MINOR, o.pkg().packageDiff.getDelta(), "HwQueueListener is @ProviderType: " + o.pkg().packageDiff);
        assertTrue(o.pkg().mismatch, "no bump: the build must fail");
        Version minor = new Version(o.pkg().olderVersion.getMajor(), o.pkg().olderVersion.getMinor() + 1, 0);
        assertEquals(minor, o.pkg().suggestedVersion);
        assertTrue(o.bundleMismatch());
        assertFalse(baseline("dev.xq.hal.spi", "dev/xq/hal/spi/HwQueueListener.class", minor).pkg().mismatch);
    }

    @Test
    void aDefaultMethodAddedToAConsumerTypeIsMinor() throws Exception {
        Outcome o = baseline("dev.xq.hal.spi", "dev/xq/hal/spi/XpuDriver.class", null, true);
        assertEquals(Delta.MINOR, o.pkg().packageDiff.getDelta(), "a default method breaks no implementer: " + o.pkg().packageDiff);
        assertTrue(o.pkg().mismatch, "still a change: the build must fail without a minor bump");
    }

    @Test
    void policiesImplementPolicySoAMethodThereIsMajor() throws Exception {
        Outcome o = baseline("dev.xq.policy.spi", "dev/xq/policy/spi/Policy.class", null);
        assertEquals(Delta.MAJOR, o.pkg().packageDiff.getDelta());
        assertTrue(o.pkg().mismatch);
    }

    /**
     * Baselines a copy of the newest committed baseline jar against that jar.
     *
     * @param seededClass a class of the copy that gets one more abstract method, or null
     * @param exportVersion the version the copy exports {@code pkg} at, or null to keep it
     */
    private static Outcome baseline(String pkg, String seededClass, Version exportVersion) throws Exception {
        return baseline(pkg, seededClass, exportVersion, false);
    }

    /** @param asDefault whether the seeded method is a default method instead of an abstract one */
    private static Outcome baseline(String pkg, String seededClass, Version exportVersion, boolean asDefault) throws Exception {
        Path file = newestBaseline();
        try (Processor reporter = new Processor(); Jar older = new Jar(file.toFile()); Jar newer = new Jar(file.toFile())) {
            if (seededClass != null) {
                byte[] bytes;
                try (InputStream in = newer.getResource(seededClass).openInputStream()) {
                    bytes = in.readAllBytes();
                }
                ClassFile cf = ClassFile.of();
                MethodTypeDesc type = MethodTypeDesc.of(CD_void, CD_String);
                byte[] seeded = cf.transformClass(cf.parse(bytes), ClassTransform.endHandler(cb -> {
                    if (asDefault) {
                        cb.withMethodBody("seededByTheTest", type, ClassFile.ACC_PUBLIC, code -> code.return_());
                    } else {
                        cb.withMethod("seededByTheTest", type, ClassFile.ACC_PUBLIC | ClassFile.ACC_ABSTRACT, mb -> { });
                    }
                }));
                newer.putResource(seededClass, new EmbeddedResource(seeded, 0L));
            }
            if (exportVersion != null) {
                Manifest m = new Manifest(newer.getManifest());
                String exports = m.getMainAttributes().getValue("Export-Package");
                String was = pkg + ";version=\"" + exportsVersion(exports, pkg) + "\"";
                assertTrue(exports.contains(was), exports);
                m.getMainAttributes().putValue("Export-Package", exports.replace(was, pkg + ";version=\"" + exportVersion + "\""));
                newer.setManifest(m);
            }
            Baseline b = new Baseline(reporter, new DiffPluginImpl());
            Set<Baseline.Info> infos = b.baseline(newer, older, null);
            Baseline.Info info = infos.stream().filter(i -> i.packageName.equals(pkg)).findFirst().orElse(null);
            assertNotNull(info, pkg + " in the baseline report");
            return new Outcome(info, b.getBundleInfo().mismatch, b.getBundleInfo().suggestedVersion);
        }
    }

    private static String exportsVersion(String exports, String pkg) {
        int at = exports.indexOf(pkg + ";version=\"");
        assertTrue(at >= 0, pkg + " exported with a version: " + exports);
        int from = at + pkg.length() + ";version=\"".length();
        return exports.substring(from, exports.indexOf('"', from));
    }

    /** The jar of the highest version in the committed baseline repository. */
    static Path newestBaseline() throws IOException {
        try (Stream<Path> dirs = Files.list(REPO)) {
            Path dir = dirs.filter(Files::isDirectory)
                    .max(Comparator.comparing(d -> Version.parseVersion(d.getFileName().toString())))
                    .orElseThrow(() -> new AssertionError("no baseline in " + REPO));
            String v = dir.getFileName().toString();
            Path jar = dir.resolve("dev.xq.api-" + v + ".jar");
            assertTrue(Files.isRegularFile(jar), jar + " is missing");
            return jar;
        }
    }
}
