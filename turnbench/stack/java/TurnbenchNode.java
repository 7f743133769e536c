package turnbench.stack;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/**
 * Runs one OpenSearch node in this JVM with the distribution's modules loaded as classpath plugins.
 *
 * <p>Usage: {@code TurnbenchNode <path.home> <plugin class>...}. Settings come from
 * {@code <path.home>/config/opensearch.yml}, logging from {@code config/log4j2.properties}. No SecurityManager
 * is installed and no plugin descriptors are read: the plugin classes named on the command line are the whole
 * set, and a name that does not load stops the JVM with exit code 78 before anything binds a port.
 */
public final class TurnbenchNode {

    static final int EXIT_BAD_PLUGIN = 78;

    /** Node's constructor taking classpath plugins is protected; this is the only reason for the subclass. */
    static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            // forbidPrivateIndexSettings=true is what the public constructor passes: behave like a real node.
            super(environment, plugins, true);
        }
    }

    private TurnbenchNode() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: TurnbenchNode <path.home> <plugin class>...");
            System.exit(64);
        }
        Path home = Paths.get(args[0]).toAbsolutePath();
        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            try {
                plugins.add(Class.forName(args[i]).asSubclass(Plugin.class));
            } catch (ClassNotFoundException | ClassCastException e) {
                System.err.println("turnbench: plugin class not loadable: " + args[i] + " (" + e + ")");
                System.exit(EXIT_BAD_PLUGIN);
            }
        }

        // The error listener must be registered before anything logs, as OpenSearch's own bootstrap does.
        LogConfigurator.registerErrorListener();
        Settings initial = Settings.builder().put("path.home", home.toString()).build();
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            initial, Collections.emptyMap(), home.resolve("config"), () -> "turnbench");
        LogConfigurator.configure(environment);

        Node node = new EmbeddedNode(environment, plugins);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (IOException e) {
                System.err.println("turnbench: error while closing the node: " + e);
            } finally {
                stopped.countDown();
            }
        }, "turnbench-shutdown"));
        node.start();
        System.out.println("turnbench: node started");
        // Node's threads are daemons: without this wait the JVM would exit as soon as main returns.
        stopped.await();
    }
}
