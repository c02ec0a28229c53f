package org.libdistribute;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.util.Arrays;

/**
 * tf.distribute.InputContext: how many input pipelines read data (one per worker),
 * which one this is, and how a global batch divides among replicas. Immutable:
 * any thread.
 */
public final class InputContext implements AutoCloseable {
  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  InputContext(Pointer pointer) {
    handle = new Handle(pointer, DistLibrary.LIB::dist_input_context_destroy, null, null);
    cleanable = handle.watch(this);
  }

  public InputContext(int numInputPipelines, int inputPipelineId, int numReplicasInSync) {
    this(create(numInputPipelines, inputPipelineId, numReplicasInSync));
  }

  private static Pointer create(int numInputPipelines, int inputPipelineId, int numReplicasInSync) {
    PointerByReference out = new PointerByReference();
    DistException.check(
        DistLibrary.LIB.dist_input_context_create(numInputPipelines, inputPipelineId, numReplicasInSync, out));
    return out.getValue();
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  public int numInputPipelines() {
    return Queries.int32(out -> DistLibrary.LIB.dist_input_context_num_input_pipelines(handle.get(), out));
  }

  public int inputPipelineId() {
    return Queries.int32(out -> DistLibrary.LIB.dist_input_context_input_pipeline_id(handle.get(), out));
  }

  public int numReplicasInSync() {
    return Queries.int32(out -> DistLibrary.LIB.dist_input_context_num_replicas_in_sync(handle.get(), out));
  }

  /** globalBatchSize / numReplicasInSync; a DistException when it does not divide. */
  public long perReplicaBatchSize(long globalBatchSize) {
    LongByReference out = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_input_context_per_replica_batch_size(handle.get(), globalBatchSize, out));
    return out.getValue();
  }

  /** The indices (increasing) of the files this pipeline reads: file i goes to pipeline i % pipelines. */
  public long[] shardFiles(long numFiles) {
    int pipelines = Math.max(1, numInputPipelines());
    long[] indices = new long[(int) Math.max(1, (numFiles + pipelines - 1) / pipelines)];
    LongByReference count = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_input_context_shard_files(handle.get(), numFiles, indices,
        Math.max(0, (numFiles + pipelines - 1) / pipelines), count));
    return Arrays.copyOf(indices, (int) count.getValue());
  }

  /** {begin, count} of this pipeline's contiguous part of [0, total) (count 0: none). */
  public long[] shardRange(long total) {
    LongByReference begin = new LongByReference();
    LongByReference count = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_input_context_shard_range(handle.get(), total, begin, count));
    return new long[] {begin.getValue(), count.getValue()};
  }
}
