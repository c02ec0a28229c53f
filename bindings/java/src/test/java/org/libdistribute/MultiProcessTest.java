package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The AllReduce example under dist-run with two ranks: identical, correct results on both. */
public class MultiProcessTest {
  @Test(timeout = 180_000)
  public void allReduceExampleOnTwoRanks() throws Exception {
    Path launcher = Fixtures.buildDir().resolve("tools/dist-run/dist-run");
    assertTrue(launcher + " is missing: build the project first", Files.exists(launcher));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(launcher.toString(), "-n", "2", "--timeout", "120", "--", java,
        "-cp", System.getProperty("java.class.path"), "AllReduce")
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
    assertTrue(output, output.contains("rank 0 of 2") && output.contains("rank 1 of 2"));
    assertEquals(output, 2, output.split("identical on all ranks, correct", -1).length - 1);
  }
}
