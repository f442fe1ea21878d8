package dev.xq.policy.testkit;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.osgi.service.log.Logger;

/** An OSGi {@link Logger} that keeps what was logged, as "level: format [args]". */
public final class RecordingLogger {

    public final List<String> lines = new ArrayList<>();
    public final Logger logger;

    public RecordingLogger() {
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

    public String all() {
        return String.join("\n", lines);
    }
}
