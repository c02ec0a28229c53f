//! The context's timeline option (dist_context_options_t.timeline) on a one-rank context.
use std::fs;
use std::path::PathBuf;

use distribute::{sys, Cluster, Context, ContextOptions, Op};

mod json;
use json::{Json, Parser};

#[test]
fn the_parser_reads_json() {
    let parsed = Parser::parse(r#" [{"a": [1, -2.5e1, true, null], "b\"\u0041": "x\ny"}, {}] "#).unwrap();
    let expected = Json::Array(vec![
        Json::Object(vec![
            ("a".into(), Json::Array(vec![Json::Number(1.0), Json::Number(-25.0), Json::Bool(true), Json::Null])),
            ("b\"A".into(), Json::Str("x\ny".into())),
        ]),
        Json::Object(vec![]),
    ]);
    assert_eq!(parsed, expected);
    assert!(Parser::parse("[1,").is_err());
    assert!(Parser::parse("[1] x").is_err());
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dist-rust-timeline-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn with_timeline(timeline: PathBuf) -> distribute::Result<(Cluster, Context)> {
    let cluster = Cluster::from_json("{}").expect("empty cluster");
    let options = ContextOptions { timeline: Some(timeline), ..ContextOptions::default() };
    let context = Context::new(&cluster, &options)?;
    Ok((cluster, context))
}

#[test]
fn a_timeline_records_the_collectives() {
    let dir = scratch("records");
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    {
        let (_cluster, context) = with_timeline(dir.join("run")).unwrap();
        let world = context.world().unwrap();
        let mut out = [0f32; 5];
        world.all_reduce(&data, &mut out, Op::Sum).unwrap();
        assert_eq!(out, data);
        world.barrier().unwrap();
    } // the world, then the context: the file's array is closed
    let text = fs::read_to_string(dir.join("run.0.json")).unwrap();
    let Json::Array(events) = Parser::parse(&text).unwrap_or_else(|e| panic!("{e}:\n{text}")) else {
        panic!("not an array:\n{text}")
    };
    let metadata: Vec<_> = events.iter().filter(|e| e.str("name") == Some("libdistribute")).collect();
    assert_eq!(metadata.len(), 1, "{text}");
    assert_eq!(metadata[0].str("ph"), Some("M"));
    assert_eq!(metadata[0].get("args").and_then(|a| a.get("rank")), Some(&Json::Number(0.0)));
    let calls: Vec<_> = events.iter().filter(|e| e.str("name") == Some("all_reduce")).collect();
    assert_eq!(calls.len(), 1, "{text}");
    let (call, args) = (calls[0], calls[0].get("args").unwrap());
    assert_eq!((call.str("cat"), call.str("ph")), (Some("collective"), Some("X")));
    assert_eq!(args.get("bytes"), Some(&Json::Number((data.len() * 4) as f64)));
    assert_eq!((args.str("path"), args.str("dtype")), (Some("self"), Some("f32")));
    assert!(events.iter().any(|e| e.str("name") == Some("barrier") && e.str("cat") == Some("collective")));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_empty_timeline_is_refused() {
    let error = with_timeline(PathBuf::new()).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains("timeline is empty"), "{error}");
}

#[test]
fn a_timeline_in_a_missing_directory_names_the_file() {
    let prefix = std::env::temp_dir().join(format!("dist-rust-timeline-missing-{}", std::process::id())).join("run");
    let error = with_timeline(prefix.clone()).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains(&format!("cannot create '{}.0.json'", prefix.display())), "{error}");
}
