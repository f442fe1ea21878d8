// XqHelm: `helm install`, `helm uninstall` and `helm template` of charts/xq against a kubeconfig,
// through Helm embedded in Java (com.marcnuri.helm-java:helm-java 0.0.21, the library ChartTest
// uses), for k8s/cluster/e2e.sh: there is no helm binary on these machines.
// Run as a single-file source program (JEP 330) with helm-java, its lib-api, linux-amd64 native
// library and JNA on the class path (e2e.sh puts them together from ~/.m2):
//   java -cp JARS k8s/cluster/XqHelm.java install RELEASE CHART NAMESPACE KUBECONFIG [KEY=VALUE]...
//   java -cp JARS k8s/cluster/XqHelm.java uninstall RELEASE NAMESPACE KUBECONFIG
//   java -cp JARS k8s/cluster/XqHelm.java template RELEASE CHART NAMESPACE [KEY=VALUE]...
// KEY=VALUE is helm's --set (a value of digits is passed as text; the chart's templates take both).
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.TemplateCommand;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

public class XqHelm {
    public static void main(String[] a) throws Exception {
        if (a.length < 1) {
            usage();
        }
        switch (a[0]) {
            case "install" -> {
                if (a.length < 5) {
                    usage();
                }
                InstallCommand c = new Helm(Path.of(a[2])).install().withName(a[1]).withNamespace(a[3]).createNamespace()
                        .withKubeConfig(Path.of(a[4])).withTimeout(300);
                for (String kv : rest(a, 5)) {
                    int eq = kv.indexOf('=');
                    c = c.set(kv.substring(0, eq), kv.substring(eq + 1));
                }
                Release r = c.call();
                System.out.println("helm install: release " + r.getName() + " in " + r.getNamespace() + ", status " + r.getStatus()
                        + ", revision " + r.getRevision() + ", chart " + r.getChart());
            }
            case "uninstall" -> {
                if (a.length != 4) {
                    usage();
                }
                String out = Helm.uninstall(a[1]).withNamespace(a[2]).withKubeConfig(Path.of(a[3])).call();
                System.out.println("helm uninstall: " + out.strip());
            }
            case "template" -> {
                if (a.length < 4) {
                    usage();
                }
                TemplateCommand c = new Helm(Path.of(a[2])).template().withName(a[1]).withNamespace(a[3]);
                for (String kv : rest(a, 4)) {
                    int eq = kv.indexOf('=');
                    c = c.set(kv.substring(0, eq), kv.substring(eq + 1));
                }
                System.out.println(c.call());
            }
            default -> usage();
        }
    }

    static List<String> rest(String[] a, int from) {
        List<String> l = Arrays.asList(a).subList(from, a.length);
        for (String kv : l) {
            if (kv.indexOf('=') < 1) {
                throw new IllegalArgumentException("'" + kv + "' is not KEY=VALUE");
            }
        }
        return l;
    }

    static void usage() {
        System.err.println("usage: XqHelm install RELEASE CHART NAMESPACE KUBECONFIG [KEY=VALUE]... | uninstall RELEASE NAMESPACE KUBECONFIG"
                + " | template RELEASE CHART NAMESPACE [KEY=VALUE]...");
        System.exit(2);
    }
}
