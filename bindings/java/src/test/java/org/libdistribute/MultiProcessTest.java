package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The examples under dist-run: identical, correct results on every rank. */
public class MultiProcessTest {
  /** Runs an example class on `ranks` processes; dist-run's --timeout bounds the job. */
  private static String distRun(String example, int ranks) throws Exception {
    Path launcher = Fixtures.buildDir().resolve("tools/dist-run/dist-run");
    assertTrue(launcher + " is missing: build the project first", Files.exists(launcher));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(launcher.toString(), "-n", String.valueOf(ranks), "--timeout", "120", "--", java,
        "-cp", System.getProperty("java.class.path"), example)
        .redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .start();
    String output;
    try {
      // dist-run's own --timeout bounds the job; it stops its tasks itself.
      output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue("dist-run did not finish", p.waitFor(170, TimeUnit.SECONDS));
    } finally {
      p.destroyForcibly(); // a no-op once it has exited
    }
    assertEquals(output, 0, p.exitValue());
    return output;
  }

  @Test(timeout = 180_000)
  public void allReduceExampleOnTwoRanks() throws Exception {
    String output = distRun("AllReduce", 2);
    assertTrue(output, output.contains("rank 0 of 2") && output.contains("rank 1 of 2"));
    assertEquals(output, 2, output.split("identical on all ranks, correct", -1).length - 1);
  }

  @Test(timeout = 180_000)
  public void strategyExampleOnTwoRanks() throws Exception {
    String output = distRun("StrategyTraining", 2);
    java.util.Set<String> hashes = new java.util.HashSet<>();
    int lines = 0;
    for (String line : output.split("\n")) {
      if (!line.contains("weights sha256")) continue;
      lines++;
      assertTrue(line, line.contains("4 replicas in sync") && line.contains("local copies identical, correct"));
      hashes.add(line.replaceAll(".*sha256 ([0-9a-f]+);.*", "$1"));
    }
    assertEquals(output, 2, lines);
    assertEquals(output, 1, hashes.size());
  }

  @Test(timeout = 360_000)
  public void everyCollectiveAcrossTwoAndThreeProcesses() throws Exception {
    for (int ranks : new int[] {2, 3}) {
      String output = distRun("EveryCollective", ranks);
      assertEquals(output, ranks, output.split("all collectives correct", -1).length - 1);
    }
  }
}
