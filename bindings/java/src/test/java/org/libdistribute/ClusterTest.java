package org.libdistribute;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.Test;

public class ClusterTest {
  private static final String SPARSE = "{\"cluster\": {\"worker\": {\"1\": \"h:2222\", \"3\": \"h:2223\"},"
      + " \"chief\": [\"c:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 3}, \"rpc_layer\": \"grpc\","
      + " \"environment\": \"cloud\"}";

  @Test
  public void tfConfigQueries() {
    try (Cluster c = Cluster.resolve(new ClusterOptions().resolver(Resolver.TF_CONFIG).env(List.of("TF_CONFIG=" + SPARSE)))) {
      assertEquals(Resolver.TF_CONFIG, c.resolver());
      assertEquals("worker", c.taskType());
      assertEquals(3, c.taskId());
      assertEquals("grpc", c.rpcLayer());
      assertEquals("cloud", c.environment());
      assertEquals(List.of("chief", "worker"), c.jobs());
      assertArrayEquals(new int[] {1, 3}, c.taskIndices("worker"));
      assertEquals("h:2222", c.taskAddress("worker", 1));
      assertEquals("grpc://h:2223", c.master());
      assertEquals("ucx://c:1", c.master("chief", 0, "ucx"));
      assertTrue(c.numAccelerators(null) >= 0);
      assertNull(c.cudaVisibleDevices());
      assertTrue(c.toJson(), c.toJson().contains("tf_config"));
    }
  }

  @Test
  public void simpleUnionAndJobs() {
    try (Cluster simple = Cluster.resolve(new ClusterOptions().resolver(Resolver.SIMPLE)
             .clusterSpecJson("{\"worker\": [\"a:1\", \"b:2\"]}").taskType("worker").taskId(1));
         Cluster ps = Cluster.fromJson("{\"cluster\": {\"ps\": [\"p:1\"]}}");
         Cluster union = Cluster.resolve(new ClusterOptions().resolver(Resolver.UNION).members(List.of(simple, ps)));
         Cluster mpi = Cluster.resolve(new ClusterOptions().resolver(Resolver.MPI)
             .env(List.of("OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4"))
             .jobs(Map.of("ps", 1, "worker", 3)))) {
      assertEquals("b:2", simple.taskAddress("worker", 1));
      assertEquals(List.of("ps", "worker"), union.jobs());
      assertEquals("worker", mpi.taskType());
      assertEquals(1, mpi.taskId());
    }
    assertEquals("slurm", Cluster.resolverName(Resolver.SLURM));
    assertNull(Cluster.resolverName(99));
  }
}
