//! The flight recorder (dist_context_dump) on a one-rank context.
use distribute::{sys, CommOptions, Op};

mod common;
mod json;
use json::{Json, Parser};

#[test]
fn a_dump_after_two_all_reduces_and_a_barrier() {
    let (_cluster, context) = common::single();
    let world = context.world().unwrap();
    // A deterministic float sum runs as an all_to_all and an all_gather, which the
    // recorder lists instead: pin the default order whatever DIST_DETERMINISTIC says.
    world.configure(&CommOptions { deterministic: Some(false), ..Default::default() }).unwrap();
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let mut out = [0f32; 5];
    world.all_reduce(&data, &mut out, Op::Sum).unwrap();
    world.all_reduce(&data, &mut out, Op::Max).unwrap();
    world.barrier().unwrap();

    let text = context.dump().unwrap();
    let dump = Parser::parse(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    assert_eq!((dump.num("rank"), dump.num("size")), (Some(0.0), Some(1.0)), "{text}");
    assert_eq!(dump.get("lost_peers"), Some(&Json::Array(vec![])));
    let Some(Json::Array(comms)) = dump.get("communicators") else { panic!("no communicators:\n{text}") };
    assert_eq!(comms.len(), 1, "{text}");
    let comm = &comms[0];
    assert_eq!((comm.num("id"), comm.str("path")), (Some(0.0), Some("self")));
    assert_eq!((comm.num("calls_started"), comm.num("calls_finished")), (Some(3.0), Some(3.0)), "{text}");
    let Some(Json::Array(calls)) = comm.get("calls") else { panic!("no calls:\n{text}") };
    assert_eq!(calls.len(), 3, "{text}");
    let (first, last) = (&calls[0], &calls[2]);
    assert_eq!((first.str("kind"), first.num("count"), first.str("dtype")), (Some("all_reduce"), Some(5.0), Some("f32")));
    assert_eq!((first.str("op"), first.str("state"), first.str("status")), (Some("sum"), Some("done"), Some("DIST_OK")));
    assert_eq!((last.str("kind"), last.str("state")), (Some("barrier"), Some("done")));
}

#[test]
fn a_dump_from_another_thread() {
    // Context is Sync: the recorder may be read from any thread.
    let (_cluster, context) = common::single();
    let text = std::thread::scope(|s| s.spawn(|| context.dump().unwrap()).join().unwrap());
    let dump = Parser::parse(&text).unwrap();
    assert_eq!(dump.get("communicators").map(|c| matches!(c, Json::Array(_))), Some(true), "{text}");
    // A NULL output is refused by the library (the safe API never passes one).
    // SAFETY: a live context; the library checks json before writing it.
    let status = unsafe { sys::dist_context_dump(context.as_raw(), std::ptr::null_mut()) };
    assert_eq!(status, sys::DIST_ERR_INVALID_ARGUMENT);
}
