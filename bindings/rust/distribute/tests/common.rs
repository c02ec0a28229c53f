#![allow(dead_code)]
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use distribute::{Cluster, Comm, Context, ContextOptions};

/// A single-process context: a cluster with no tasks is rank 0 of 1.
pub fn single() -> (Cluster, Context) {
    let cluster = Cluster::from_json("{}").expect("empty cluster");
    let context = Context::join(&cluster).expect("single-process context");
    (cluster, context)
}

/// An all-gather between threads: each rank puts its bytes in its slot and waits at
/// the barrier; then every slot is read, and a second barrier keeps a fast rank's
/// next gather from overwriting a slot before the others read it.
pub struct SharedSlots {
    pub slots: Mutex<Vec<Vec<u8>>>,
    pub calls: Mutex<Vec<usize>>,
    pub barrier: Barrier,
}

impl SharedSlots {
    pub fn new(size: usize) -> Arc<SharedSlots> {
        Arc::new(SharedSlots { slots: Mutex::new(vec![Vec::new(); size]), calls: Mutex::new(vec![0; size]), barrier: Barrier::new(size) })
    }

    pub fn for_rank(self: &Arc<Self>, rank: usize) -> impl Fn(&[u8]) -> Result<Vec<Vec<u8>>, String> + Send + Sync + 'static {
        let shared = Arc::clone(self);
        move |data| {
            shared.calls.lock().unwrap()[rank] += 1;
            shared.slots.lock().unwrap()[rank] = data.to_vec();
            shared.barrier.wait();
            let everyone = shared.slots.lock().unwrap().clone();
            shared.barrier.wait();
            Ok(everyone)
        }
    }
}

/// `body(rank)` on one thread per rank, its results by rank.
pub fn on_threads<T: Send + 'static>(size: usize, body: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let body = Arc::new(body);
    let threads: Vec<_> = (0..size)
        .map(|rank| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(rank))
        })
        .collect();
    threads.into_iter().map(|t| t.join().expect("a rank panicked")).collect()
}

/// `body(rank, world, barrier)` for ranks 0 and 1 of two contexts joined in this
/// process through [`SharedSlots`], each on its own thread; the barrier lets the
/// ranks order steps between them. Results by rank.
pub fn two_ranks<T: Send + 'static>(body: impl Fn(i32, &Comm, &Barrier) -> T + Send + Sync + 'static) -> Vec<T> {
    let exchange = SharedSlots::new(2);
    let steps = Arc::new(Barrier::new(2));
    on_threads(2, move |rank| {
        let options = ContextOptions {
            token: Some("rust-two-ranks-test-token".into()),
            connect_timeout: Some(Duration::from_secs(60)),
            // Bounds a test that goes wrong: every call fails by then.
            timeout: Some(Duration::from_secs(30)),
            ..ContextOptions::default()
        };
        let context = Context::from_exchange(rank as i32, 2, exchange.for_rank(rank), &options).expect("join");
        let world = context.world().expect("world");
        body(rank as i32, &world, &steps)
    })
}
