//! Completion callbacks (Request::on_complete) on receives, sends and collectives
//! between two ranks on two threads: each runs exactly once and its box is freed
//! exactly once, also when the request was dropped before the call completed; a
//! failed call reaches it as the library's error; a second callback is refused.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use distribute::{sys, Blocks, Error, Op};

mod common;
use common::two_ranks;

const PATIENCE: Duration = Duration::from_secs(60);

/// Counts calls of the callback and drops of what it captured.
#[derive(Default)]
struct Tally {
    calls: AtomicUsize,
    drops: AtomicUsize,
}

struct DropCounter(Arc<Tally>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl Tally {
    /// Waits for what the callback captured to be dropped: after the callback
    /// returns, on the library's thread. Fails the test after PATIENCE.
    fn await_drop(&self) {
        let start = std::time::Instant::now();
        while self.drops.load(Ordering::SeqCst) == 0 {
            assert!(start.elapsed() < PATIENCE, "the callback's captures were never dropped");
            thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A callback that counts itself, reports its result and thread, and counts its drop.
fn reporting(tally: &Arc<Tally>, report: mpsc::Sender<(Result<(), Error>, thread::ThreadId)>) -> impl FnOnce(Result<(), Error>) + Send + 'static {
    let guard = DropCounter(Arc::clone(tally));
    move |result| {
        guard.0.calls.fetch_add(1, Ordering::SeqCst);
        let _ = report.send((result, thread::current().id()));
    }
}

#[test]
fn a_callback_runs_once_after_its_request_was_dropped() {
    // Rank 1's (calls, drops, the callback's result, whether it ran on rank 1's thread).
    type Seen = Option<(usize, usize, Result<(), Error>, bool)>;
    let results = two_ranks(|rank, world, steps| -> Result<Seen, Error> {
        if rank == 0 {
            steps.wait(); // rank 1 has registered and dropped its receive
            world.send(&[4.25f64; 300], 1, 3)?;
            return Ok(None);
        }
        let tally = Arc::new(Tally::default());
        let (report, reports) = mpsc::channel();
        let mut request = world.recv_start(vec![0.0f64; 300], 0, 3)?;
        request.on_complete(reporting(&tally, report))?;
        drop(request); // before the peer sent: the buffer waits for the callback
        steps.wait();
        let (result, thread) = reports.recv_timeout(PATIENCE).expect("the callback ran");
        tally.await_drop(); // its box is freed after it returns
        let on_this_thread = thread == thread::current().id();
        assert!(reports.recv_timeout(Duration::from_millis(200)).is_err(), "a second call");
        Ok(Some((tally.calls.load(Ordering::SeqCst), tally.drops.load(Ordering::SeqCst), result, on_this_thread)))
    });
    results[0].clone().expect("rank 0");
    let (calls, drops, result, on_this_thread) = results[1].clone().expect("rank 1").expect("rank 1's view");
    assert_eq!((calls, drops), (1, 1));
    assert_eq!(result, Ok(()));
    assert!(!on_this_thread, "a pending receive completes on a library thread");
}

#[test]
fn a_callback_on_a_kept_request_sees_success_then_the_data_is_there() {
    // (the data, the callback's result, the source of a receive).
    type Seen = (Vec<i32>, Result<(), Error>, i32);
    let results = two_ranks(|rank, world, _| -> Result<Seen, Error> {
        let tally = Arc::new(Tally::default());
        let (report, reports) = mpsc::channel();
        let mut request = if rank == 0 {
            world.send_start((0..1000).collect::<Vec<i32>>(), 1, 0)?
        } else {
            world.recv_start(vec![0i32; 1000], 0, 0)?
        };
        request.on_complete(reporting(&tally, report))?;
        let (result, _) = reports.recv_timeout(PATIENCE).expect("the callback ran");
        assert!(request.test()?, "complete once its callback ran");
        let (data, source) = if rank == 1 { request.wait_with_source()? } else { (request.wait()?, -1) };
        assert_eq!(tally.calls.load(Ordering::SeqCst), 1);
        Ok((data, result, source))
    });
    let expected: Vec<i32> = (0..1000).collect();
    for (rank, result) in results.into_iter().enumerate() {
        let (data, callback_result, source) = result.unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert_eq!(data, expected, "rank {rank}");
        assert_eq!(callback_result, Ok(()), "rank {rank}");
        assert_eq!(source, if rank == 1 { 0 } else { -1 });
    }
}

#[test]
fn a_failed_receive_reaches_the_callback_as_the_library_s_error() {
    let results = two_ranks(|rank, world, _| -> Result<Option<Error>, Error> {
        if rank == 0 {
            world.send(&[1u8; 3], 1, 1)?;
            return Ok(None);
        }
        let tally = Arc::new(Tally::default());
        let (report, reports) = mpsc::channel();
        let mut request = world.recv_start(vec![0u8; 4], 0, 1)?;
        request.on_complete(reporting(&tally, report))?;
        let (result, _) = reports.recv_timeout(PATIENCE).expect("the callback ran");
        let waited = request.wait().expect_err("the receive failed");
        let error = result.expect_err("the callback saw the failure");
        // The same failure; the wait's message also names dist_request_wait.
        assert_eq!(error.status(), waited.status());
        assert!(waited.message().ends_with(error.message()), "{waited} / {error}");
        Ok(Some(error))
    });
    results[0].clone().expect("rank 0");
    let error = results[1].clone().expect("rank 1").expect("an error");
    assert_eq!(error.status(), sys::DIST_ERR_MISMATCH, "{error}");
    assert!(!error.message().is_empty());
}

#[test]
fn a_dropped_uneven_all_to_all_keeps_both_buffers_until_its_callback_ran() {
    let results = two_ranks(|rank, world, _| -> Result<Result<(), Error>, Error> {
        // Rank r sends r + 1 elements to each rank and receives j + 1 from rank j.
        let me = rank as usize;
        let send = vec![rank as f32; 2 * (me + 1)];
        let (report, reports) = mpsc::channel();
        let tally = Arc::new(Tally::default());
        let mut request = world.all_to_all_v_start(send, Blocks::packed(&[me + 1, me + 1]), vec![0.0f32; 3], Blocks::packed(&[1, 2]))?;
        request.on_complete(reporting(&tally, report))?;
        drop(request); // both Vecs and the block tables are parked with the callback
        let (result, _) = reports.recv_timeout(PATIENCE).expect("the callback ran");
        Ok(result)
    });
    for (rank, result) in results.into_iter().enumerate() {
        assert_eq!(result.unwrap_or_else(|e| panic!("rank {rank}: {e}")), Ok(()), "rank {rank}");
    }
}

#[test]
fn a_pending_callback_gets_the_library_s_error_when_its_context_goes() {
    let tally = Arc::new(Tally::default());
    let for_ranks = Arc::clone(&tally);
    let reports = two_ranks(move |rank, world, _| {
        if rank == 0 {
            return None; // never sends
        }
        let (report, reports) = mpsc::channel();
        let mut request = world.recv_start(vec![0u8; 4], 0, 77).expect("posted");
        request.on_complete(reporting(&for_ranks, report)).expect("registered");
        drop(request);
        Some(reports) // the context closes after this
    });
    let (result, _) = reports[1].as_ref().expect("rank 1's reports").recv_timeout(PATIENCE).expect("the callback ran");
    let error = result.expect_err("a receive its context outlived");
    assert_eq!(error.status(), sys::DIST_ERR_ABORTED, "{error}");
    assert!(error.message().contains("destroyed"), "{error}");
    tally.await_drop();
    assert_eq!(tally.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_callback_on_a_finished_request_runs_at_once_on_this_thread() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let mut request = world.all_reduce_start(vec![2.5f32; 16], Op::Sum).unwrap();
    assert!(request.wait_timeout(PATIENCE).unwrap());
    let tally = Arc::new(Tally::default());
    let (report, reports) = mpsc::channel();
    request.on_complete(reporting(&tally, report)).unwrap();
    let (result, thread) = reports.try_recv().expect("ran during on_complete");
    assert_eq!(result, Ok(()));
    assert_eq!(thread, thread::current().id());
    assert_eq!((tally.calls.load(Ordering::SeqCst), tally.drops.load(Ordering::SeqCst)), (1, 1));
    assert_eq!(request.wait().unwrap(), vec![2.5f32; 16]);
}

#[test]
fn a_second_callback_is_refused_and_dropped_unrun() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let mut request = world.barrier_start().unwrap();
    let first = Arc::new(Tally::default());
    let second = Arc::new(Tally::default());
    let (report, reports) = mpsc::channel();
    request.on_complete(reporting(&first, report.clone())).unwrap();
    let error = request.on_complete(reporting(&second, report)).expect_err("one callback per request");
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT, "{error}");
    assert!(!error.message().is_empty());
    assert_eq!((second.calls.load(Ordering::SeqCst), second.drops.load(Ordering::SeqCst)), (0, 1));
    request.wait().unwrap();
    reports.recv_timeout(PATIENCE).expect("the first callback ran").0.unwrap();
    first.await_drop();
    assert_eq!(first.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panicking_callback_does_not_reach_the_library() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let mut request = world.all_reduce_start(vec![1i64; 4], Op::Max).unwrap();
    request.on_complete(|_| panic!("the callback fails")).unwrap();
    assert_eq!(request.wait().unwrap(), vec![1i64; 4]);
    let mut data = [3i64];
    world.all_reduce_in_place(&mut data, Op::Sum).unwrap();
    assert_eq!(data, [3]);
}
