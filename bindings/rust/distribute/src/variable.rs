//! Distributed variables (`dist_variable_t`): tf.Variable under a strategy.
//!
//! `Variable` is Sync so that replica functions can share it; their calls go
//! through [`crate::Replica`] (read, assign, ...). The cross-replica calls here
//! take `&mut self`, so none can overlap a run that shares the variable, and
//! `Variable` is not Send: it stays on its strategy's cross-replica thread.
use std::marker::PhantomData;
use std::ptr;

use crate::dtype::{describe, Element};
use crate::error::{check, Error, Result};
use crate::optimizer::{raw_options as optimizer_options, OptimizerKind};
use crate::strategy::Strategy;
use crate::strings::{borrowed, opt_to_c, ptr as c_ptr};
use crate::sys;

/// tf.VariableSynchronization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronization {
    Auto,
    OnWrite,
    OnRead,
    None,
}

/// tf.VariableAggregation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    None,
    Sum,
    Mean,
    OnlyFirstReplica,
}

macro_rules! raw_enum {
    ($t:ident { $($v:ident => $c:ident),* }) => {
        impl $t {
            pub fn raw(self) -> i32 {
                match self { $($t::$v => sys::$c),* }
            }
            pub fn from_raw(raw: i32) -> Option<$t> {
                match raw { $(sys::$c => Some($t::$v),)* _ => None }
            }
        }
    };
}
raw_enum!(Synchronization { Auto => DIST_SYNC_AUTO, OnWrite => DIST_SYNC_ON_WRITE, OnRead => DIST_SYNC_ON_READ, None => DIST_SYNC_NONE });
raw_enum!(Aggregation { None => DIST_AGGREGATION_NONE, Sum => DIST_AGGREGATION_SUM, Mean => DIST_AGGREGATION_MEAN,
                        OnlyFirstReplica => DIST_AGGREGATION_ONLY_FIRST_REPLICA });

/// dist_variable_options_t; `None` takes the library's default (the dtype is T's).
#[derive(Debug, Clone, Default)]
pub struct VariableOptions<'a, T> {
    pub name: Option<&'a str>,
    /// Dimensions (a scalar when None).
    pub shape: Option<&'a [i64]>,
    /// Every element, row-major (zeros when None).
    pub initial_value: Option<&'a [T]>,
    pub synchronization: Option<Synchronization>,
    pub aggregation: Option<Aggregation>,
    /// ParameterServer: the servers' optimizer of `apply_gradient` / `apply_rows`
    /// and its learning rate (None: gradients are refused).
    pub optimizer: Option<(OptimizerKind, Option<f64>)>,
    /// ParameterServer partitioners of the rows (at most one; default one shard):
    /// this many shards (TF's FixedShardsPartitioner), ...
    pub num_shards: Option<i32>,
    /// ... as few shards as keep each at most this many bytes (MaxSizePartitioner), ...
    pub max_shard_bytes: Option<u64>,
    /// ... or the variable's bytes / this many shards (MinSizePartitioner);
    pub min_shard_bytes: Option<u64>,
    /// with max_shard_bytes or min_shard_bytes: at most this many shards.
    pub max_shards: Option<i32>,
    /// ParameterServer: shard i goes to the server of this variable's shard i.
    pub colocate_with: Option<&'a dyn AnyVariable>,
    /// ParameterServer: synchronous apply_gradient (TF's SyncReplicasOptimizer),
    /// aggregating `replicas_to_aggregate` workers' gradients per round and
    /// dropping those more than `max_staleness` updates old.
    pub sync_gradients: Option<bool>,
    pub replicas_to_aggregate: Option<i32>,
    pub max_staleness: Option<i32>,
}

/// A variable of any element type, for options that name another variable.
pub trait AnyVariable {
    fn raw_variable(&self) -> *mut sys::dist_variable_t;
}

impl std::fmt::Debug for dyn AnyVariable + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Variable").field(&self.raw_variable()).finish()
    }
}

impl<T: Element> AnyVariable for Variable<'_, T> {
    fn raw_variable(&self) -> *mut sys::dist_variable_t {
        self.raw
    }
}

/// Where one shard of a variable on parameter servers lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Index of its server in the cluster's "ps" job.
    pub server: i32,
    /// Its rows of the variable's first dimension.
    pub first_row: u64,
    pub rows: u64,
}

/// The signature of dist_variable_{read,add,apply}_rows.
pub(crate) type RowsFn = unsafe extern "C" fn(
    *mut sys::dist_variable_t,
    *mut sys::dist_replica_context_t,
    *const i64,
    u64,
    *const sys::dist_buffer_t,
) -> i32;

/// One row call with `data` described as a buffer of T.
pub(crate) fn rows_call<T: Element>(
    f: RowsFn,
    variable: *mut sys::dist_variable_t,
    replica: *mut sys::dist_replica_context_t,
    rows: &[i64],
    data: *const T,
    len: usize,
) -> Result<()> {
    let buffer = describe(data, len);
    // SAFETY: live handles; `rows` and the `len` elements at `data` outlive the call
    // (an output is exclusively borrowed by the caller).
    check(unsafe { f(variable, replica, rows.as_ptr(), rows.len() as u64, &buffer) })
}

/// A distributed variable of element type T. It borrows its strategy.
#[derive(Debug)]
pub struct Variable<'s, T: Element> {
    raw: *mut sys::dist_variable_t,
    _strategy: PhantomData<&'s Strategy<'s>>,
    _element: PhantomData<T>,
}

// SAFETY: shared references only reach the metadata getters (immutable after
// creation) and, through a Replica, the replica-context calls the header allows
// from every replica thread at once; cross-replica calls need &mut self. The
// PhantomData of &Strategy keeps Variable !Send.
unsafe impl<T: Element> Sync for Variable<'_, T> {}

impl<'s, T: Element> Variable<'s, T> {
    pub(crate) fn create(strategy: &'s Strategy<'_>, options: &VariableOptions<'_, T>) -> Result<Variable<'s, T>> {
        let name = opt_to_c(options.name)?;
        let mut raw_options = sys::dist_variable_options_t {
            field_mask: sys::DIST_VARIABLE_OPT_DTYPE,
            dtype: T::DTYPE,
            ..Default::default()
        };
        if name.is_some() {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_NAME;
            raw_options.name = c_ptr(&name);
        }
        let elements: i64 = options.shape.map_or(1, |s| s.iter().product());
        if let Some(shape) = options.shape {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_SHAPE;
            raw_options.shape = shape.as_ptr();
            raw_options.rank = i32::try_from(shape.len()).map_err(|_| Error::invalid("shape has too many dimensions"))?;
        }
        if let Some(value) = options.initial_value {
            // The library reads as many elements as the shape has.
            if i64::try_from(value.len()).ok() != Some(elements) {
                return Err(Error::invalid(format!(
                    "initial value has {} elements, the shape {elements}",
                    value.len()
                )));
            }
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_INITIAL_VALUE;
            raw_options.initial_value = value.as_ptr().cast();
        }
        if let Some(s) = options.synchronization {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_SYNCHRONIZATION;
            raw_options.synchronization = s.raw();
        }
        if let Some(a) = options.aggregation {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_AGGREGATION;
            raw_options.aggregation = a.raw();
        }
        let server_optimizer = options.optimizer.map(|(kind, learning_rate)| optimizer_options(kind, learning_rate));
        if let Some(o) = &server_optimizer {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_OPTIMIZER;
            raw_options.optimizer = o;
        }
        if let Some(n) = options.num_shards {
            raw_options.field_mask |= sys::DIST_VARIABLE_OPT_NUM_SHARDS;
            raw_options.num_shards = n;
        }
        let mut set = |bit: u64, present: bool| {
            if present {
                raw_options.field_mask |= bit;
            }
        };
        set(sys::DIST_VARIABLE_OPT_MAX_SHARD_BYTES, options.max_shard_bytes.is_some());
        set(sys::DIST_VARIABLE_OPT_MIN_SHARD_BYTES, options.min_shard_bytes.is_some());
        set(sys::DIST_VARIABLE_OPT_MAX_SHARDS, options.max_shards.is_some());
        set(sys::DIST_VARIABLE_OPT_COLOCATE_WITH, options.colocate_with.is_some());
        set(sys::DIST_VARIABLE_OPT_SYNC_GRADIENTS, options.sync_gradients.is_some());
        set(sys::DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE, options.replicas_to_aggregate.is_some());
        set(sys::DIST_VARIABLE_OPT_MAX_STALENESS, options.max_staleness.is_some());
        raw_options.max_shard_bytes = options.max_shard_bytes.unwrap_or(0);
        raw_options.min_shard_bytes = options.min_shard_bytes.unwrap_or(0);
        raw_options.max_shards = options.max_shards.unwrap_or(0);
        raw_options.colocate_with = options.colocate_with.map_or(ptr::null(), |v| v.raw_variable());
        raw_options.sync_gradients = i32::from(options.sync_gradients.unwrap_or(false));
        raw_options.replicas_to_aggregate = options.replicas_to_aggregate.unwrap_or(0);
        raw_options.max_staleness = options.max_staleness.unwrap_or(0);
        let mut raw = ptr::null_mut();
        // SAFETY: a live strategy; the name, shape, initial value and optimizer outlive the call.
        check(unsafe { sys::dist_variable_create(strategy.as_raw(), &raw_options, &mut raw) })?;
        Ok(Variable { raw, _strategy: PhantomData, _element: PhantomData })
    }

    pub fn as_raw(&self) -> *mut sys::dist_variable_t {
        self.raw
    }

    pub fn name(&self) -> Result<String> {
        let mut name = ptr::null();
        // SAFETY: a live handle; copied at once.
        check(unsafe { sys::dist_variable_name(self.raw, &mut name) })?;
        Ok(borrowed(name).unwrap_or_default())
    }

    pub fn dtype(&self) -> Result<sys::dist_dtype_t> {
        let mut dtype = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_dtype(self.raw, &mut dtype) })?;
        Ok(dtype)
    }

    pub fn shape(&self) -> Result<Vec<i64>> {
        let (mut shape, mut rank) = (ptr::null(), 0);
        // SAFETY: a live handle; `rank` dimensions at `shape`, copied at once.
        check(unsafe { sys::dist_variable_shape(self.raw, &mut shape, &mut rank) })?;
        if rank <= 0 || shape.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: as above.
        Ok(unsafe { std::slice::from_raw_parts(shape, rank as usize) }.to_vec())
    }

    /// Number of elements.
    pub fn len(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_count(self.raw, &mut count) })?;
        Ok(count as usize)
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// As resolved (never Auto).
    pub fn synchronization(&self) -> Result<Synchronization> {
        let mut s = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_synchronization(self.raw, &mut s) })?;
        Synchronization::from_raw(s).ok_or_else(|| Error::invalid(format!("unknown synchronization {s}")))
    }

    pub fn aggregation(&self) -> Result<Aggregation> {
        let mut a = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_aggregation(self.raw, &mut a) })?;
        Aggregation::from_raw(a).ok_or_else(|| Error::invalid(format!("unknown aggregation {a}")))
    }

    /// Cross-replica read (ON_READ: aggregated over all replicas, a collective).
    pub fn read(&mut self, out: &mut [T]) -> Result<()> {
        let buffer = describe(out.as_ptr(), out.len());
        // SAFETY: a live handle, cross-replica (exclusive); `out` exclusively borrowed.
        check(unsafe { sys::dist_variable_read(self.raw, ptr::null_mut(), &buffer) })
    }

    /// The value as a new vector.
    pub fn value(&mut self) -> Result<Vec<T>>
    where
        T: Default,
    {
        let mut out = vec![T::default(); self.len()?];
        self.read(&mut out)?;
        Ok(out)
    }

    /// Cross-replica assign: the value goes to every copy.
    pub fn assign(&mut self, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign, value)
    }

    pub fn assign_add(&mut self, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign_add, value)
    }

    pub fn assign_sub(&mut self, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign_sub, value)
    }

    fn update(
        &mut self,
        f: unsafe extern "C" fn(*mut sys::dist_variable_t, *mut sys::dist_replica_context_t, *const sys::dist_buffer_t) -> i32,
        value: &[T],
    ) -> Result<()> {
        let buffer = describe(value.as_ptr(), value.len());
        // SAFETY: a live handle, cross-replica (exclusive); `value` outlives the call.
        check(unsafe { f(self.raw, ptr::null_mut(), &buffer) })
    }

    /// ParameterServer: the servers apply `gradient` with the variable's optimizer,
    /// asynchronously to other workers.
    pub fn apply_gradient(&mut self, gradient: &[T]) -> Result<()> {
        self.update(sys::dist_variable_apply_gradient, gradient)
    }

    /// ParameterServer: rows[i] of the variable into `out` (rows.len() rows of the
    /// product of shape[1..] elements each; repeats allowed).
    pub fn read_rows(&mut self, rows: &[i64], out: &mut [T]) -> Result<()> {
        rows_call(sys::dist_variable_read_rows, self.raw, ptr::null_mut(), rows, out.as_ptr(), out.len())
    }

    /// ParameterServer: adds row i of `values` to row rows[i] (scatter-add).
    pub fn add_rows(&mut self, rows: &[i64], values: &[T]) -> Result<()> {
        rows_call(sys::dist_variable_add_rows, self.raw, ptr::null_mut(), rows, values.as_ptr(), values.len())
    }

    /// ParameterServer: the optimizer updates rows[i] with row i of `gradients` and
    /// touches no other row.
    pub fn apply_rows(&mut self, rows: &[i64], gradients: &[T]) -> Result<()> {
        rows_call(sys::dist_variable_apply_rows, self.raw, ptr::null_mut(), rows, gradients.as_ptr(), gradients.len())
    }

    /// Where a ParameterServer variable lives; empty for other strategies' variables.
    pub fn shards(&self) -> Result<Vec<Shard>> {
        let mut count = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_num_shards(self.raw, &mut count) })?;
        (0..count)
            .map(|i| {
                let mut shard = Shard { server: 0, first_row: 0, rows: 0 };
                // SAFETY: a live handle, i in range, valid outputs.
                check(unsafe {
                    sys::dist_variable_shard(self.raw, i, &mut shard.server, &mut shard.first_row, &mut shard.rows)
                })?;
                Ok(shard)
            })
            .collect()
    }

    /// Local copies as stored: local replicas, 1 for CENTRAL_STORAGE ON_WRITE, 0 on
    /// parameter servers.
    pub fn num_copies(&self) -> Result<i32> {
        let mut count = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_variable_num_copies(self.raw, &mut count) })?;
        Ok(count)
    }

    /// Local copy i as stored (a check of the mirroring).
    pub fn read_copy(&mut self, i: i32, out: &mut [T]) -> Result<()> {
        let buffer = describe(out.as_ptr(), out.len());
        // SAFETY: a live handle, cross-replica (exclusive); the library checks i.
        check(unsafe { sys::dist_variable_read_copy(self.raw, i, &buffer) })
    }
}

impl<T: Element> Drop for Variable<'_, T> {
    fn drop(&mut self) {
        // SAFETY: created by dist_variable_create, destroyed once.
        unsafe { sys::dist_variable_destroy(self.raw) };
    }
}
