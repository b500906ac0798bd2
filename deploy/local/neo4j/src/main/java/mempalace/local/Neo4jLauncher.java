package mempalace.local;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * Runs embedded Neo4j Community with a Bolt listener on 127.0.0.1 and no authentication, for the
 * local engine stack. Arguments: home directory, Bolt port, file to write the server version to.
 * Prints one line starting with READY once the default database answers queries.
 */
public final class Neo4jLauncher {
  private static final long PAGE_CACHE_BYTES = 64L * 1024 * 1024;
  private static final long AVAILABILITY_TIMEOUT_MS = 120_000;

  private Neo4jLauncher() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: Neo4jLauncher <home-dir> <bolt-port> <version-file>");
      System.exit(2);
    }
    Path home = Path.of(args[0]).toAbsolutePath();
    int boltPort = Integer.parseInt(args[1]);
    Path versionFile = Path.of(args[2]);

    DatabaseManagementService service =
        new DatabaseManagementServiceBuilder(home)
            .setConfig(BoltConnector.enabled, true)
            .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", boltPort))
            .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            .setConfig(GraphDatabaseSettings.auth_enabled, false)
            .setConfig(GraphDatabaseSettings.pagecache_memory, PAGE_CACHE_BYTES)
            .build();
    Runtime.getRuntime().addShutdownHook(new Thread(service::shutdown, "neo4j-shutdown"));

    GraphDatabaseService db = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
    if (!db.isAvailable(AVAILABILITY_TIMEOUT_MS)) {
      System.err.println("database did not become available within " + AVAILABILITY_TIMEOUT_MS + " ms");
      System.exit(1);
    }
    String version =
        db.executeTransactionally(
            "CALL dbms.components() YIELD versions, edition RETURN versions[0] + ' ' + edition AS v",
            Map.of(),
            result -> (String) result.next().get("v"));
    Files.writeString(versionFile, version);
    System.out.println("READY neo4j " + version + " bolt://127.0.0.1:" + boltPort);
    System.out.flush();

    // Runs until the process is signalled; the shutdown hook closes the databases cleanly.
    new CountDownLatch(1).await();
  }
}
