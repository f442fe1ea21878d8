package dev.xq.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The configuration reference, {@code docs/configuration.md}, is generated from the Metatype
 * descriptions the bundles carry (what Config Admin and a console read), so that it cannot go
 * stale: this test renders it from the built bundles and fails when the file differs. To
 * regenerate: {@code mvn -pl itest test -Dtest=ConfigurationDocTest -Dxq.docs.write=true}.
 */
public class ConfigurationDocTest {

    static final Path DOC = Path.of(System.getProperty("xq.docs.configuration", "../docs/configuration.md"));

    @Test
    public void theReferenceIsTheMetatypeOfTheBundles() throws Exception {
        Path dir = Path.of(System.getProperty("xq.itest.bundles", "target/bundles"));
        List<Path> jars;
        try (Stream<Path> s = Files.list(dir)) {
            jars = s.filter(p -> p.getFileName().toString().matches("dev\\.xq\\..*\\.jar")).sorted().toList();
        }
        assertTrue("XQ bundles in " + dir + ": " + jars, jars.size() >= 10);
        String rendered = render(jars);
        assertTrue("every configurable bundle is in the reference: " + rendered,
                rendered.contains("`dev.xq.host`") && rendered.contains("`dev.xq.http`") && rendered.contains("`dev.xq.scheduler`"));
        if (Boolean.getBoolean("xq.docs.write")) {
            Files.writeString(DOC, rendered);
        }
        String have = Files.exists(DOC) ? Files.readString(DOC) : "";
        assertEquals(DOC + " is not what the bundles' Metatype says; regenerate it: "
                + "mvn -pl itest test -Dtest=ConfigurationDocTest -Dxq.docs.write=true", rendered, have);
    }

    /** One section per PID (sorted), one row per attribute in the order the bundle declares them. */
    static String render(List<Path> jars) throws Exception {
        Map<String, String> sections = new TreeMap<>();
        for (Path jar : jars) {
            try (JarFile jf = new JarFile(jar.toFile())) {
                Enumeration<JarEntry> es = jf.entries();
                while (es.hasMoreElements()) {
                    JarEntry e = es.nextElement();
                    if (e.getName().startsWith("OSGI-INF/metatype/") && e.getName().endsWith(".xml")) {
                        try (InputStream in = jf.getInputStream(e)) {
                            section(in, jar.getFileName().toString().replaceAll("(-[0-9].*)?\\.jar$", ""), sections);
                        }
                    }
                }
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("# Configuration reference\n\n")
                .append("Every setting of every XQ bundle, as its Metatype describes it (generated from the built bundles by\n")
                .append("`ConfigurationDocTest`, which fails when this file differs: regenerate with\n")
                .append("`mvn -pl itest test -Dtest=ConfigurationDocTest -Dxq.docs.write=true`). A setting goes in a\n")
                .append("`PID.cfg` file of the node's hot-deploy folder (`bundles/`, one `key=value` a line), or through\n")
                .append("Config Admin; a bad value is refused by name in the log and changes nothing. A factory PID takes\n")
                .append("one file per instance, `PID-NAME.cfg`.\n");
        sections.values().forEach(out::append);
        return out.toString();
    }

    private static void section(InputStream in, String bundle, Map<String, String> sections) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document doc = f.newDocumentBuilder().parse(in);
        Map<String, Element> ocds = new TreeMap<>();
        NodeList ol = doc.getElementsByTagName("OCD");
        for (int i = 0; i < ol.getLength(); i++) {
            Element o = (Element) ol.item(i);
            ocds.put(o.getAttribute("id"), o);
        }
        NodeList dl = doc.getElementsByTagName("Designate");
        for (int i = 0; i < dl.getLength(); i++) {
            Element d = (Element) dl.item(i);
            boolean factory = !d.getAttribute("factoryPid").isEmpty();
            String pid = factory ? d.getAttribute("factoryPid") : d.getAttribute("pid");
            NodeList objs = d.getElementsByTagName("Object");
            Element o = objs.getLength() == 0 ? null : ocds.get(((Element) objs.item(0)).getAttribute("ocdref"));
            if (o == null || pid.isEmpty()) {
                continue;
            }
            StringBuilder s = new StringBuilder();
            s.append("\n## `").append(pid).append("`").append(factory ? " (factory)" : "").append(": ").append(o.getAttribute("name"))
                    .append("\n\n");
            if (!o.getAttribute("description").isEmpty()) {
                s.append(o.getAttribute("description")).append(". ");
            }
            s.append("Bundle `").append(bundle).append("`.\n\n");
            s.append("| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n");
            NodeList ads = o.getElementsByTagName("AD");
            for (int k = 0; k < ads.getLength(); k++) {
                Element a = (Element) ads.item(k);
                s.append("| `").append(a.getAttribute("id")).append("` | ").append(a.getAttribute("type").toLowerCase()).append(" | ")
                        .append(code(a.getAttribute("default"))).append(" | ").append(allowed(a)).append(" | ")
                        .append(cell(a.getAttribute("name") + (a.getAttribute("description").isEmpty() ? "" : ": " + a.getAttribute("description"))))
                        .append(" |\n");
            }
            sections.put(pid, s.toString());
        }
    }

    private static String allowed(Element a) {
        List<String> parts = new ArrayList<>();
        NodeList opts = a.getElementsByTagName("Option");
        for (int i = 0; i < opts.getLength(); i++) {
            parts.add("`" + ((Element) opts.item(i)).getAttribute("value") + "`");
        }
        String min = a.getAttribute("min");
        String max = a.getAttribute("max");
        if (!min.isEmpty() || !max.isEmpty()) {
            parts.add("[" + (min.isEmpty() ? "..." : min) + ", " + (max.isEmpty() ? "..." : max) + "]");
        }
        if ("false".equals(a.getAttribute("required"))) {
            parts.add("optional");
        }
        return parts.isEmpty() ? "" : cell(String.join(", ", parts));
    }

    private static String code(String v) {
        return v.isEmpty() ? "(empty)" : "`" + v.replace("|", "\\|") + "`";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
