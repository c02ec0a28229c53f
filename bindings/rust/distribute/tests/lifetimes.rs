mod common;
use distribute::{sys, Cluster, Comm, Context, Op, Request};

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>() {}

#[test]
fn thread_rules_are_the_header_s() {
    assert_send_sync::<Cluster>();
    assert_send_sync::<Context>();
    assert_send::<Comm<'static>>(); // Send, and (by a PhantomData<Cell>) not Sync
    let _ = std::mem::size_of::<Request<'static, f32>>();
}

#[test]
fn the_world_is_handed_out_once_at_a_time() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let error = context.world().unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    drop(world);
    let again = context.world().unwrap();
    assert_eq!(again.size().unwrap(), 1);
}

#[test]
fn many_handles_are_dropped_in_order() {
    for _ in 0..100 {
        let (cluster, context) = common::single();
        let world = context.world().unwrap();
        let child = world.split(0, 0).unwrap().unwrap();
        assert!(world.split(-1, 0).unwrap().is_none());
        assert_eq!(child.rank().unwrap(), 0);
        drop(world); // the world before its split child: fine, they are independent
        drop(child);
        drop(context);
        drop(cluster);
    }
}

#[test]
fn a_dropped_request_waits_and_frees_once() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    let request = world.all_reduce_start(vec![1.5f64; 100], Op::Max).unwrap();
    drop(request);
    let mut request = world.all_reduce_start(vec![2i32; 10], Op::Sum).unwrap();
    assert!(request.wait_timeout(std::time::Duration::from_secs(30)).unwrap());
    assert_eq!(request.wait().unwrap(), vec![2i32; 10]);
}

#[test]
fn abort_fails_later_calls() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    context.abort(Some("test says stop")).unwrap();
    let error = world.barrier().unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_ABORTED);
    assert!(error.is_peer_failure());
}
