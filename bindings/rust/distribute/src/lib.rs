//! Safe Rust API for libdistribute: clusters (TensorFlow's cluster resolvers),
//! contexts that join them, communicators and collectives over slices.
//!
//! ```no_run
//! use distribute::{Cluster, Context, Op};
//! let cluster = Cluster::from_env()?;
//! let context = Context::join(&cluster)?;
//! let world = context.world()?;
//! let mut gradient = vec![1.0f32; 1024];
//! world.all_reduce_in_place(&mut gradient, Op::Mean)?;
//! # Ok::<(), distribute::Error>(())
//! ```
//!
//! Ownership mirrors the C rules: a `Comm` borrows its `Context`, a `Request` its
//! `Comm`, so the borrow checker orders every destroy. These do not compile:
//!
//! A communicator shared between threads (the header allows one thread at a time):
//! ```compile_fail,E0277
//! fn share<T: Sync>(_: &T) {}
//! # fn f(world: distribute::Comm<'_>) {
//! share(&world);
//! # }
//! ```
//! A communicator outliving its context:
//! ```compile_fail,E0597
//! # fn f(cluster: &distribute::Cluster) -> distribute::Result<()> {
//! let world = {
//!     let context = distribute::Context::join(cluster)?;
//!     context.world()?
//! };
//! # Ok(()) }
//! ```
//! A request outliving its communicator:
//! ```compile_fail,E0597
//! # fn f(context: &distribute::Context) -> distribute::Result<()> {
//! let request = {
//!     let world = context.world()?;
//!     world.barrier_start()?
//! };
//! # Ok(()) }
//! ```
//! A strategy moved to another thread (its creating thread is its cross-replica context):
//! ```compile_fail,E0277
//! fn send<T: Send>(_: T) {}
//! # fn f(strategy: distribute::Strategy<'_>) {
//! send(strategy);
//! # }
//! ```
//! A replica function that is not Sync (it runs on several threads at once):
//! ```compile_fail,E0277
//! # fn f(strategy: &distribute::Strategy<'_>) -> distribute::Result<()> {
//! let count = std::cell::Cell::new(0);
//! strategy.run(|_| { count.set(count.get() + 1); Ok(()) })?;
//! # Ok(()) }
//! ```
//! A cross-replica variable call inside a run that shares the variable:
//! ```compile_fail,E0596
//! # fn f(strategy: &distribute::Strategy<'_>, v: &mut distribute::Variable<'_, f32>) -> distribute::Result<()> {
//! strategy.run(|_| v.assign(&[1.0]))?;
//! # Ok(()) }
//! ```
pub use distribute_sys as sys;

mod all_to_all_v;
mod cluster;
mod comm;
mod completion;
mod context;
mod dtype;
mod error;
mod exchange;
mod input;
mod optimizer;
mod point_to_point;
mod replica;
mod request;
mod server;
mod strategy;
mod strings;
mod variable;

pub use all_to_all_v::Blocks;
pub use cluster::{resolver_name, Cluster, ClusterOptions, Resolver};
pub use comm::{AllreduceAlgorithm, Collective, Comm, CommOptions, CommPath, CommStat};
pub use context::{Context, ContextOptions};
pub use dtype::{Element, Op, BF16, F16};
pub use error::{status_string, BoxError, Error, Result};
pub use input::InputContext;
pub use optimizer::{Optimizer, OptimizerKind};
pub use point_to_point::{ANY_SOURCE, TAG_MAX};
pub use replica::Replica;
pub use request::Request;
pub use server::{checkpoint_restore, checkpoint_save, CheckpointOptions, LogFn, Server, ServerOptions};
pub use strategy::{Communication, CrossDeviceOps, Placement, Strategy, StrategyKind, StrategyOptions};
pub use variable::{Aggregation, AnyVariable, Shard, Synchronization, Variable, VariableOptions};

/// DIST_VERSION_HEX of the loaded library.
pub fn version() -> u32 {
    // SAFETY: no arguments.
    unsafe { sys::dist_version() }
}

/// "0.1.0" of the loaded library.
pub fn version_string() -> String {
    // SAFETY: static storage.
    strings::borrowed(unsafe { sys::dist_version_string() }).unwrap_or_default()
}

/// Optional components built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features(pub u32);

impl Features {
    pub fn ucx(self) -> bool {
        self.0 & sys::DIST_FEATURE_UCX != 0
    }
    pub fn cuda(self) -> bool {
        self.0 & sys::DIST_FEATURE_CUDA != 0
    }
    pub fn nccl(self) -> bool {
        self.0 & sys::DIST_FEATURE_NCCL != 0
    }
    pub fn hwloc(self) -> bool {
        self.0 & sys::DIST_FEATURE_HWLOC != 0
    }
}

pub fn build_features() -> Features {
    // SAFETY: no arguments.
    Features(unsafe { sys::dist_build_features() })
}

/// The build report as JSON.
pub fn build_info() -> Result<String> {
    let mut out = std::ptr::null_mut();
    // SAFETY: a valid output; the string is ours to free.
    error::check(unsafe { sys::dist_build_info(&mut out) })?;
    Ok(strings::owned(out))
}
