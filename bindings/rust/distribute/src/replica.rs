//! Replica functions: the trampolines behind `Strategy::run` and
//! `Replica::merge_call`, and the replica context (`dist_replica_context_t`).
//!
//! A closure cannot unwind through C. Each trampoline catches a panic, keeps it
//! and returns an error status (which fails the C call and releases the other
//! replicas); the panic is resumed once the C call has returned.
use std::any::{Any, TypeId};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::Mutex;

use crate::dtype::{describe, Element, Op};
use crate::error::{check, Error, Result};
use crate::strategy::Strategy;
use crate::sys;
use crate::variable::{rows_call, Variable};

type Panic = Box<dyn Any + Send + 'static>;

/// What a failing callback leaves behind for the caller of the C function.
#[derive(Default)]
struct Failure {
    panic: Option<Panic>,
    /// The first error a closure returned, with the replica it came from.
    error: Option<(i32, Error)>,
}

impl Failure {
    fn record(slot: &Mutex<Failure>, replica: i32, outcome: std::thread::Result<Result<()>>) -> sys::dist_status_t {
        let mut failure = slot.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(Ok(())) => sys::DIST_OK,
            Ok(Err(error)) => {
                let status = error.status();
                failure.error.get_or_insert((replica, error));
                status
            }
            Err(panic) => {
                failure.panic.get_or_insert(panic);
                sys::DIST_ERR_ABORTED
            }
        }
    }

    /// After the C call: resumes a panic, else the closure's own error (its message
    /// need not be the thread's dist_last_error), else the library's.
    fn finish(slot: Mutex<Failure>, status: sys::dist_status_t) -> Result<()> {
        let failure = slot.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some(panic) = failure.panic {
            resume_unwind(panic);
        }
        if status == sys::DIST_OK {
            return Ok(());
        }
        match failure.error {
            Some((replica, error)) if error.status() == status => {
                Err(Error::new(status, format!("replica {replica}: {}", error.message())))
            }
            _ => check(status),
        }
    }
}

struct RunState<'f> {
    f: &'f (dyn Fn(&Replica<'_>) -> Result<()> + Sync),
    failure: Mutex<Failure>,
}

unsafe extern "C" fn run_trampoline(raw: *mut sys::dist_replica_context_t, user_data: *mut c_void) -> sys::dist_status_t {
    // SAFETY: user_data is the RunState that `run` keeps alive across dist_strategy_run.
    let state = unsafe { &*(user_data as *const RunState<'_>) };
    let replica = Replica { raw, _thread: PhantomData };
    let id = replica.id().unwrap_or(-1);
    let outcome = catch_unwind(AssertUnwindSafe(|| (state.f)(&replica)));
    Failure::record(&state.failure, id, outcome)
}

pub(crate) fn run(strategy: *mut sys::dist_strategy_t, f: &(dyn Fn(&Replica<'_>) -> Result<()> + Sync)) -> Result<()> {
    let state = RunState { f, failure: Mutex::new(Failure::default()) };
    // SAFETY: a live strategy; `state` outlives the call, which returns only after
    // every replica function has returned; the closure is Sync.
    let status = unsafe { sys::dist_strategy_run(strategy, Some(run_trampoline), &state as *const RunState<'_> as *mut c_void) };
    Failure::finish(state.failure, status)
}

/// The replica a replica function runs as. Valid only during that call and only
/// on its thread (neither Send nor Sync).
pub struct Replica<'run> {
    raw: *mut sys::dist_replica_context_t,
    _thread: PhantomData<(&'run (), *mut ())>,
}

impl Replica<'_> {
    pub fn as_raw(&self) -> *mut sys::dist_replica_context_t {
        self.raw
    }

    fn int(&self, f: unsafe extern "C" fn(*const sys::dist_replica_context_t, *mut i32) -> i32) -> Result<i32> {
        let mut value = 0;
        // SAFETY: a live replica context on its own thread; a valid output.
        check(unsafe { f(self.raw, &mut value) })?;
        Ok(value)
    }

    /// This replica's id in the sync group (worker rank * local replicas + local index).
    pub fn id(&self) -> Result<i32> {
        self.int(sys::dist_replica_id)
    }

    pub fn num_replicas_in_sync(&self) -> Result<i32> {
        self.int(sys::dist_replica_num_replicas_in_sync)
    }

    pub fn local_index(&self) -> Result<i32> {
        self.int(sys::dist_replica_local_index)
    }

    /// The strategy being run, to compare with the caller's.
    pub fn strategy_raw(&self) -> Result<*mut sys::dist_strategy_t> {
        let mut raw = ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::dist_replica_strategy(self.raw, &mut raw) })?;
        Ok(raw)
    }

    /// The CUDA device ordinal (under CUDA_VISIBLE_DEVICES) this replica drives,
    /// its thread's current device while the replica function runs; -1 for a CPU
    /// replica.
    pub fn device(&self) -> Result<i32> {
        self.int(sys::dist_replica_device)
    }

    /// The replica's CUDA stream (a `cudaStream_t`, owned by the strategy and the
    /// same in every run), to order the caller's own device work with; None for a
    /// CPU replica.
    pub fn stream(&self) -> Result<Option<NonNull<c_void>>> {
        let mut stream = ptr::null_mut();
        // SAFETY: a live replica context on its own thread; a valid output.
        check(unsafe { sys::dist_replica_stream(self.raw, &mut stream) })?;
        Ok(NonNull::new(stream))
    }

    /// All-reduces `data` in place across every replica in sync (every local
    /// replica calls it with the same length and op).
    pub fn all_reduce<T: Element>(&self, op: Op, data: &mut [T]) -> Result<()> {
        let buffer = describe(data.as_ptr(), data.len());
        // SAFETY: data is exclusively borrowed for the call.
        check(unsafe { sys::dist_replica_all_reduce(self.raw, op.raw(), &buffer) })
    }

    /// This replica's result of the run (copied), for `Strategy::local_results`.
    pub fn set_result<T: Element>(&self, value: &[T]) -> Result<()> {
        let buffer = describe(value.as_ptr(), value.len());
        // SAFETY: value outlives the call, which copies it.
        check(unsafe { sys::dist_replica_set_result(self.raw, &buffer) })
    }

    /// Every local replica calls it with its own `value`; once all have arrived,
    /// local replica 0's `f` runs once in cross-replica context with every
    /// replica's value (in local replica order), and each call returns its result.
    /// Every replica must pass the same type `V`.
    pub fn merge_call<V, F>(&self, value: &V, f: F) -> Result<()>
    where
        V: Sync + 'static,
        F: FnOnce(&Strategy<'_>, &[&V]) -> Result<()> + Send,
    {
        let tagged = Tagged { type_id: TypeId::of::<V>(), value: value as *const V as *const c_void };
        let state = MergeState { f: Mutex::new(Some(f)), failure: Mutex::new(Failure::default()), _value: PhantomData::<V> };
        // SAFETY: `tagged` and `state` live until every replica's merge call has
        // returned (each replica blocks in it); the trampoline matches V and F.
        let status = unsafe {
            sys::dist_replica_merge_call(
                self.raw,
                Some(merge_trampoline::<V, F>),
                &tagged as *const Tagged as *mut c_void,
                &state as *const MergeState<V, F> as *mut c_void,
            )
        };
        Failure::finish(state.failure, status)
    }

    /// Reads this replica's view of `variable` (its copy; ON_READ variables are not
    /// aggregated).
    pub fn read<T: Element>(&self, variable: &Variable<'_, T>, out: &mut [T]) -> Result<()> {
        let buffer = describe(out.as_ptr(), out.len());
        // SAFETY: live handles; `out` exclusively borrowed.
        check(unsafe { sys::dist_variable_read(variable.as_raw(), self.raw, &buffer) })
    }

    /// Replica-context assign (collective for ON_WRITE variables: every local replica
    /// calls it; the values are aggregated by the variable's aggregation).
    pub fn assign<T: Element>(&self, variable: &Variable<'_, T>, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign, variable, value)
    }

    pub fn assign_add<T: Element>(&self, variable: &Variable<'_, T>, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign_add, variable, value)
    }

    pub fn assign_sub<T: Element>(&self, variable: &Variable<'_, T>, value: &[T]) -> Result<()> {
        self.update(sys::dist_variable_assign_sub, variable, value)
    }

    /// ParameterServer: the servers apply this replica's `gradient` with the
    /// variable's optimizer (no aggregation across replicas).
    pub fn apply_gradient<T: Element>(&self, variable: &Variable<'_, T>, gradient: &[T]) -> Result<()> {
        self.update(sys::dist_variable_apply_gradient, variable, gradient)
    }

    /// ParameterServer: rows[i] of the variable into `out` (see [`Variable::read_rows`]).
    pub fn read_rows<T: Element>(&self, variable: &Variable<'_, T>, rows: &[i64], out: &mut [T]) -> Result<()> {
        rows_call(sys::dist_variable_read_rows, variable.as_raw(), self.raw, rows, out.as_ptr(), out.len())
    }

    /// ParameterServer: scatter-add of row i of `values` to row rows[i].
    pub fn add_rows<T: Element>(&self, variable: &Variable<'_, T>, rows: &[i64], values: &[T]) -> Result<()> {
        rows_call(sys::dist_variable_add_rows, variable.as_raw(), self.raw, rows, values.as_ptr(), values.len())
    }

    /// ParameterServer: a sparse gradient, applied to the listed rows only.
    pub fn apply_rows<T: Element>(&self, variable: &Variable<'_, T>, rows: &[i64], gradients: &[T]) -> Result<()> {
        rows_call(sys::dist_variable_apply_rows, variable.as_raw(), self.raw, rows, gradients.as_ptr(), gradients.len())
    }

    fn update<T: Element>(
        &self,
        f: unsafe extern "C" fn(*mut sys::dist_variable_t, *mut sys::dist_replica_context_t, *const sys::dist_buffer_t) -> i32,
        variable: &Variable<'_, T>,
        value: &[T],
    ) -> Result<()> {
        let buffer = describe(value.as_ptr(), value.len());
        // SAFETY: live handles; `value` outlives the call.
        check(unsafe { f(variable.as_raw(), self.raw, &buffer) })
    }
}

/// A merge value with its type, so that the trampoline can refuse mixed types.
struct Tagged {
    type_id: TypeId,
    value: *const c_void,
}

struct MergeState<V, F> {
    f: Mutex<Option<F>>,
    failure: Mutex<Failure>,
    _value: PhantomData<V>,
}

unsafe extern "C" fn merge_trampoline<V: Sync + 'static, F>(
    strategy: *mut sys::dist_strategy_t,
    values: *const *mut c_void,
    num_values: i32,
    user_data: *mut c_void,
) -> sys::dist_status_t
where
    F: FnOnce(&Strategy<'_>, &[&V]) -> Result<()> + Send,
{
    // SAFETY: user_data is local replica 0's MergeState<V, F>, alive while it waits.
    let state = unsafe { &*(user_data as *const MergeState<V, F>) };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut typed = Vec::with_capacity(num_values.max(0) as usize);
        for i in 0..num_values.max(0) as usize {
            // SAFETY: the library passes each replica's `value`, a Tagged that
            // replica keeps alive while it waits in the merge call.
            let tagged = unsafe { &*(*values.add(i) as *const Tagged) };
            if tagged.type_id != TypeId::of::<V>() {
                return Err(Error::invalid(format!("merge_call: local replica {i} passed a value of another type")));
            }
            // SAFETY: checked to be a V, alive and shared read-only (V: Sync).
            typed.push(unsafe { &*(tagged.value as *const V) });
        }
        let f = state.f.lock().unwrap_or_else(|p| p.into_inner()).take();
        let f = f.ok_or_else(|| Error::invalid("merge function called twice"))?;
        f(&Strategy::borrowed(strategy), &typed)
    }));
    Failure::record(&state.failure, 0, outcome)
}
