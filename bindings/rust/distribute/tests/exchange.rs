//! Contexts built through an exchange written in Rust (`Context::from_exchange`):
//! two contexts in this process, ranks 0 and 1 on two threads, whose all-gather is
//! a barrier and shared slots, then a real all-reduce between them; exchanges that
//! fail, panic, answer wrongly or never answer; bad arguments.
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use distribute::{sys, Context, ContextOptions, Error, Op};

mod common;
use common::{on_threads, SharedSlots};

fn options(connect_timeout: Duration) -> ContextOptions {
    ContextOptions {
        token: Some("rust-exchange-test-token".into()),
        connect_timeout: Some(connect_timeout),
        ..ContextOptions::default()
    }
}

#[test]
fn two_ranks_join_through_a_rust_all_gather_and_all_reduce() {
    let exchange = SharedSlots::new(2);
    let input = |rank: usize| -> Vec<f64> { (0..4099).map(|i| i as f64 * (rank + 1) as f64 - 7.0 * rank as f64).collect() };
    let reference: Vec<f64> = input(0).iter().zip(input(1)).map(|(a, b)| a + b).collect();
    let shared = Arc::clone(&exchange);
    let results = on_threads(2, move |rank| -> Result<(Vec<f64>, i32), Error> {
        let context = Context::from_exchange(rank as i32, 2, shared.for_rank(rank), &options(Duration::from_secs(60)))?;
        assert_eq!((context.rank()?, context.size()?), (rank as i32, 2));
        let world = context.world()?;
        let mut data = input(rank);
        world.all_reduce_in_place(&mut data, Op::Sum)?;
        let mut count = [rank as i32 + 1];
        world.all_reduce_in_place(&mut count, Op::Max)?;
        Ok((data, count[0]))
    });
    for result in results {
        let (data, count) = result.expect("rank failed");
        assert_eq!(data, reference);
        assert_eq!(count, 2);
    }
    let calls = exchange.calls.lock().unwrap().clone();
    assert!(calls[0] == calls[1] && calls[0] >= 1, "calls {calls:?}");
}

#[test]
fn one_rank_joins_alone() {
    let context = Context::from_exchange(0, 1, |data: &[u8]| Ok::<_, String>(vec![data.to_vec()]), &options(Duration::from_secs(30)))
        .expect("a context of one");
    assert_eq!((context.rank().unwrap(), context.size().unwrap()), (0, 1));
    let mut data = [1.5f32, -2.0];
    context.world().unwrap().all_reduce_in_place(&mut data, Op::Sum).unwrap();
    assert_eq!(data, [1.5, -2.0]);
}

#[test]
fn an_exchange_that_fails_fails_the_join_with_its_error_as_the_source() {
    let start = Instant::now();
    let results = on_threads(2, |rank| {
        let all_gather = move |_: &[u8]| -> Result<Vec<Vec<u8>>, io::Error> {
            Err(io::Error::new(io::ErrorKind::ConnectionRefused, format!("store unreachable from rank {rank}")))
        };
        Context::from_exchange(rank as i32, 2, all_gather, &options(Duration::from_secs(60))).map(|_| ())
    });
    assert!(start.elapsed() < Duration::from_secs(30), "a failed exchange must not wait for the connect deadline");
    for (rank, result) in results.into_iter().enumerate() {
        let error = result.expect_err("the join must fail");
        assert!(error.status() < 0);
        assert!(error.message().to_lowercase().contains("exchange"), "{error}");
        assert!(error.message().contains(&format!("store unreachable from rank {rank}")), "{error}");
        let source = std::error::Error::source(&error).expect("the exchange's error as the source");
        let io_error = source.downcast_ref::<io::Error>().expect("the io::Error itself");
        assert_eq!(io_error.kind(), io::ErrorKind::ConnectionRefused);
    }
}

#[test]
fn an_answer_of_the_wrong_shape_fails_the_join() {
    type Answer = fn(&[u8]) -> Vec<Vec<u8>>;
    let cases: [(Answer, &str); 3] = [
        (|data| vec![data.to_vec()], "1 items for 2 ranks"),
        (|data| vec![data.to_vec(), [data, b"!"].concat()], "expected"),
        (|data| vec![vec![0; data.len()], data.to_vec()], "other bytes than this rank sent"),
    ];
    for (answer, expected) in cases {
        let error = Context::from_exchange(0, 2, move |data: &[u8]| Ok::<_, String>(answer(data)), &options(Duration::from_secs(30)))
            .expect_err("a wrong answer must fail the join");
        assert!(error.message().contains(expected), "{error}");
        assert!(std::error::Error::source(&error).is_some());
    }
}

#[test]
fn a_panic_in_the_exchange_is_resumed_after_the_call() {
    let all_gather = |_: &[u8]| -> Result<Vec<Vec<u8>>, String> { panic!("the store went away") };
    let outcome = catch_unwind(AssertUnwindSafe(|| Context::from_exchange(0, 2, all_gather, &options(Duration::from_secs(30)))));
    let payload = outcome.expect_err("the panic must reach the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the store went away"));
}

#[test]
fn an_exchange_that_never_answers_ends_at_the_connect_deadline() {
    let release = Arc::new((Mutex::new(false), Condvar::new()));
    let held = Arc::clone(&release);
    let all_gather = move |data: &[u8]| -> Result<Vec<Vec<u8>>, String> {
        let (lock, released) = &*held;
        drop(released.wait_timeout_while(lock.lock().unwrap(), Duration::from_secs(60), |r| !*r).unwrap());
        Ok(vec![data.to_vec(); 2]) // too late: dropped
    };
    let start = Instant::now();
    let error = Context::from_exchange(0, 2, all_gather, &options(Duration::from_secs(1))).expect_err("the deadline must end it");
    let elapsed = start.elapsed();
    *release.0.lock().unwrap() = true;
    release.1.notify_all();
    assert_eq!(error.status(), sys::DIST_ERR_TIMEOUT, "{error}");
    assert!(elapsed < Duration::from_secs(1 + 10), "took {elapsed:?}");
}

#[test]
fn ranks_out_of_range_are_refused() {
    for (rank, size, field) in [(2, 2, "rank"), (-1, 2, "rank"), (0, 0, "size")] {
        let all_gather = |data: &[u8]| Ok::<_, String>(vec![data.to_vec()]);
        let error = Context::from_exchange(rank, size, all_gather, &options(Duration::from_secs(30))).expect_err("bad input");
        assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
        assert!(error.message().contains(field), "{error}");
    }
}
