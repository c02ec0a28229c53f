package org.libdistribute;

import java.nio.file.Path;
import java.nio.file.Paths;

/** Shared by the tests: a single-process context and where the build is. */
final class Fixtures {
  private Fixtures() {}

  /** A cluster with no tasks: its context is rank 0 of 1. */
  static Cluster emptyCluster() {
    return Cluster.fromJson("{}");
  }

  static Path repo() {
    String repo = System.getProperty("dist.repo");
    return Paths.get(repo != null ? repo : "../..").toAbsolutePath().normalize();
  }

  static Path buildDir() {
    String build = System.getenv("DIST_BUILD_DIR");
    return build != null && !build.isEmpty() ? Paths.get(build) : repo().resolve("build");
  }
}
