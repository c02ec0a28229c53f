//! Cluster resolution: `dist_cluster_t` as `Cluster`.
use std::ffi::{c_char, CString};
use std::ptr;

use crate::error::{check, Error, Result};
use crate::strings::{borrowed, opt_to_c, owned, ptr as c_ptr, to_c};
use crate::sys;

/// Which resolver produced, or should produce, a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    Auto,
    TfConfig,
    Simple,
    Slurm,
    Mpi,
    Torchrun,
    Union,
}

impl Resolver {
    pub fn raw(self) -> sys::dist_resolver_kind_t {
        match self {
            Resolver::Auto => sys::DIST_RESOLVER_AUTO,
            Resolver::TfConfig => sys::DIST_RESOLVER_TF_CONFIG,
            Resolver::Simple => sys::DIST_RESOLVER_SIMPLE,
            Resolver::Slurm => sys::DIST_RESOLVER_SLURM,
            Resolver::Mpi => sys::DIST_RESOLVER_MPI,
            Resolver::Torchrun => sys::DIST_RESOLVER_TORCHRUN,
            Resolver::Union => sys::DIST_RESOLVER_UNION,
        }
    }

    pub fn from_raw(kind: sys::dist_resolver_kind_t) -> Option<Resolver> {
        [Resolver::Auto, Resolver::TfConfig, Resolver::Simple, Resolver::Slurm, Resolver::Mpi, Resolver::Torchrun, Resolver::Union]
            .into_iter()
            .find(|r| r.raw() == kind)
    }

    /// "tf_config", "slurm", ... (dist_resolver_name); None for Auto.
    pub fn name(self) -> Option<&'static str> {
        resolver_name(self.raw())
    }
}

/// dist_resolver_name for any raw value: None when it is not a resolver kind.
pub fn resolver_name(kind: sys::dist_resolver_kind_t) -> Option<&'static str> {
    // SAFETY: static storage or NULL.
    let raw = unsafe { sys::dist_resolver_name(kind) };
    (!raw.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(raw) }.to_str().unwrap_or(""))
}

/// dist_cluster_options_t: each `Some` field is set (its mask bit on); `None`
/// takes the library's documented default. Start from `Default::default()`.
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions<'a> {
    pub resolver: Option<Resolver>,
    pub task_type: Option<String>,
    pub task_id: Option<i32>,
    pub rpc_layer: Option<String>,
    pub environment: Option<String>,
    /// SIMPLE: the cluster spec as JSON.
    pub cluster_spec_json: Option<String>,
    pub master: Option<String>,
    /// SLURM, MPI, TORCHRUN: (job name, task count) splits of the ranks.
    pub jobs: Option<Vec<(String, i32)>>,
    pub port_base: Option<i32>,
    pub tasks_per_node: Option<i32>,
    pub gpus_per_node: Option<i32>,
    pub gpus_per_task: Option<i32>,
    pub auto_set_gpu: Option<bool>,
    /// UNION: the clusters to merge, in priority order.
    pub members: Option<Vec<&'a Cluster>>,
    /// "NAME=value" strings read instead of the process environment.
    pub env: Option<Vec<String>>,
    pub num_gpus: Option<i32>,
}

/// The C strings and arrays dist_cluster_options_t points into, alive for the call.
#[derive(Default)]
struct Owned {
    strings: Vec<CString>,
    job_names: Vec<*const c_char>,
    job_counts: Vec<i32>,
    members: Vec<*const sys::dist_cluster_t>,
    env: Vec<*const c_char>,
}

impl ClusterOptions<'_> {
    fn to_raw(&self, keep: &mut Owned) -> Result<sys::dist_cluster_options_t> {
        let mut raw = sys::dist_cluster_options_t::default();
        let mut text = |value: &Option<String>, bit: u64, mask: &mut u64| -> Result<*const c_char> {
            let c = opt_to_c(value.as_deref())?;
            if c.is_some() {
                *mask |= bit;
            }
            let p = c_ptr(&c);
            keep.strings.extend(c);
            Ok(p)
        };
        raw.task_type = text(&self.task_type, sys::DIST_CLUSTER_OPT_TASK_TYPE, &mut raw.field_mask)?;
        raw.rpc_layer = text(&self.rpc_layer, sys::DIST_CLUSTER_OPT_RPC_LAYER, &mut raw.field_mask)?;
        raw.environment = text(&self.environment, sys::DIST_CLUSTER_OPT_ENVIRONMENT, &mut raw.field_mask)?;
        raw.cluster_spec_json = text(&self.cluster_spec_json, sys::DIST_CLUSTER_OPT_CLUSTER_SPEC, &mut raw.field_mask)?;
        raw.master = text(&self.master, sys::DIST_CLUSTER_OPT_MASTER, &mut raw.field_mask)?;
        let mut number = |value: Option<i32>, bit: u64, field: &mut i32| {
            if let Some(v) = value {
                raw.field_mask |= bit;
                *field = v;
            }
        };
        number(self.resolver.map(Resolver::raw), sys::DIST_CLUSTER_OPT_RESOLVER, &mut raw.resolver);
        number(self.task_id, sys::DIST_CLUSTER_OPT_TASK_ID, &mut raw.task_id);
        number(self.port_base, sys::DIST_CLUSTER_OPT_PORT_BASE, &mut raw.port_base);
        number(self.tasks_per_node, sys::DIST_CLUSTER_OPT_TASKS_PER_NODE, &mut raw.tasks_per_node);
        number(self.gpus_per_node, sys::DIST_CLUSTER_OPT_GPUS_PER_NODE, &mut raw.gpus_per_node);
        number(self.gpus_per_task, sys::DIST_CLUSTER_OPT_GPUS_PER_TASK, &mut raw.gpus_per_task);
        number(self.auto_set_gpu.map(i32::from), sys::DIST_CLUSTER_OPT_AUTO_SET_GPU, &mut raw.auto_set_gpu);
        number(self.num_gpus, sys::DIST_CLUSTER_OPT_NUM_GPUS, &mut raw.num_gpus);
        if let Some(jobs) = &self.jobs {
            for (name, count) in jobs {
                let c = to_c(name)?;
                keep.job_names.push(c.as_ptr());
                keep.strings.push(c);
                keep.job_counts.push(*count);
            }
            raw.field_mask |= sys::DIST_CLUSTER_OPT_JOBS;
            (raw.job_names, raw.job_counts, raw.num_jobs) = (keep.job_names.as_ptr(), keep.job_counts.as_ptr(), jobs.len());
        }
        if let Some(members) = &self.members {
            keep.members = members.iter().map(|m| m.raw as *const _).collect();
            raw.field_mask |= sys::DIST_CLUSTER_OPT_MEMBERS;
            (raw.members, raw.num_members) = (keep.members.as_ptr(), members.len());
        }
        if let Some(env) = &self.env {
            for entry in env {
                let c = to_c(entry)?;
                keep.env.push(c.as_ptr());
                keep.strings.push(c);
            }
            keep.env.push(ptr::null());
            raw.field_mask |= sys::DIST_CLUSTER_OPT_ENV;
            raw.env = keep.env.as_ptr();
        }
        Ok(raw)
    }
}

/// The resolved view of a cluster. Immutable: every query may run concurrently
/// from any thread (hence Send + Sync); dropping it destroys it.
#[derive(Debug)]
pub struct Cluster {
    raw: *mut sys::dist_cluster_t,
}

// SAFETY: the header's thread rules: a dist_cluster_t is immutable once created and every
// getter may be called concurrently; destroy (Drop) has exclusive access by construction.
unsafe impl Send for Cluster {}
unsafe impl Sync for Cluster {}

impl Cluster {
    /// dist_cluster_resolve.
    pub fn resolve(options: &ClusterOptions<'_>) -> Result<Cluster> {
        let mut keep = Owned::default();
        let raw_options = options.to_raw(&mut keep)?;
        let mut raw = ptr::null_mut();
        // SAFETY: raw_options points into `keep`, alive until the call returns.
        check(unsafe { sys::dist_cluster_resolve(&raw_options, &mut raw) })?;
        Ok(Cluster { raw })
    }

    /// Resolves from the environment (AUTO): TF_CONFIG, Slurm, MPI or torchrun.
    pub fn from_env() -> Result<Cluster> {
        Cluster::resolve(&ClusterOptions::default())
    }

    /// dist_cluster_from_json: a TF_CONFIG document (or `to_json()`'s output).
    pub fn from_json(json: &str) -> Result<Cluster> {
        let json = to_c(json)?;
        let mut raw = ptr::null_mut();
        // SAFETY: json is NUL-terminated and alive for the call.
        check(unsafe { sys::dist_cluster_from_json(json.as_ptr(), &mut raw) })?;
        Ok(Cluster { raw })
    }

    pub fn as_raw(&self) -> *const sys::dist_cluster_t {
        self.raw
    }

    fn string(&self, f: unsafe extern "C" fn(*const sys::dist_cluster_t, *mut *const c_char) -> i32) -> Result<Option<String>> {
        let mut out = ptr::null();
        // SAFETY: a live handle; the borrowed string is copied before the next call.
        check(unsafe { f(self.raw, &mut out) })?;
        Ok(borrowed(out))
    }

    pub fn resolver(&self) -> Result<Resolver> {
        let mut kind = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_cluster_resolver(self.raw, &mut kind) })?;
        Resolver::from_raw(kind).ok_or_else(|| Error::invalid(format!("unknown resolver kind {kind}")))
    }

    pub fn task_type(&self) -> Result<Option<String>> {
        self.string(sys::dist_cluster_task_type)
    }

    /// This task's index in its job, or -1 if unknown.
    pub fn task_id(&self) -> Result<i32> {
        let mut id = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_cluster_task_id(self.raw, &mut id) })?;
        Ok(id)
    }

    pub fn rpc_layer(&self) -> Result<Option<String>> {
        self.string(sys::dist_cluster_rpc_layer)
    }

    pub fn environment(&self) -> Result<Option<String>> {
        self.string(sys::dist_cluster_environment)
    }

    pub fn cuda_visible_devices(&self) -> Result<Option<String>> {
        self.string(sys::dist_cluster_cuda_visible_devices)
    }

    /// Job names, sorted.
    pub fn jobs(&self) -> Result<Vec<String>> {
        let mut count = 0usize;
        // SAFETY: a live handle and valid outputs throughout.
        check(unsafe { sys::dist_cluster_num_jobs(self.raw, &mut count) })?;
        (0..count)
            .map(|i| {
                let mut name = ptr::null();
                check(unsafe { sys::dist_cluster_job_name(self.raw, i, &mut name) })?;
                Ok(borrowed(name).unwrap_or_default())
            })
            .collect()
    }

    pub fn num_tasks(&self, job: &str) -> Result<i32> {
        let job = to_c(job)?;
        let mut n = 0;
        // SAFETY: a live handle, a NUL-terminated job and a valid output.
        check(unsafe { sys::dist_cluster_num_tasks(self.raw, job.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// The task indices of a job, increasing (a sparse job skips some).
    pub fn task_indices(&self, job: &str) -> Result<Vec<i32>> {
        let n = self.num_tasks(job)?;
        let c_job = to_c(job)?;
        (0..n)
            .map(|i| {
                let mut index = 0;
                // SAFETY: as above.
                check(unsafe { sys::dist_cluster_task_index(self.raw, c_job.as_ptr(), i, &mut index) })?;
                Ok(index)
            })
            .collect()
    }

    /// "host:port" of a task.
    pub fn task_address(&self, job: &str, task_index: i32) -> Result<String> {
        let job = to_c(job)?;
        let mut out = ptr::null();
        // SAFETY: as above; the borrowed address is copied at once.
        check(unsafe { sys::dist_cluster_task_address(self.raw, job.as_ptr(), task_index, &mut out) })?;
        Ok(borrowed(out).unwrap_or_default())
    }

    /// TF's master(task_type, task_id, rpc_layer); None/-1/None asks about this task.
    pub fn master(&self, task_type: Option<&str>, task_id: i32, rpc_layer: Option<&str>) -> Result<String> {
        let (task_type, rpc_layer) = (opt_to_c(task_type)?, opt_to_c(rpc_layer)?);
        let mut out = ptr::null_mut();
        // SAFETY: a live handle; NULL or NUL-terminated strings; the result is ours to free.
        check(unsafe { sys::dist_cluster_master(self.raw, c_ptr(&task_type), task_id, c_ptr(&rpc_layer), &mut out) })?;
        Ok(owned(out))
    }

    /// Accelerators of a device type ("GPU" when None) available to this task.
    pub fn num_accelerators(&self, device_type: Option<&str>) -> Result<i32> {
        let device_type = opt_to_c(device_type)?;
        let mut n = 0;
        // SAFETY: a live handle, NULL or a NUL-terminated string, a valid output.
        check(unsafe { sys::dist_cluster_num_accelerators(self.raw, c_ptr(&device_type), &mut n) })?;
        Ok(n)
    }

    /// The whole resolved view as JSON (dist-info's format).
    pub fn to_json(&self) -> Result<String> {
        let mut out = ptr::null_mut();
        // SAFETY: a live handle; the result is ours to free.
        check(unsafe { sys::dist_cluster_to_json(self.raw, &mut out) })?;
        Ok(owned(out))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SAFETY: created by the library, destroyed exactly once.
        unsafe { sys::dist_cluster_destroy(self.raw) };
    }
}
