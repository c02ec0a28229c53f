package org.libdistribute;

import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;

/**
 * Keras' SGD, momentum, Adam and Adagrad: holds the slots of the variables it updates and
 * its step count ({@link Strategy#applyGradients}). One thread at a time.
 */
public final class Optimizer implements AutoCloseable {
  public static final int SGD = 0;
  public static final int MOMENTUM = 1;
  public static final int ADAM = 2;
  public static final int ADAGRAD = 3;
  static final long OPT_KIND = 1L;
  static final long OPT_LEARNING_RATE = 1L << 1;
  static final long OPT_MOMENTUM = 1L << 2;
  static final long OPT_NESTEROV = 1L << 3;
  static final long OPT_BETA_1 = 1L << 4;
  static final long OPT_BETA_2 = 1L << 5;
  static final long OPT_EPSILON = 1L << 6;
  static final long OPT_INITIAL_ACCUMULATOR_VALUE = 1L << 7;

  private final Handle handle;
  private final Cleaner.Cleanable cleanable;

  /** dist_optimizer_options_t; null fields keep the defaults. */
  public static final class Options {
    public Integer kind;
    public Double learningRate;
    public Double momentum;
    public Boolean nesterov;
    public Double beta1;
    public Double beta2;
    public Double epsilon;
    public Double initialAccumulatorValue;

    public Options kind(int value) {
      kind = value;
      return this;
    }

    public Options learningRate(double value) {
      learningRate = value;
      return this;
    }

    /** The C struct (also a parameter-server variable's optimizer). */
    DistLibrary.OptimizerOptionsStruct toStruct() {
      DistLibrary.OptimizerOptionsStruct s = new DistLibrary.OptimizerOptionsStruct();
      if (kind != null) {
        s.field_mask |= OPT_KIND;
        s.kind = kind;
      }
      if (learningRate != null) {
        s.field_mask |= OPT_LEARNING_RATE;
        s.learning_rate = learningRate;
      }
      if (momentum != null) {
        s.field_mask |= OPT_MOMENTUM;
        s.momentum = momentum;
      }
      if (nesterov != null) {
        s.field_mask |= OPT_NESTEROV;
        s.nesterov = nesterov ? 1 : 0;
      }
      if (beta1 != null) {
        s.field_mask |= OPT_BETA_1;
        s.beta_1 = beta1;
      }
      if (beta2 != null) {
        s.field_mask |= OPT_BETA_2;
        s.beta_2 = beta2;
      }
      if (epsilon != null) {
        s.field_mask |= OPT_EPSILON;
        s.epsilon = epsilon;
      }
      if (initialAccumulatorValue != null) {
        s.field_mask |= OPT_INITIAL_ACCUMULATOR_VALUE;
        s.initial_accumulator_value = initialAccumulatorValue;
      }
      return s;
    }
  }

  /** Plain SGD with this learning rate. */
  public static Optimizer sgd(double learningRate) {
    Options o = new Options();
    o.kind = SGD;
    o.learningRate = learningRate;
    return new Optimizer(o);
  }

  public Optimizer(Options options) {
    DistLibrary.OptimizerOptionsStruct s = options.toStruct();
    PointerByReference out = new PointerByReference();
    DistException.check(DistLibrary.LIB.dist_optimizer_create(s, out));
    handle = new Handle(out.getValue(), DistLibrary.LIB::dist_optimizer_destroy, null, null);
    cleanable = handle.watch(this);
  }

  Handle handle() {
    return handle;
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  /** applyGradients calls made so far. */
  public long iterations() {
    LongByReference out = new LongByReference();
    DistException.check(DistLibrary.LIB.dist_optimizer_iterations(handle.get(), out));
    return out.getValue();
  }
}
