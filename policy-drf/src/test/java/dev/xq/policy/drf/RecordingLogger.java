package dev.xq.policy.drf;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.osgi.service.log.Logger;

/** An OSGi {@link Logger} that keeps what was logged, as "level: format [args]". */
final class RecordingLogger {

    final List<String> lines = new ArrayList<>();
    final Logger logger;

    RecordingLogger() {
        logger = (Logger) Proxy.newProxyInstance(Logger.class.getClassLoader(), new Class<?>[] {Logger.class}, (proxy, method, args) -> {
            String name = method.getName();
            if (name.startsWith("is")) {
                return true;
            }
            if (name.equals("getName")) {
                return "test";
            }
            if (name.equals("toString")) {
                return "RecordingLogger";
            }
            if (name.equals("hashCode")) {
                return System.identityHashCode(proxy);
            }
            if (name.equals("equals")) {
                return proxy == args[0];
            }
            lines.add(name + ": " + (args == null ? "" : Arrays.deepToString(args)));
            return null;
        });
    }

    String all() {
        return String.join("\n", lines);
    }
}
