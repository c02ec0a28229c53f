package org.libdistribute;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.List;
import org.junit.Test;

public class ErrorsTest {
  @Test
  public void badTfConfigThrowsWithTheCMessage() {
    try {
      Cluster.resolve(new ClusterOptions().resolver(Resolver.TF_CONFIG)
          .env(List.of("TF_CONFIG={\"cluster\": {\"worker\": 3}}")));
      fail("a bad TF_CONFIG resolved");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      assertEquals("DIST_ERR_INVALID_ARGUMENT", e.statusName());
      assertTrue(e.detail(), e.detail().contains("TF_CONFIG"));
      assertTrue(e.detail(), e.detail().contains("worker"));
      assertEquals("DIST_ERR_INVALID_ARGUMENT: " + e.detail(), e.getMessage());
      assertFalse(e.isPeerFailure());
    }
  }

  @Test
  public void taskIndexOutOfRange() {
    try {
      Cluster.fromJson("{\"cluster\": {\"worker\": [\"a:1\", \"b:2\"]}, \"task\": {\"type\": \"worker\", \"index\": 3}}");
      fail("resolved");
    } catch (DistException e) {
      assertEquals(Status.ERR_INVALID_ARGUMENT, e.status());
      assertTrue(e.detail(), e.detail().contains("3"));
    }
  }

  @Test
  public void unknownJob() {
    try (Cluster c = Cluster.fromJson("{\"cluster\": {\"worker\": [\"a:1\"]}}")) {
      c.numTasks("ps");
      fail("an unknown job was counted");
    } catch (DistException e) {
      assertTrue(e.detail(), e.detail().contains("ps"));
    }
  }

  @Test
  public void statusNamesAndVersion() {
    assertEquals("DIST_OK", Status.name(Status.OK));
    assertEquals("DIST_ERR_MISMATCH", Status.name(Status.ERR_MISMATCH));
    assertEquals("DIST_ERR_UNKNOWN", Status.name(4242));
    assertTrue(new DistException(Status.ERR_PEER_FAILED, "x").isPeerFailure());
    assertEquals(0x000100, Distribute.version());
    assertEquals("0.1.0", Distribute.versionString());
    assertTrue((Distribute.buildFeatures() & Distribute.FEATURE_UCX) != 0);
    assertTrue(Distribute.buildInfo().contains("\"version\""));
  }
}
