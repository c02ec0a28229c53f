//! Parameter servers and checkpoints: an in-process server's lifecycle, bad options
//! as Error with the C status, and a save/restore round trip against the server.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use distribute::{checkpoint_restore, checkpoint_save, sys, CheckpointOptions, Cluster, Server, ServerOptions};

const TOKEN: &str = "rust-binding-test-token";

fn start() -> Server {
    Server::start(None, ServerOptions { address: Some("127.0.0.1:0"), token: Some(TOKEN), ..Default::default() })
        .expect("server starts")
}

#[test]
fn lifecycle() {
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&lines);
    let server = Server::start(
        None,
        ServerOptions {
            address: Some("127.0.0.1:0"),
            token: Some(TOKEN),
            log: Some(Box::new(move |line: &str| sink.lock().unwrap().push(line.to_owned()))),
            ..Default::default()
        },
    )
    .expect("server starts");
    let address = server.address().unwrap();
    let (host, port) = address.rsplit_once(':').unwrap();
    assert_eq!(host, "127.0.0.1");
    assert!(port.parse::<u16>().unwrap() > 0);
    let described = server.describe().unwrap();
    assert!(described.starts_with('{') && described.ends_with('}'), "{described}");
    assert!(described.contains(&format!("\"address\":\"{address}\"")), "{described}");
    assert!(described.contains("\"variables\":[]"), "{described}");
    assert!(lines.lock().unwrap().iter().any(|l| l.contains("serving at")));
    let timed_out = server.join(Some(Duration::from_millis(30))).unwrap_err();
    assert_eq!(timed_out.status(), sys::DIST_ERR_TIMEOUT);
    // stop from another thread (Server is Sync), join here.
    std::thread::scope(|s| {
        s.spawn(|| server.stop().unwrap());
    });
    server.join(Some(Duration::from_secs(5))).unwrap();
    server.join(None).unwrap();
    drop(server); // destroy after stop
}

#[test]
fn bad_options() {
    let no_port = Server::start(None, ServerOptions { address: Some("127.0.0.1"), token: Some(TOKEN), ..Default::default() })
        .unwrap_err();
    assert_eq!(no_port.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(no_port.message().contains("127.0.0.1"), "{no_port}");
    let no_address = Server::start(None, ServerOptions { token: Some(TOKEN), ..Default::default() }).unwrap_err();
    assert!(no_address.message().contains("no address"), "{no_address}");
    let nul = Server::start(None, ServerOptions { address: Some("127.0.0.1:0\0"), ..Default::default() }).unwrap_err();
    assert_eq!(nul.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    let zero = Server::start(
        None,
        ServerOptions { address: Some("127.0.0.1:0"), token: Some(TOKEN), io_timeout: Some(Duration::ZERO), ..Default::default() },
    )
    .unwrap_err();
    assert!(zero.message().contains("io_timeout_ms 0"), "{zero}");
    // Without a token in the options the environment's is used; the test cannot
    // unset it safely while other test threads run, so it checks only when unset.
    if std::env::var_os("DIST_CLUSTER_TOKEN").is_none() && std::env::var_os("DIST_CLUSTER_TOKEN_FILE").is_none() {
        let no_token = Server::start(None, ServerOptions { address: Some("127.0.0.1:0"), ..Default::default() }).unwrap_err();
        assert_eq!(no_token.status(), sys::DIST_ERR_INVALID_ARGUMENT);
        assert!(no_token.message().contains("needs the cluster token"), "{no_token}");
    }
    let server = start();
    let address = server.address().unwrap();
    let taken = Server::start(None, ServerOptions { address: Some(&address), token: Some(TOKEN), ..Default::default() })
        .unwrap_err();
    assert_eq!(taken.status(), sys::DIST_ERR_UNAVAILABLE);
    assert!(taken.message().contains(&address), "{taken}");
}

#[test]
fn log_sink_that_panics_is_dropped() {
    let server = Server::start(
        None,
        ServerOptions {
            address: Some("127.0.0.1:0"),
            token: Some(TOKEN),
            log: Some(Box::new(|_: &str| panic!("sink"))),
            ..Default::default()
        },
    )
    .expect("server starts");
    server.stop().unwrap();
    server.join(None).unwrap();
}

#[test]
fn server_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Server>();
}

#[test]
fn checkpoint_round_trip() {
    let server = start();
    let json = format!(
        r#"{{"cluster":{{"ps":["{}"],"worker":["127.0.0.1:1"]}},"task":{{"type":"worker","index":0}}}}"#,
        server.address().unwrap()
    );
    let cluster = Cluster::from_json(&json).unwrap();
    let root = std::env::temp_dir().join(format!("dist-rust-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let options = CheckpointOptions { token: Some(TOKEN), timeout: Some(Duration::from_secs(20)), ..Default::default() };
    let path = checkpoint_save(&cluster, &root, 5, &options).unwrap();
    assert_eq!(path, root.join("ckpt-5"));
    assert!(path.join("shard-00000-of-00001.ckpt").is_file());
    assert!(path.join("manifest.json").is_file());
    assert!(root.join("LATEST").is_file());
    assert_eq!(checkpoint_restore(&cluster, &root, &options).unwrap(), path);
    let wrong = CheckpointOptions { token: Some("wrong-token"), ..options };
    let refused = checkpoint_save(&cluster, &root, 6, &wrong).unwrap_err();
    assert_eq!(refused.status(), sys::DIST_ERR_AUTH);
    assert!(refused.message().contains("ps:0"), "{refused}");

    // A corrupt shard file is refused, naming it, by a restore and by a server told
    // to restore from it.
    let shard = path.join("shard-00000-of-00001.ckpt");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes[3] ^= 0xff;
    std::fs::write(&shard, bytes).unwrap();
    let corrupt = checkpoint_restore(&cluster, &root, &options).unwrap_err();
    assert_eq!(corrupt.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(corrupt.message().contains("is corrupt") && corrupt.message().contains("shard-00000-of-00001.ckpt"), "{corrupt}");
    let refusing = Server::start(
        None,
        ServerOptions { address: Some("127.0.0.1:0"), token: Some(TOKEN), checkpoint_dir: Some(&root), ..Default::default() },
    )
    .unwrap_err();
    assert!(refusing.message().contains("is corrupt"), "{refusing}");
    std::fs::remove_dir_all(&root).unwrap();
}
