package dev.dreammem.neo4j;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;
import org.neo4j.server.configuration.ServerSettings;

/**
 * Runs a real Neo4j Community DBMS (embedded kernel + Bolt server) for tests.
 *
 * <p>Bolt only, bound to loopback, auth disabled, HTTP/HTTPS and server-side
 * routing off, usage reporting and telemetry off. Prints exactly one line
 * {@code NEO4J READY bolt://HOST:PORT} on stdout once the default database is
 * available and the Bolt port accepts connections, then blocks until the JVM
 * is asked to stop (SIGTERM/SIGINT); a shutdown hook shuts the DBMS down
 * cleanly.
 *
 * <p>Usage: {@code Launcher --home DIR [--port 7687] [--host 127.0.0.1]
 * [--pagecache 256m] [--conf FILE]}
 */
public final class Launcher {

    /** Raw settings of newer servers that must be off (broadcasts, remote management). */
    private static final String[] QUIET_SETTINGS = {
        "server.fleet_discovery.enabled=false",
        "dbms.fleet_manager.enabled=false",
    };

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = parseArgs(args);
        Path home = Path.of(require(opts, "home")).toAbsolutePath();
        String host = opts.getOrDefault("host", "127.0.0.1");
        int port = Integer.parseInt(opts.getOrDefault("port", "7687"));
        String pagecache = opts.getOrDefault("pagecache", "256m");
        Files.createDirectories(home);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO));

        // Optional extra neo4j.conf-style properties (raw keys; unknown keys are
        // tolerated because strict validation is switched off below).
        if (opts.containsKey("conf")) {
            builder.loadPropertiesFromFile(Path.of(opts.get("conf")));
        }

        // Switches of newer servers, by raw key (5.26 has neither; unknown keys are
        // ignored): no LAN broadcast of fleet discovery, no fleet manager (2025.x+).
        Path quiet = home.resolve("launcher-quiet.conf");
        Files.writeString(quiet, String.join("\n", QUIET_SETTINGS) + "\n");
        builder.loadPropertiesFromFile(quiet);

        builder
                // Version-specific / unknown keys must not break start-up.
                .setConfig(GraphDatabaseSettings.strict_config_validation, false)
                // Network: Bolt on loopback only, nothing else listening.
                .setConfig(GraphDatabaseSettings.default_listen_address, new SocketAddress(host))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.routing_enabled, false)
                // Tests only: no authentication.
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // Silence: no usage reports, no telemetry.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
                .setConfig(BoltConnector.server_bolt_telemetry_enabled, false)
                .setConfig(ServerSettings.allow_telemetry, false)
                // Small, bounded footprint (heap is capped by -Xmx on the JVM).
                .setConfig(GraphDatabaseSettings.pagecache_memory, parseBytes(pagecache))
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.preallocate_store_files, false)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
                // Faster stop (default waits ~5 s twice for idle Bolt threads).
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1));

        long t0 = System.nanoTime();
        DatabaseManagementService dbms = builder.build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                System.err.println("NEO4J shutdown error: " + t);
            } finally {
                System.out.println("NEO4J STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "neo4j-launcher-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!db.isAvailable(1000)) {
            if (System.nanoTime() > deadline) {
                System.err.println("NEO4J FAILED: default database not available after 120 s");
                System.exit(2);
            }
        }
        // Warm up the Cypher runtime so the first test query is not the slow one.
        try (Transaction tx = db.beginTx()) {
            tx.execute("RETURN 1").close();
            tx.commit();
        }
        waitForPort(host, port, deadline);

        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("NEO4J READY bolt://" + host + ":" + port + " (" + ms + " ms)");
        System.out.flush();

        // Block until SIGTERM/SIGINT runs the shutdown hook.
        stopped.await();
    }

    private static void waitForPort(String host, int port, long deadlineNanos) throws InterruptedException {
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadlineNanos) {
                    System.err.println("NEO4J FAILED: Bolt port " + host + ":" + port + " not reachable: " + e);
                    System.exit(3);
                }
                Thread.sleep(200);
            }
        }
    }

    private static long parseBytes(String s) {
        String v = s.trim().toLowerCase();
        long mult = 1;
        char last = v.charAt(v.length() - 1);
        if (last == 'k') mult = 1L << 10;
        else if (last == 'm') mult = 1L << 20;
        else if (last == 'g') mult = 1L << 30;
        if (mult != 1) v = v.substring(0, v.length() - 1);
        return Long.parseLong(v) * mult;
    }

    private static String require(Map<String, String> opts, String key) {
        String v = opts.get(key);
        if (v == null) {
            System.err.println("usage: Launcher --home DIR [--port 7687] [--host 127.0.0.1] [--pagecache 256m] [--conf FILE]");
            System.exit(64);
        }
        return v;
    }

    private static Map<String, String> parseArgs(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument: " + a);
            }
            String key = a.substring(2);
            String val;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                val = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value for " + a);
                }
                val = args[++i];
            }
            m.put(key, val);
        }
        return m;
    }
}
