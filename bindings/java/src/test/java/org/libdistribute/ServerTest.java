package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/** Parameter servers and their checkpoints, against an in-process server. */
public class ServerTest {
  static final String TOKEN = "java-binding-test-token";

  static Server start() {
    return new Server(null, new Server.Options().address("127.0.0.1:0").token(TOKEN));
  }

  /** A worker's view of a cluster whose ps job is the given servers. */
  static Cluster clusterOf(Server... servers) {
    StringBuilder ps = new StringBuilder();
    for (Server s : servers) {
      ps.append(ps.length() == 0 ? "" : ",").append('"').append(s.address()).append('"');
    }
    return Cluster.fromJson("{\"cluster\":{\"ps\":[" + ps + "],\"worker\":[\"127.0.0.1:1\"]},"
        + "\"task\":{\"type\":\"worker\",\"index\":0}}");
  }

  static void assertFails(int status, String text, Runnable call) {
    try {
      call.run();
      fail("expected " + Status.name(status) + " with '" + text + "'");
    } catch (DistException e) {
      assertEquals(e.getMessage(), status, e.status());
      assertTrue(e.getMessage(), e.detail().contains(text));
    }
  }

  @Test
  public void lifecycle() {
    List<String> lines = Collections.synchronizedList(new ArrayList<>());
    Server server = new Server(null, new Server.Options().address("127.0.0.1:0").token(TOKEN).log(lines::add));
    String address = server.address();
    assertTrue(address, address.matches("127\\.0\\.0\\.1:[1-9][0-9]*"));
    String described = server.describe();
    assertTrue(described, described.contains("\"address\":\"" + address + "\""));
    assertTrue(described, described.contains("\"variables\":[]"));
    assertTrue(lines.toString(), lines.stream().anyMatch(l -> l.contains("serving at")));
    assertFails(Status.ERR_TIMEOUT, "still serving", () -> server.join(Duration.ofMillis(30)));
    server.stop();
    server.join(Duration.ofSeconds(5));
    server.join(null);
    server.close();
    server.close();
    assertTrue(server.isClosed());
    assertFails(Status.ERR_INVALID_ARGUMENT, "server is NULL", server::address);
  }

  @Test
  public void closeEndsAJoinInAnotherThread() throws Exception {
    Server server = start();
    DistException[] failure = new DistException[1];
    Thread joiner = new Thread(() -> {
      try {
        server.join(null);
      } catch (DistException e) { // close won the race: the join saw the closed handle
        failure[0] = e;
      }
    });
    joiner.start();
    server.close();
    joiner.join(30000);
    assertTrue("a join without bound outlived close", !joiner.isAlive());
    assertTrue(server.isClosed());
    assertTrue(failure[0] == null || failure[0].status() == Status.ERR_INVALID_ARGUMENT);
  }

  @Test
  public void logSinkThatThrowsIsDropped() {
    try (Server server = new Server(null, new Server.Options().address("127.0.0.1:0").token(TOKEN).log(l -> {
      throw new IllegalStateException("sink");
    }))) {
      assertTrue(server.address().startsWith("127.0.0.1:"));
    }
  }

  @Test
  public void badOptions() {
    assertFails(Status.ERR_INVALID_ARGUMENT, "127.0.0.1",
        () -> new Server(null, new Server.Options().address("127.0.0.1").token(TOKEN)));
    assertFails(Status.ERR_INVALID_ARGUMENT, "no address", () -> new Server(null, new Server.Options().token(TOKEN)));
    assertFails(Status.ERR_INVALID_ARGUMENT, "io_timeout_ms 0",
        () -> new Server(null, new Server.Options().address("127.0.0.1:0").token(TOKEN).ioTimeout(Duration.ZERO)));
    // The JVM cannot unset its environment: checked only where no token is set there.
    if (System.getenv("DIST_CLUSTER_TOKEN") == null && System.getenv("DIST_CLUSTER_TOKEN_FILE") == null) {
      assertFails(Status.ERR_INVALID_ARGUMENT, "needs the cluster token",
          () -> new Server(null, new Server.Options().address("127.0.0.1:0")));
    }
    try (Server server = start()) {
      String address = server.address();
      assertFails(Status.ERR_UNAVAILABLE, address,
          () -> new Server(null, new Server.Options().address(address).token(TOKEN)));
    }
  }

  @Test
  public void checkpointRoundTripAndRefusals() throws Exception {
    Path root = Files.createTempDirectory("dist-java-ckpt");
    Checkpoints.Options options = new Checkpoints.Options().token(TOKEN).timeout(Duration.ofSeconds(20));
    try (Server server = start(); Cluster cluster = clusterOf(server)) {
      Path path = Checkpoints.save(cluster, root, 4, options);
      assertEquals(root.resolve("ckpt-4"), path);
      Path shard = path.resolve("shard-00000-of-00001.ckpt");
      assertTrue(Files.isRegularFile(shard) && Files.isRegularFile(path.resolve("manifest.json")));
      assertTrue(Files.isRegularFile(root.resolve("LATEST")));
      assertEquals(path, Checkpoints.restore(cluster, root, options));
      assertFails(Status.ERR_AUTH, "ps:0",
          () -> Checkpoints.save(cluster, root, 5, new Checkpoints.Options().token("wrong-token")));
      assertFails(Status.ERR_INVALID_ARGUMENT, "step -1", () -> Checkpoints.save(cluster, root, -1, options));

      // A corrupt shard file is refused, naming it, by a restore and by a server told to restore from it.
      try (RandomAccessFile f = new RandomAccessFile(shard.toFile(), "rw")) {
        f.seek(3);
        int b = f.read();
        f.seek(3);
        f.write(b ^ 0xff);
      }
      assertFails(Status.ERR_INVALID_ARGUMENT, "shard-00000-of-00001.ckpt",
          () -> Checkpoints.restore(cluster, root, options));
      assertFails(Status.ERR_INVALID_ARGUMENT, "is corrupt",
          () -> new Server(null, new Server.Options().address("127.0.0.1:0").token(TOKEN).checkpointDir(root)));
    } finally {
      try (var files = Files.walk(root)) {
        files.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
