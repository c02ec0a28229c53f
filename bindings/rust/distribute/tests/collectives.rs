mod common;
use distribute::{sys, AllreduceAlgorithm, Blocks, Collective, CommOptions, CommPath, CommStat, Op};

#[test]
fn each_collective_on_one_rank() {
    let (_cluster, context) = common::single();
    assert_eq!((context.rank().unwrap(), context.size().unwrap()), (0, 1));
    let world = context.world().unwrap();
    let data = [3.0f32, -1.0, 2.5];
    let mut out = [0f32; 3];
    world.all_reduce(&data, &mut out, Op::Mean).unwrap();
    assert_eq!(out, data);
    let mut out = [0f32; 3];
    world.reduce(&data, Some(&mut out), Op::Min, 0).unwrap();
    assert_eq!(out, data);
    let mut b = data;
    world.broadcast(&mut b, 0).unwrap();
    assert_eq!(b, data);
    let mut out = [0f32; 3];
    world.all_gather(&data, &mut out).unwrap();
    assert_eq!(out, data);
    let mut out = [0f32; 3];
    world.reduce_scatter(&data, &mut out, Op::Sum).unwrap();
    assert_eq!(out, data);
    let mut out = [0f32; 3];
    world.all_to_all(&data, &mut out).unwrap();
    assert_eq!(out, data);
    let mut inplace = data;
    world.reduce_scatter_in_place(&mut inplace, Op::Max).unwrap();
    world.all_gather_in_place(&mut inplace).unwrap();
    world.all_to_all_in_place(&mut inplace).unwrap();
    world.reduce_in_place(&mut inplace, Op::Sum, 0).unwrap();
    assert_eq!(inplace, data);
    world.barrier().unwrap();
}

#[test]
fn non_blocking_calls_return_their_buffers() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let first = world.all_reduce_start((0..10i64).collect(), Op::Sum).unwrap();
    let second = world.broadcast_start(vec![7u8; 3], 0).unwrap();
    assert_eq!(first.wait().unwrap(), (0..10).collect::<Vec<_>>());
    assert_eq!(second.wait().unwrap(), vec![7u8; 3]);
    for request in [world.reduce_start(vec![1u32], Op::Sum, 0).unwrap(), world.all_gather_start(vec![1u32]).unwrap(),
                    world.reduce_scatter_start(vec![1u32], Op::Sum).unwrap(), world.all_to_all_start(vec![1u32]).unwrap()] {
        assert_eq!(request.wait().unwrap(), vec![1u32]);
    }
    let mut barrier = world.barrier_start().unwrap();
    assert!(barrier.wait_timeout(std::time::Duration::from_secs(30)).unwrap());
    assert!(barrier.test().unwrap());
}

#[test]
fn wrong_arguments_are_named() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let error = world.all_reduce(&[0f32; 4], &mut [0f32; 5], Op::Sum).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("count"), "{error}");
    let error = world.broadcast(&mut [0i32; 2], 5).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn configure_then_reduce() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    world
        .configure(&CommOptions {
            timeout: Some(std::time::Duration::from_secs(5)),
            allreduce: Some(AllreduceAlgorithm::Ring),
            ..Default::default()
        })
        .unwrap();
    let mut data = vec![1f32; 64];
    world.all_reduce_in_place(&mut data, Op::Sum).unwrap();
    assert_eq!(data.iter().sum::<f32>(), 64.0);
}

#[test]
fn hosts_of_one_rank() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    assert_eq!((world.local_rank().unwrap(), world.local_size().unwrap(), world.num_hosts().unwrap()), (0, 1, 1));
    let host = world.split_host().unwrap();
    assert_eq!((host.rank().unwrap(), host.size().unwrap(), host.local_rank().unwrap(), host.num_hosts().unwrap()), (0, 1, 0, 1));
    assert_eq!(host.path().unwrap(), CommPath::SingleRank);
    let data = [4i32, -2, 9];
    let mut out = [0i32; 3];
    host.all_reduce(&data, &mut out, Op::Max).unwrap();
    assert_eq!(out, data);
    drop(host);
    let mut ones = [1f32; 2];
    world.all_reduce_in_place(&mut ones, Op::Sum).unwrap(); // the world outlives its host communicator
    assert_eq!(ones, [1.0; 2]);
}

#[test]
fn path_and_algorithm_of_one_rank() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    assert_eq!(world.path().unwrap(), CommPath::SingleRank);
    for collective in Collective::ALL {
        assert_eq!(world.algorithm(collective, 1 << 20).unwrap(), "self", "{collective:?}");
    }
    let error = world.algorithm_raw(8, 8).unwrap_err(); // one past DIST_COLLECTIVE_ALL_TO_ALL_V
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("collective 8 is not a DIST_COLLECTIVE_* value"), "{error}");
    assert_eq!(Collective::from_raw(sys::DIST_COLLECTIVE_ALL_TO_ALL_V), Some(Collective::AllToAllV));
    assert_eq!(Collective::from_raw(8), None);
    // One rank shares no segment: the shared-memory all-reduce is refused.
    let error = world.configure(&CommOptions { allreduce: Some(AllreduceAlgorithm::SharedMemory), ..Default::default() }).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_UNSUPPORTED);
    assert!(error.message().contains("DIST_ALLREDUCE_SHARED_MEMORY"), "{error}");
    // One rank spans no hosts: the hierarchical all-reduce is refused too.
    let error = world.configure(&CommOptions { allreduce: Some(AllreduceAlgorithm::Hierarchical), ..Default::default() }).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_UNSUPPORTED);
    assert!(error.message().contains("DIST_ALLREDUCE_HIERARCHICAL"), "{error}");
}

#[test]
fn device_path_before_any_call_on_cuda_memory() {
    assert_eq!((sys::DIST_COMM_PATH_NCCL, sys::DIST_COMM_PATH_STAGED), (4, 5));
    assert_eq!((CommPath::from_raw(4), CommPath::from_raw(5)), (Some(CommPath::Nccl), Some(CommPath::Staged)));
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    // Nothing is chosen until the first call on CUDA memory (never, without CUDA).
    let error = world.device_path().unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_UNAVAILABLE);
    assert!(error.message().contains("CUDA"), "{error}");
}

#[test]
fn stats_count_calls_bytes_and_time() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    world.reset_stats().unwrap();
    assert_eq!(world.stats().unwrap(), vec![]);
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    for _ in 0..3 {
        let mut out = [0f32; 6];
        world.all_reduce(&data, &mut out, Op::Sum).unwrap();
    }
    world.broadcast(&mut [0i64; 5], 0).unwrap();
    let mut received = [0i32; 4];
    world.all_to_all_v(&[1i32, 2, 3, 4], &Blocks::packed(&[4]), &mut received, &Blocks::packed(&[4])).unwrap();
    world.barrier().unwrap();
    let row = |collective, calls, bytes| CommStat {
        collective,
        path: CommPath::SingleRank,
        algorithm: "self",
        calls,
        failed: 0,
        bytes,
        timed_calls: 0, // timing is off by default
        time_ns: 0,
    };
    assert_eq!(
        world.stats().unwrap(),
        vec![
            row(Collective::AllReduce, 3, 3 * 6 * 4),
            row(Collective::Broadcast, 1, 5 * 8),
            row(Collective::AllToAllV, 1, 4 * 4),
            row(Collective::Barrier, 1, 0),
        ]
    );

    world.configure(&CommOptions { timing: Some(true), ..Default::default() }).unwrap();
    world.reset_stats().unwrap();
    assert_eq!(world.stats().unwrap(), vec![]);
    for _ in 0..4 {
        let mut out = [0f32; 6];
        world.all_gather(&data, &mut out).unwrap();
    }
    let stats = world.stats().unwrap();
    assert_eq!(stats.len(), 1, "{stats:?}");
    let timed = stats[0];
    assert_eq!((timed.collective, timed.path, timed.algorithm), (Collective::AllGather, CommPath::SingleRank, "self"));
    assert_eq!((timed.calls, timed.bytes, timed.failed), (4, 4 * 6 * 4, 0));
    assert_eq!(timed.timed_calls, timed.calls);
    assert!(timed.time_ns > 0 && timed.time() > std::time::Duration::ZERO, "{timed:?}");

    world.configure(&CommOptions { timing: Some(false), ..Default::default() }).unwrap();
    world.reset_stats().unwrap();
    world.all_reduce_in_place(&mut [1f64; 2], Op::Sum).unwrap();
    let stats = world.stats().unwrap();
    assert_eq!(stats, vec![row(Collective::AllReduce, 1, 2 * 8)]);
}

#[test]
fn stats_of_a_request_and_a_bad_timing() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let request = world.all_reduce_start(vec![1u8; 10], Op::Max).unwrap();
    assert_eq!(request.wait().unwrap(), vec![1u8; 10]);
    let stats = world.stats().unwrap();
    assert_eq!((stats.len(), stats[0].collective, stats[0].calls, stats[0].bytes), (1, Collective::AllReduce, 1, 10));
    // CommOptions.timing is a bool, so only the C struct can carry another value: the
    // library refuses it and changes nothing.
    let raw = sys::dist_comm_options_t { field_mask: sys::DIST_COMM_OPT_TIMING, timing: 2, ..Default::default() };
    // SAFETY: a live communicator and a valid options struct.
    let status = unsafe { sys::dist_comm_configure(world.as_raw(), &raw) };
    assert_eq!(status, sys::DIST_ERR_INVALID_ARGUMENT);
    // SAFETY: dist_last_error returns this thread's message, never NULL.
    let message = unsafe { std::ffi::CStr::from_ptr(sys::dist_last_error()) }.to_string_lossy().into_owned();
    assert!(message.contains("timing 2 must be 0 or 1"), "{message}");
}

#[test]
fn stall_warning_and_deterministic_options() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let options = CommOptions {
        stall_warning: Some(std::time::Duration::from_millis(5000)),
        deterministic: Some(true),
        ..Default::default()
    };
    world.configure(&options).unwrap();
    let data = [1.5f32, -2.0, 3.25, 0.5, 8.0];
    let mut out = [0f32; 5];
    world.all_reduce(&data, &mut out, Op::Sum).unwrap();
    // One rank: the sum is the rank's own values, bit for bit, in the fixed order too.
    assert_eq!(out.map(f32::to_bits), data.map(f32::to_bits));
    // Zero: no warning; and back to the fastest order.
    let options = CommOptions {
        stall_warning: Some(std::time::Duration::ZERO),
        deterministic: Some(false),
        ..Default::default()
    };
    world.configure(&options).unwrap();
    world.all_reduce(&data, &mut out, Op::Sum).unwrap();
    assert_eq!(out, data);
}

#[test]
fn a_bad_stall_warning_or_deterministic_is_refused() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    // A Duration is never negative and CommOptions.deterministic is a bool, so only
    // the C struct can carry these values: the library refuses them.
    let bad = [
        (
            sys::dist_comm_options_t { field_mask: sys::DIST_COMM_OPT_STALL_WARNING_MS, stall_warning_ms: -1, ..Default::default() },
            "stall_warning_ms -1 must be 0 (no warning) or positive",
        ),
        (
            sys::dist_comm_options_t { field_mask: sys::DIST_COMM_OPT_DETERMINISTIC, deterministic: 2, ..Default::default() },
            "deterministic 2 must be 0 or 1",
        ),
    ];
    for (raw, expected) in bad {
        // SAFETY: a live communicator and a valid options struct.
        let status = unsafe { sys::dist_comm_configure(world.as_raw(), &raw) };
        assert_eq!(status, sys::DIST_ERR_INVALID_ARGUMENT);
        // SAFETY: dist_last_error returns this thread's message, never NULL.
        let message = unsafe { std::ffi::CStr::from_ptr(sys::dist_last_error()) }.to_string_lossy().into_owned();
        assert!(message.contains(expected), "{message}");
    }
}
