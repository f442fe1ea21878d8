package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.xq.api.SchedulerControl;
import dev.xq.api.XQueueService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.osgi.service.component.runtime.dto.UnsatisfiedReferenceDTO;

/** The whole node comes up: every bundle active, every component of every XQ bundle satisfied. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BundlesIT {

    @Inject
    BundleContext ctx;

    @Inject
    ServiceComponentRuntime scr;

    @Inject
    XQueueService xq;

    @Inject
    SchedulerControl scheduler;

    @Configuration
    public Option[] config() {
        return XqNode.options();
    }

    /** node/pom.xml holds the one list of XQ bundles; the itest pom must name the same, in the same order. */
    @Test
    public void theTestsRunTheNodesBundles() {
        java.nio.file.Path nodeList = java.nio.file.Path.of(System.getProperty("xq.home"), "node/target/bundles/xq-bundles.txt");
        assertEquals("itest/pom.xml's dev.xq dependencies against node/pom.xml's (" + nodeList + ")",
                XqNode.bundleList(nodeList), XqNode.XQ);
        assertTrue("at least the runtime and the sim: " + XqNode.XQ, XqNode.XQ.size() >= 2);
    }

    @Test
    public void everyBundleIsActive() {
        List<String> expected = new ArrayList<>(XqNode.PLATFORM);
        expected.addAll(XqNode.XQ);
        List<String> problems = new ArrayList<>();
        for (String name : expected) {
            Bundle b = bundle(name);
            if (b == null) {
                problems.add(name + " is not installed");
            } else if (b.getState() != Bundle.ACTIVE) {
                problems.add(name + " is " + stateName(b.getState()));
            }
        }
        for (Bundle b : ctx.getBundles()) {
            boolean fragment = b.getHeaders().get("Fragment-Host") != null;
            if (!fragment && b.getState() != Bundle.ACTIVE) {
                problems.add(b.getSymbolicName() + " is " + stateName(b.getState()));
            }
        }
        if (!problems.isEmpty()) {
            fail("bundles not active: " + String.join("; ", problems));
        }
    }

    @Test
    public void everyComponentOfEveryXqBundleIsSatisfied() throws InterruptedException {
        // DS activates asynchronously; give it a moment before judging.
        List<String> problems = new ArrayList<>();
        XqNode.eventually(10_000, () -> {
            problems.clear();
            problems.addAll(componentProblems());
            return problems.isEmpty();
        });
        if (!problems.isEmpty()) {
            fail("components not satisfied:\n  " + String.join("\n  ", problems));
        }
    }

    @Test
    public void theRuntimeComponentsHaveSomethingToSchedule() {
        assertTrue("sim0 in " + xq.devices(), xq.devices().stream().anyMatch(d -> d.id().equals("sim0")));
        List<String> policies = scheduler.policies().stream().map(SchedulerControl.PolicyInfo::name).toList();
        for (String p : List.of("hpf", "edf", "drf")) {
            assertTrue(p + " in " + policies, policies.contains(p));
        }
        assertNotNull(scheduler.activePolicy());
    }

    @Test
    public void everyXqBundleDeclaresComponents() {
        for (String name : XqNode.XQ) {
            Bundle b = bundle(name);
            assertNotNull(name, b);
            if (b.getHeaders().get("Service-Component") != null) {
                assertTrue(name + " declares components but SCR knows none",
                        !scr.getComponentDescriptionDTOs(b).isEmpty());
            }
        }
        assertEquals("the runtime's components", true,
                !scr.getComponentDescriptionDTOs(bundle("dev.xq.runtime")).isEmpty());
    }

    private List<String> componentProblems() {
        List<String> problems = new ArrayList<>();
        for (String name : XqNode.XQ) {
            Bundle b = bundle(name);
            if (b == null) {
                problems.add(name + ": not installed");
                continue;
            }
            for (ComponentDescriptionDTO d : scr.getComponentDescriptionDTOs(b)) {
                if (!scr.isComponentEnabled(d)) {
                    problems.add(name + "/" + d.name + ": disabled");
                    continue;
                }
                // A component that requires a configuration has none until one is made
                // (factory configurations for extra devices): that is its normal resting state.
                for (ComponentConfigurationDTO c : scr.getComponentConfigurationDTOs(d)) {
                    if (c.state == ComponentConfigurationDTO.SATISFIED || c.state == ComponentConfigurationDTO.ACTIVE) {
                        continue;
                    }
                    String why = switch (c.state) {
                        case ComponentConfigurationDTO.UNSATISFIED_REFERENCE -> "unsatisfied references "
                                + Arrays.stream(c.unsatisfiedReferences).map(BundlesIT::reference).collect(Collectors.joining(", "));
                        case ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION -> "waiting for configuration " + Arrays.toString(d.configurationPid);
                        case ComponentConfigurationDTO.FAILED_ACTIVATION -> "activation failed: " + c.failure;
                        default -> "state " + c.state;
                    };
                    problems.add(name + "/" + d.name + ": " + why);
                }
            }
        }
        return problems;
    }

    private static String reference(UnsatisfiedReferenceDTO r) {
        return r.name + (r.target == null ? "" : " " + r.target);
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : ctx.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        return null;
    }

    private static String stateName(int state) {
        return switch (state) {
            case Bundle.INSTALLED -> "INSTALLED (not resolved)";
            case Bundle.RESOLVED -> "RESOLVED (not started)";
            case Bundle.STARTING -> "STARTING";
            case Bundle.STOPPING -> "STOPPING";
            case Bundle.UNINSTALLED -> "UNINSTALLED";
            default -> "state " + state;
        };
    }
}
