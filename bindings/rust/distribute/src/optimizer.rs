//! Optimizers (`dist_optimizer_t`) for `Strategy::apply_gradients`.
use std::ptr;

use crate::error::{check, Result};
use crate::sys;

/// dist_optimizer_kind_t with its hyperparameters; `None` takes the library's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptimizerKind {
    /// var -= lr * g
    Sgd,
    /// Keras SGD with momentum (default 0.9), optionally Nesterov.
    Momentum { momentum: Option<f64>, nesterov: bool },
    /// Keras Adam.
    Adam { beta_1: Option<f64>, beta_2: Option<f64>, epsilon: Option<f64> },
    /// Keras Adagrad (accumulators start at initial_accumulator_value, default 0.1).
    Adagrad { initial_accumulator_value: Option<f64>, epsilon: Option<f64> },
}

/// dist_optimizer_options_t of `kind`; `learning_rate` None: 0.01 (Adam 0.001).
pub(crate) fn raw_options(kind: OptimizerKind, learning_rate: Option<f64>) -> sys::dist_optimizer_options_t {
    let mut o = sys::dist_optimizer_options_t { field_mask: sys::DIST_OPTIMIZER_OPT_KIND, ..Default::default() };
    let mut set = |bit: u64, value: Option<f64>, field: &mut f64| {
        if let Some(v) = value {
            o.field_mask |= bit;
            *field = v;
        }
    };
    let mut learning = 0.0;
    set(sys::DIST_OPTIMIZER_OPT_LEARNING_RATE, learning_rate, &mut learning);
    let (mut momentum_value, mut beta_1_value, mut beta_2_value, mut epsilon_value) = (0.0, 0.0, 0.0, 0.0);
    let mut accumulator_value = 0.0;
    let mut nesterov_value = 0;
    let kind = match kind {
        OptimizerKind::Sgd => sys::DIST_OPTIMIZER_SGD,
        OptimizerKind::Momentum { momentum, nesterov } => {
            set(sys::DIST_OPTIMIZER_OPT_MOMENTUM, momentum, &mut momentum_value);
            nesterov_value = i32::from(nesterov);
            sys::DIST_OPTIMIZER_MOMENTUM
        }
        OptimizerKind::Adam { beta_1, beta_2, epsilon } => {
            set(sys::DIST_OPTIMIZER_OPT_BETA_1, beta_1, &mut beta_1_value);
            set(sys::DIST_OPTIMIZER_OPT_BETA_2, beta_2, &mut beta_2_value);
            set(sys::DIST_OPTIMIZER_OPT_EPSILON, epsilon, &mut epsilon_value);
            sys::DIST_OPTIMIZER_ADAM
        }
        OptimizerKind::Adagrad { initial_accumulator_value, epsilon } => {
            set(sys::DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE, initial_accumulator_value, &mut accumulator_value);
            set(sys::DIST_OPTIMIZER_OPT_EPSILON, epsilon, &mut epsilon_value);
            sys::DIST_OPTIMIZER_ADAGRAD
        }
    };
    if kind == sys::DIST_OPTIMIZER_MOMENTUM {
        o.field_mask |= sys::DIST_OPTIMIZER_OPT_NESTEROV;
    }
    (o.kind, o.learning_rate, o.momentum, o.nesterov) = (kind, learning, momentum_value, nesterov_value);
    (o.beta_1, o.beta_2, o.epsilon) = (beta_1_value, beta_2_value, epsilon_value);
    o.initial_accumulator_value = accumulator_value;
    o
}

/// An optimizer: its slots and step count. Send, not Sync (one thread at a time).
#[derive(Debug)]
pub struct Optimizer {
    raw: *mut sys::dist_optimizer_t,
}

// SAFETY: the header allows any thread, one at a time: mutation needs &mut self.
unsafe impl Send for Optimizer {}

impl Optimizer {
    /// dist_optimizer_create; `learning_rate` None: 0.01 (Adam 0.001).
    pub fn new(kind: OptimizerKind, learning_rate: Option<f64>) -> Result<Optimizer> {
        let o = raw_options(kind, learning_rate);
        let mut raw = ptr::null_mut();
        // SAFETY: a valid options struct and output.
        check(unsafe { sys::dist_optimizer_create(&o, &mut raw) })?;
        Ok(Optimizer { raw })
    }

    pub fn as_raw(&mut self) -> *mut sys::dist_optimizer_t {
        self.raw
    }

    /// apply_gradients calls made so far.
    pub fn iterations(&self) -> Result<i64> {
        let mut n = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_optimizer_iterations(self.raw, &mut n) })?;
        Ok(n)
    }
}

impl Drop for Optimizer {
    fn drop(&mut self) {
        // SAFETY: created by dist_optimizer_create, destroyed once.
        unsafe { sys::dist_optimizer_destroy(self.raw) };
    }
}
