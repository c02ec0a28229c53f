//! Strategies, replica functions, merge calls, variables, optimizers and input
//! contexts in one process (no context: a single worker, MIRRORED with two
//! logical CPU replicas on the library's threads).
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use distribute::{
    sys, Aggregation, Cluster, Communication, CrossDeviceOps, Element, InputContext, Op, Optimizer, OptimizerKind, Strategy,
    StrategyKind, StrategyOptions, Synchronization, VariableOptions,
};

fn mirrored(replicas: i32) -> Strategy<'static> {
    let options = StrategyOptions { kind: Some(StrategyKind::Mirrored), num_cpu_devices: Some(replicas), ..Default::default() };
    Strategy::new(None, &options).expect("mirrored strategy")
}

#[test]
fn a_bad_option_is_an_invalid_argument_with_the_c_message() {
    let options = StrategyOptions { kind: Some(StrategyKind::Mirrored), num_cpu_devices: Some(0), ..Default::default() };
    let error = Strategy::new(None, &options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("num_cpu_devices 0"), "{error}");
    let options = StrategyOptions { kind: Some(StrategyKind::OneDevice), num_cpu_devices: Some(2), ..Default::default() };
    let error = Strategy::new(None, &options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("OneDeviceStrategy"), "{error}");
}

#[test]
fn queries_of_a_single_worker() {
    let strategy = mirrored(2);
    assert_eq!(strategy.kind().unwrap(), StrategyKind::Mirrored);
    assert_eq!(strategy.num_replicas_in_sync().unwrap(), 2);
    assert_eq!(strategy.num_local_replicas().unwrap(), 2);
    assert!(strategy.device(1).unwrap().ends_with("CPU:1"), "{}", strategy.device(1).unwrap());
    assert_eq!(strategy.device(2).unwrap_err().status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(strategy.cluster().unwrap().is_none());
    assert_eq!(strategy.task_type().unwrap(), None);
    assert_eq!(strategy.task_id().unwrap(), -1);
    assert_eq!(strategy.worker_index().unwrap(), (0, 1));
}

fn refused(options: &StrategyOptions<'_>) -> distribute::Error {
    let error = Strategy::new(None, options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT, "{error}");
    error
}

fn cross_device(kind: StrategyKind, ops: Option<CrossDeviceOps>, reduce_to_device: Option<&str>) -> StrategyOptions<'_> {
    let num_cpu_devices = (kind != StrategyKind::OneDevice).then_some(2);
    StrategyOptions { kind: Some(kind), num_cpu_devices, cross_device_ops: ops, reduce_to_device, ..Default::default() }
}

#[test]
fn cross_device_ops_in_effect_on_cpu_replicas() {
    // AUTO resolves to ReductionToOneDevice on CPU replicas, for every kind.
    for kind in [StrategyKind::OneDevice, StrategyKind::Mirrored, StrategyKind::CentralStorage] {
        let strategy = Strategy::new(None, &cross_device(kind, None, None)).unwrap();
        assert_eq!(strategy.cross_device_ops().unwrap(), CrossDeviceOps::ReductionToOneDevice, "{kind:?}");
    }
    for ops in [CrossDeviceOps::Auto, CrossDeviceOps::ReductionToOneDevice] {
        let strategy = Strategy::new(None, &cross_device(StrategyKind::Mirrored, Some(ops), None)).unwrap();
        assert_eq!(strategy.cross_device_ops().unwrap(), CrossDeviceOps::ReductionToOneDevice);
    }
    for device in ["CPU:0", "/cpu:0", "/device:CPU:0"] {
        let options = cross_device(StrategyKind::Mirrored, Some(CrossDeviceOps::ReductionToOneDevice), Some(device));
        let strategy = Strategy::new(None, &options).unwrap();
        assert_eq!(strategy.cross_device_ops().unwrap(), CrossDeviceOps::ReductionToOneDevice);
        let mut sum = [0f32; 2];
        strategy.reduce(Op::Sum, &[&[1.5, -2.0], &[0.5, 4.0]], None, &mut sum).unwrap();
        assert_eq!(sum, [2.0, 2.0], "{device}");
    }
    assert_eq!(
        [0, 1, 2, 3].map(|raw| CrossDeviceOps::from_raw(raw).unwrap().raw()),
        [0, 1, 2, 3],
        "the enum follows the header's values"
    );
    assert_eq!(CrossDeviceOps::from_raw(4), None);
}

#[test]
fn cross_device_ops_and_reduce_to_device_refused_on_cpu_replicas() {
    for ops in [CrossDeviceOps::NcclAllReduce, CrossDeviceOps::HierarchicalCopy] {
        let error = refused(&cross_device(StrategyKind::Mirrored, Some(ops), None));
        assert!(error.message().contains("combines GPU replicas, and this strategy's replicas are CPU devices"), "{error}");
    }
    for kind in [StrategyKind::OneDevice, StrategyKind::CentralStorage] {
        let error = refused(&cross_device(kind, Some(CrossDeviceOps::ReductionToOneDevice), None));
        assert!(error.message().contains("is for MIRRORED and MULTI_WORKER_MIRRORED"), "{error}");
    }
    let cluster = Cluster::from_json(r#"{"cluster": {"ps": ["127.0.0.1:1"]}}"#).unwrap();
    let options = StrategyOptions {
        kind: Some(StrategyKind::ParameterServer),
        cluster: Some(&cluster),
        token: Some("t"),
        cross_device_ops: Some(CrossDeviceOps::Auto),
        ..Default::default()
    };
    let error = refused(&options);
    assert!(error.message().contains("is for MIRRORED and MULTI_WORKER_MIRRORED"), "{error}");
    let options = cross_device(StrategyKind::Mirrored, Some(CrossDeviceOps::ReductionToOneDevice), Some("GPU:0"));
    let error = refused(&options);
    assert!(error.message().contains("\"GPU:0\" names a GPU"), "{error}");
    for ops in [None, Some(CrossDeviceOps::Auto)] {
        let error = refused(&cross_device(StrategyKind::Mirrored, ops, Some("CPU:0")));
        assert!(error.message().contains("reduce_to_device") && error.message().contains("REDUCTION_TO_ONE_DEVICE"), "{error}");
    }
    let options = StrategyOptions { kind: Some(StrategyKind::Mirrored), communication: Some(Communication::Nccl), ..Default::default() };
    let error = Strategy::new(None, &options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_UNSUPPORTED, "{error}");
    assert!(error.message().contains("NCCL"), "{error}");
}

const NUM_PACKS_REFUSED: &str =
    "num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, and this strategy's are ReductionToOneDevice";

#[test]
fn num_packs_refused_on_cpu_replicas() {
    // CPU replicas always reduce to one device: num_packs (NCCL and hierarchical copy
    // only) is refused whatever its value, the ops given or chosen by Auto.
    for num_packs in [1, 4, 64] {
        let options = StrategyOptions { num_packs: Some(num_packs), ..cross_device(StrategyKind::Mirrored, None, None) };
        let error = refused(&options);
        assert!(error.message().contains(NUM_PACKS_REFUSED), "{error}");
    }
    for ops in [CrossDeviceOps::Auto, CrossDeviceOps::ReductionToOneDevice] {
        let options = StrategyOptions { num_packs: Some(2), ..cross_device(StrategyKind::Mirrored, Some(ops), None) };
        let error = refused(&options);
        assert!(error.message().contains(NUM_PACKS_REFUSED), "{error}");
    }
    for kind in [StrategyKind::OneDevice, StrategyKind::CentralStorage] {
        let options = StrategyOptions { num_packs: Some(2), ..cross_device(kind, None, None) };
        let error = refused(&options);
        assert!(error.message().contains(NUM_PACKS_REFUSED), "{error}");
    }
}

#[test]
fn an_unknown_cross_device_ops_value_is_refused_through_the_sys_struct() {
    // The safe enum cannot name 7: the raw struct (the same layout) can.
    let mut options = sys::dist_strategy_options_t::default();
    options.field_mask = sys::DIST_STRATEGY_OPT_KIND | sys::DIST_STRATEGY_OPT_CROSS_DEVICE_OPS;
    options.kind = sys::DIST_STRATEGY_MIRRORED;
    options.cross_device_ops = 7;
    let mut raw = std::ptr::null_mut();
    // SAFETY: a valid options struct and output; no context.
    let status = unsafe { sys::dist_strategy_create(std::ptr::null_mut(), &options, &mut raw) };
    assert_eq!(status, sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(raw.is_null());
    // SAFETY: the thread's last error, a NUL-terminated string.
    let message = unsafe { std::ffi::CStr::from_ptr(sys::dist_last_error()) }.to_string_lossy().into_owned();
    assert!(message.contains("cross_device_ops 7 is not one of"), "{message}");
}

#[test]
fn cpu_replicas_have_no_cuda_device_or_stream() {
    for replicas in [1, 2] {
        let strategy = mirrored(replicas);
        let seen = Mutex::new(Vec::new());
        strategy
            .run(|replica| {
                seen.lock().unwrap().push((replica.device()?, replica.stream()?.is_none()));
                Ok(())
            })
            .unwrap();
        assert_eq!(seen.into_inner().unwrap(), vec![(-1, true); replicas as usize]);
    }
}

#[test]
fn each_replica_runs_once_with_its_own_id_and_all_reduces() {
    let strategy = mirrored(2);
    let seen = Mutex::new(Vec::new());
    let raw = strategy.as_raw() as usize;
    strategy
        .run(|replica| {
            let id = replica.id()?;
            assert_eq!(replica.num_replicas_in_sync()?, 2);
            assert_eq!(replica.local_index()?, id);
            assert_eq!(replica.strategy_raw()? as usize, raw);
            let mut data = [id as f64 + 1.0, 10.0 * (id as f64 + 1.0)];
            replica.all_reduce(Op::Sum, &mut data)?;
            replica.set_result(&data)?;
            seen.lock().unwrap().push(id);
            Ok(())
        })
        .unwrap();
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [0, 1]);
    assert_eq!(strategy.local_results::<f64>().unwrap(), vec![vec![3.0, 30.0], vec![3.0, 30.0]]);
    assert_eq!(strategy.local_results::<f32>().unwrap_err().status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn a_panic_in_one_replica_resumes_after_run_and_releases_the_other() {
    let strategy = mirrored(2);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        strategy.run(|replica| {
            if replica.local_index()? == 1 {
                panic!("replica one gives up");
            }
            // Waits for replica 1, which never comes: released with DIST_ERR_ABORTED.
            let mut data = [1i32];
            replica.all_reduce(Op::Sum, &mut data)
        })
    }));
    let payload = outcome.expect_err("the panic must propagate");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"replica one gives up"));
    // The strategy still works afterwards.
    strategy.run(|_| Ok(())).unwrap();
}

#[test]
fn an_error_in_one_replica_fails_run_with_its_status_and_message() {
    let strategy = mirrored(2);
    let variable = strategy.variable::<f32>(&VariableOptions { shape: Some(&[3]), ..Default::default() }).unwrap();
    let error = strategy
        .run(|replica| {
            if replica.local_index()? == 1 {
                let mut too_short = [0f32; 2];
                replica.read(&variable, &mut too_short)?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().starts_with("replica 1: "), "{error}");
    // The strategy runs again afterwards.
    strategy.run(|replica| replica.read(&variable, &mut [0f32; 3])).unwrap();
}

fn round_trip<T: Element + Default + PartialEq + std::fmt::Debug>(values: [T; 4], sum_of_two: [T; 4]) {
    let strategy = mirrored(2);
    let mut variable = strategy
        .variable::<T>(&VariableOptions {
            name: Some("v"),
            shape: Some(&[2, 2]),
            initial_value: Some(&values),
            aggregation: Some(Aggregation::Sum),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(variable.name().unwrap(), "v");
    assert_eq!(variable.dtype().unwrap(), T::DTYPE);
    assert_eq!(variable.shape().unwrap(), vec![2, 2]);
    assert_eq!(variable.len().unwrap(), 4);
    assert_eq!(variable.synchronization().unwrap(), Synchronization::OnWrite);
    assert_eq!(variable.aggregation().unwrap(), Aggregation::Sum);
    assert_eq!(variable.value().unwrap(), values);
    // Cross-replica assign reaches every copy.
    let zero = [T::default(); 4];
    variable.assign(&zero).unwrap();
    assert_eq!(variable.value().unwrap(), zero);
    variable.assign_add(&values).unwrap();
    assert_eq!(variable.num_copies().unwrap(), 2);
    for copy in 0..2 {
        let mut stored = [T::default(); 4];
        variable.read_copy(copy, &mut stored).unwrap();
        assert_eq!(stored, values);
    }
    // In replica context each replica assigns `values`; SUM aggregates both.
    strategy.run(|replica| replica.assign(&variable, &values)).unwrap();
    assert_eq!(variable.value().unwrap(), sum_of_two);
    strategy.run(|replica| replica.assign_sub(&variable, &values)).unwrap();
    assert_eq!(variable.value().unwrap(), zero);
    // A wrong length is the library's error.
    assert_eq!(variable.assign(&values[..3]).unwrap_err().status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn variable_round_trips_for_several_dtypes() {
    round_trip::<f32>([1.5, -2.0, 0.25, 8.0], [3.0, -4.0, 0.5, 16.0]);
    round_trip::<f64>([1e-300, -2.5, 3.0, 1e300], [2e-300, -5.0, 6.0, 2e300]);
    round_trip::<i32>([1, -2, i32::MAX / 2, 7], [2, -4, i32::MAX / 2 * 2, 14]);
    round_trip::<i64>([1 << 40, -3, 0, 9], [1 << 41, -6, 0, 18]);
}

#[test]
fn an_initial_value_of_the_wrong_length_is_refused() {
    let strategy = mirrored(2);
    let error = strategy
        .variable::<f32>(&VariableOptions { shape: Some(&[3]), initial_value: Some(&[1.0, 2.0]), ..Default::default() })
        .unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn merge_call_sees_every_replica_s_value_and_panics_propagate() {
    let strategy = mirrored(2);
    let merged = Mutex::new(Vec::new());
    strategy
        .run(|replica| {
            let value = 100 + replica.local_index()?;
            replica.merge_call(&value, |cross_replica, values| {
                assert_eq!(cross_replica.num_local_replicas()?, 2);
                merged.lock().unwrap().extend(values.iter().map(|v| **v));
                Ok(())
            })
        })
        .unwrap();
    assert_eq!(merged.into_inner().unwrap(), vec![100, 101]);

    let outcome = catch_unwind(AssertUnwindSafe(|| {
        strategy.run(|replica| replica.merge_call(&0u8, |_, _| -> distribute::Result<()> { panic!("merge gives up") }))
    }));
    assert_eq!(outcome.unwrap_err().downcast_ref::<&str>(), Some(&"merge gives up"));
}

#[test]
fn reduce_split_batch_and_batch_all_reduce() {
    let strategy = mirrored(2);
    let mut result = [0f32; 2];
    strategy.reduce(Op::Sum, &[&[1.0, 2.0], &[3.0, 4.0]], None, &mut result).unwrap();
    assert_eq!(result, [4.0, 6.0]);
    // axis 0: 3 rows + 1 row of 2 elements, MEAN over the 4 rows.
    strategy.reduce(Op::Mean, &[&[1.0, 1.0, 2.0, 2.0, 3.0, 3.0], &[6.0, 2.0]], Some(0), &mut result).unwrap();
    assert_eq!(result, [3.0, 2.0]);

    let batch: Vec<i32> = (0..10).collect(); // 5 rows of 2
    let parts = strategy.split_batch(&batch, 5).unwrap();
    assert_eq!(parts, vec![&batch[0..6], &batch[6..10]]);

    let (mut a0, mut a1, mut b0, mut b1) = (vec![1.0f64; 3], vec![2.0f64], vec![3.0f64; 3], vec![4.0f64]);
    strategy.batch_all_reduce(Op::Mean, &mut [&mut a0, &mut a1, &mut b0, &mut b1]).unwrap();
    assert_eq!((a0, a1, b0, b1), (vec![2.0; 3], vec![3.0], vec![2.0; 3], vec![3.0]));
    let error = strategy.batch_all_reduce(Op::Sum, &mut [&mut [1.0f32][..]]).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn apply_gradients_with_sgd_and_the_optimizer_s_errors() {
    let strategy = mirrored(2);
    let w = strategy.variable::<f64>(&VariableOptions { shape: Some(&[2]), initial_value: Some(&[1.0, 1.0]), ..Default::default() });
    let mut w = w.unwrap();
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, Some(0.5)).unwrap();
    let (mut g0, mut g1) = (vec![1.0, 2.0], vec![3.0, 6.0]);
    strategy.apply_gradients(&[&w], &mut [&mut g0, &mut g1], &mut sgd).unwrap();
    // mean gradient (2, 4), lr 0.5.
    assert_eq!(w.value().unwrap(), vec![0.0, -1.0]);
    assert_eq!(sgd.iterations().unwrap(), 1);
    let error = strategy.apply_gradients(&[&w], &mut [&mut g0], &mut sgd).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    let error = Optimizer::new(OptimizerKind::Sgd, Some(-1.0)).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(Optimizer::new(OptimizerKind::Momentum { momentum: Some(0.5), nesterov: true }, None).is_ok());
    assert!(Optimizer::new(OptimizerKind::Adam { beta_1: None, beta_2: Some(0.99), epsilon: Some(1e-8) }, None).is_ok());
    let error = Optimizer::new(OptimizerKind::Adam { beta_1: Some(1.0), beta_2: None, epsilon: None }, None).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn input_contexts() {
    let input = InputContext::new(3, 1, 6).unwrap();
    assert_eq!((input.num_input_pipelines().unwrap(), input.input_pipeline_id().unwrap()), (3, 1));
    assert_eq!(input.num_replicas_in_sync().unwrap(), 6);
    assert_eq!(input.per_replica_batch_size(60).unwrap(), 10);
    assert_eq!(input.per_replica_batch_size(61).unwrap_err().status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert_eq!(input.shard_files(8).unwrap(), vec![1, 4, 7]);
    assert_eq!(input.shard_files(2).unwrap_err().status(), sys::DIST_ERR_INVALID_ARGUMENT);
    // 10 over 3 pipelines: [0, 4), [4, 7), [7, 10).
    assert_eq!(input.shard_range(10).unwrap(), 4..7);
    assert!(InputContext::new(2, 2, 2).is_err());
    let strategy = mirrored(2);
    let own = strategy.input_context().unwrap();
    assert_eq!((own.num_input_pipelines().unwrap(), own.input_pipeline_id().unwrap()), (1, 0));
    assert_eq!(own.num_replicas_in_sync().unwrap(), 2);
}

#[test]
fn a_multi_worker_strategy_over_a_single_process_context() {
    let cluster = distribute::Cluster::from_json("{}").unwrap();
    let context = distribute::Context::join(&cluster).unwrap();
    let options = StrategyOptions { kind: Some(StrategyKind::MultiWorkerMirrored), ..Default::default() };
    let strategy = Strategy::new(Some(&context), &options).unwrap();
    assert_eq!(strategy.kind().unwrap(), StrategyKind::MultiWorkerMirrored);
    assert_eq!(strategy.worker_index().unwrap(), (0, 1));
    assert_eq!(strategy.cross_device_ops().unwrap(), CrossDeviceOps::ReductionToOneDevice);
    let options = StrategyOptions {
        kind: Some(StrategyKind::MultiWorkerMirrored),
        cross_device_ops: Some(CrossDeviceOps::ReductionToOneDevice),
        reduce_to_device: Some("CPU:0"),
        ..Default::default()
    };
    let other = Strategy::new(Some(&context), &options).unwrap();
    assert_eq!(other.cross_device_ops().unwrap(), CrossDeviceOps::ReductionToOneDevice);
    drop(other);
    let options = StrategyOptions {
        kind: Some(StrategyKind::MultiWorkerMirrored),
        cross_device_ops: Some(CrossDeviceOps::HierarchicalCopy),
        ..Default::default()
    };
    let error = Strategy::new(Some(&context), &options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("combines GPU replicas, and this strategy's replicas are CPU devices"), "{error}");
    let options = StrategyOptions { kind: Some(StrategyKind::MultiWorkerMirrored), num_packs: Some(2), ..Default::default() };
    let error = Strategy::new(Some(&context), &options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains(NUM_PACKS_REFUSED), "{error}");
    let copy = strategy.cluster().unwrap().expect("the context's cluster");
    assert_eq!(copy.to_json().unwrap(), cluster.to_json().unwrap());
    let mut v = strategy.variable::<u8>(&VariableOptions { initial_value: Some(&[7]), ..Default::default() }).unwrap();
    assert_eq!(v.value().unwrap(), vec![7]);
}
