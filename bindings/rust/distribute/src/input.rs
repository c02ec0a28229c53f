//! Input contexts (`dist_input_context_t`): how input pipelines and batches divide.
use std::ptr;

use crate::error::{check, Result};
use crate::sys;

/// TF's InputContext. Immutable, so Send and Sync as the header allows.
#[derive(Debug)]
pub struct InputContext {
    raw: *mut sys::dist_input_context_t,
}

// SAFETY: the header says an input context is immutable and usable from any thread.
unsafe impl Send for InputContext {}
unsafe impl Sync for InputContext {}

impl InputContext {
    pub fn new(num_input_pipelines: i32, input_pipeline_id: i32, num_replicas_in_sync: i32) -> Result<InputContext> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid output; the library checks the numbers.
        check(unsafe { sys::dist_input_context_create(num_input_pipelines, input_pipeline_id, num_replicas_in_sync, &mut raw) })?;
        Ok(InputContext { raw })
    }

    pub(crate) fn from_raw(raw: *mut sys::dist_input_context_t) -> InputContext {
        InputContext { raw }
    }

    fn int(&self, f: unsafe extern "C" fn(*const sys::dist_input_context_t, *mut i32) -> i32) -> Result<i32> {
        let mut value = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { f(self.raw, &mut value) })?;
        Ok(value)
    }

    pub fn num_input_pipelines(&self) -> Result<i32> {
        self.int(sys::dist_input_context_num_input_pipelines)
    }

    pub fn input_pipeline_id(&self) -> Result<i32> {
        self.int(sys::dist_input_context_input_pipeline_id)
    }

    pub fn num_replicas_in_sync(&self) -> Result<i32> {
        self.int(sys::dist_input_context_num_replicas_in_sync)
    }

    /// global_batch_size / num_replicas_in_sync; an error when it does not divide.
    pub fn per_replica_batch_size(&self, global_batch_size: i64) -> Result<i64> {
        let mut n = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_input_context_per_replica_batch_size(self.raw, global_batch_size, &mut n) })?;
        Ok(n)
    }

    /// The indices of the files this pipeline reads (file i goes to pipeline
    /// i % num_input_pipelines).
    pub fn shard_files(&self, num_files: i64) -> Result<Vec<i64>> {
        // Pipeline p gets the files p, p + pipelines, ...: at most ceil(files / pipelines).
        let pipelines = i64::from(self.num_input_pipelines()?.max(1));
        let mut indices = vec![0i64; ((num_files.max(0) + pipelines - 1) / pipelines) as usize];
        let mut count = 0i64;
        // SAFETY: room for indices.len() indices and a valid count output.
        check(unsafe {
            sys::dist_input_context_shard_files(self.raw, num_files, indices.as_mut_ptr(), indices.len() as i64, &mut count)
        })?;
        indices.truncate(count.max(0) as usize);
        Ok(indices)
    }

    /// This pipeline's contiguous part of [0, total), as a range (empty when
    /// total < pipelines leaves it nothing).
    pub fn shard_range(&self, total: i64) -> Result<std::ops::Range<i64>> {
        let (mut begin, mut count) = (0, 0);
        // SAFETY: a live handle and valid outputs.
        check(unsafe { sys::dist_input_context_shard_range(self.raw, total, &mut begin, &mut count) })?;
        Ok(begin..begin + count)
    }
}

impl Drop for InputContext {
    fn drop(&mut self) {
        // SAFETY: created by the library for us, destroyed once.
        unsafe { sys::dist_input_context_destroy(self.raw) };
    }
}
