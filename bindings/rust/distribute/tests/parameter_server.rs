//! The PARAMETER_SERVER strategy against two parameter servers started in this
//! process: placement and sharding, dense and sparse updates against references
//! computed here, the servers' Adam, replica-context updates, checkpoints of real
//! values, and errors with the C message.
use std::time::Duration;

use distribute::{
    checkpoint_restore, checkpoint_save, sys, CheckpointOptions, Cluster, OptimizerKind, Placement, Server,
    ServerOptions, Shard, Strategy, StrategyKind, StrategyOptions, VariableOptions,
};

const TOKEN: &str = "rust-ps-strategy-token";

struct Fixture {
    servers: Vec<Server>,
    cluster: Cluster,
}

fn fixture() -> Fixture {
    let servers: Vec<Server> = (0..2)
        .map(|_| {
            Server::start(None, ServerOptions { address: Some("127.0.0.1:0"), token: Some(TOKEN), ..Default::default() })
                .expect("server starts")
        })
        .collect();
    let json = format!(
        r#"{{"cluster":{{"ps":["{}","{}"],"worker":["127.0.0.1:1"]}},"task":{{"type":"worker","index":0}}}}"#,
        servers[0].address().unwrap(),
        servers[1].address().unwrap()
    );
    Fixture { servers, cluster: Cluster::from_json(&json).unwrap() }
}

fn strategy(f: &Fixture) -> Strategy<'_> {
    let options = StrategyOptions {
        kind: Some(StrategyKind::ParameterServer),
        cluster: Some(&f.cluster),
        token: Some(TOKEN),
        ..Default::default()
    };
    Strategy::new(None, &options).expect("parameter-server strategy")
}

#[test]
fn dense_updates_and_placement() {
    let f = fixture();
    let s = strategy(&f);
    assert_eq!(s.kind().unwrap(), StrategyKind::ParameterServer);
    assert_eq!(s.num_replicas_in_sync().unwrap(), 1);
    let initial: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let mut w = s
        .variable(&VariableOptions {
            name: Some("dense"),
            shape: Some(&[4, 3]),
            initial_value: Some(&initial),
            optimizer: Some((OptimizerKind::Sgd, Some(0.5))),
            num_shards: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        w.shards().unwrap(),
        vec![Shard { server: 0, first_row: 0, rows: 2 }, Shard { server: 1, first_row: 2, rows: 2 }]
    );
    assert_eq!(w.num_copies().unwrap(), 0);
    let gradient: Vec<f32> = (0..12).map(|i| if i % 2 == 0 { 2.0 } else { -1.0 }).collect();
    w.apply_gradient(&gradient).unwrap();
    let expected: Vec<f32> = initial.iter().zip(&gradient).map(|(v, g)| v - 0.5 * g).collect();
    assert_eq!(w.value().unwrap(), expected);
    // Replica context: one replica, one assign_add per run.
    for _ in 0..2 {
        s.run(|r| r.assign_add(&w, &gradient)).unwrap();
    }
    let twice: Vec<f32> = expected.iter().zip(&gradient).map(|(v, g)| v + 2.0 * g).collect();
    assert_eq!(w.value().unwrap(), twice);
    let held: usize = f.servers.iter().map(|srv| srv.describe().unwrap().matches("\"name\":\"dense\"").count()).sum();
    assert_eq!(held, 2, "one shard of dense on each server");
}

#[test]
fn sparse_rows() {
    let f = fixture();
    let s = strategy(&f);
    let table: Vec<f64> = (0..20).map(f64::from).collect(); // 5 rows of 4
    let mut e = s
        .variable(&VariableOptions {
            name: Some("embedding"),
            shape: Some(&[5, 4]),
            initial_value: Some(&table),
            optimizer: Some((OptimizerKind::Sgd, Some(0.25))),
            max_shard_bytes: Some(2 * 4 * 8),
            ..Default::default()
        })
        .unwrap();
    let shards = e.shards().unwrap();
    assert_eq!(shards.len(), 3);
    assert_eq!(shards.iter().map(|s| s.rows).sum::<u64>(), 5);
    let mut rows = vec![0.0; 12];
    e.read_rows(&[4, 0, 4], &mut rows).unwrap();
    let wanted: Vec<f64> = [4usize, 0, 4].iter().flat_map(|&r| table[4 * r..4 * r + 4].to_vec()).collect();
    assert_eq!(rows, wanted);
    let mut reference = table.clone();
    let values: Vec<f64> = (1..=8).map(f64::from).collect();
    e.add_rows(&[1, 1], &values).unwrap();
    for j in 0..4 {
        reference[4 + j] += values[j] + values[4 + j];
    }
    let gradients = [4.0, 4.0, 4.0, 4.0, -8.0, -8.0, -8.0, -8.0];
    s.run(|r| r.apply_rows(&e, &[3, 0], &gradients)).unwrap();
    for j in 0..4 {
        reference[12 + j] -= 0.25 * gradients[j];
        reference[j] -= 0.25 * gradients[4 + j];
    }
    assert_eq!(e.value().unwrap(), reference);
    let outside = e.read_rows(&[5], &mut rows[..4]).unwrap_err();
    assert_eq!(outside.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn adam_on_the_servers_matches_the_formula() {
    let f = fixture();
    let s = strategy(&f);
    let adam = OptimizerKind::Adam { beta_1: None, beta_2: None, epsilon: None };
    let mut v = s
        .variable(&VariableOptions {
            name: Some("adam"),
            shape: Some(&[3]),
            initial_value: Some(&[1.0f64, 1.0, 1.0]),
            optimizer: Some((adam, Some(0.1))),
            ..Default::default()
        })
        .unwrap();
    let (lr, b1, b2, eps) = (0.1f64, 0.9f64, 0.999f64, 1e-7f64);
    let (mut value, mut m, mut sq) = (vec![1.0f64; 3], vec![0.0f64; 3], vec![0.0f64; 3]);
    for (step, g) in [[1.0, -2.0, 0.5], [0.5, 0.5, -1.0]].iter().enumerate() {
        v.apply_gradient(g).unwrap();
        let t = (step + 1) as i32;
        let alpha = lr * (1.0 - b2.powi(t)).sqrt() / (1.0 - b1.powi(t));
        for i in 0..3 {
            m[i] = b1 * m[i] + (1.0 - b1) * g[i];
            sq[i] = b2 * sq[i] + (1.0 - b2) * g[i] * g[i];
            value[i] -= alpha * m[i] / (sq[i].sqrt() + eps);
        }
    }
    for (got, want) in v.value().unwrap().iter().zip(&value) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
}

#[test]
fn errors_and_a_checkpoint_of_values() {
    let f = fixture();
    let s = strategy(&f);
    let mut plain = s.variable(&VariableOptions::<f32> { name: Some("plain"), shape: Some(&[2]), ..Default::default() }).unwrap();
    let refused = plain.apply_gradient(&[1.0, 1.0]).unwrap_err();
    assert!(refused.message().contains("plain"), "{refused}");
    let both = s
        .variable(&VariableOptions::<f64> {
            name: Some("both"),
            shape: Some(&[4, 2]),
            num_shards: Some(2),
            max_shard_bytes: Some(16),
            ..Default::default()
        })
        .unwrap_err();
    assert!(both.message().contains("give one partitioner"), "{both}");
    let misplaced = Strategy::new(
        None,
        &StrategyOptions { kind: Some(StrategyKind::Mirrored), cluster: Some(&f.cluster), ..Default::default() },
    )
    .unwrap_err();
    assert!(misplaced.message().contains("PARAMETER_SERVER"), "{misplaced}");

    let mut saved = s
        .variable(&VariableOptions {
            name: Some("saved"),
            shape: Some(&[3, 2]),
            initial_value: Some(&[1i64, 2, 3, 4, 5, 6]),
            num_shards: Some(2),
            ..Default::default()
        })
        .unwrap();
    let root = std::env::temp_dir().join(format!("dist-rust-ps-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let options = CheckpointOptions { token: Some(TOKEN), timeout: Some(Duration::from_secs(20)), ..Default::default() };
    checkpoint_save(&f.cluster, &root, 1, &options).unwrap();
    saved.assign(&[0; 6]).unwrap();
    checkpoint_restore(&f.cluster, &root, &options).unwrap();
    assert_eq!(saved.value().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn placement_partitioners_adagrad_and_sync() {
    let f = fixture();
    let options = StrategyOptions {
        kind: Some(StrategyKind::ParameterServer),
        cluster: Some(&f.cluster),
        token: Some(TOKEN),
        placement: Some(Placement::GreedyBytes),
        ..Default::default()
    };
    let s = Strategy::new(None, &options).unwrap();
    let big = s.variable(&VariableOptions::<f64> { name: Some("big"), shape: Some(&[8, 4]), ..Default::default() }).unwrap();
    let small = s.variable(&VariableOptions::<f64> { name: Some("small"), ..Default::default() }).unwrap();
    let near =
        s.variable(&VariableOptions::<f32> { name: Some("near"), colocate_with: Some(&big), ..Default::default() }).unwrap();
    let servers: Vec<i32> = [big.shards().unwrap(), small.shards().unwrap(), near.shards().unwrap()]
        .iter()
        .map(|shards| shards[0].server)
        .collect();
    assert_eq!(servers, vec![0, 1, 0], "greedy by bytes, then colocated with big");
    let split = s
        .variable(&VariableOptions::<f32> {
            name: Some("split"),
            shape: Some(&[10, 4]),
            min_shard_bytes: Some(40),
            max_shards: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(split.shards().unwrap().iter().map(|s| s.rows).collect::<Vec<_>>(), vec![4, 3, 3]);

    let adagrad = OptimizerKind::Adagrad { initial_accumulator_value: None, epsilon: None };
    let mut v = s
        .variable(&VariableOptions {
            name: Some("adagrad"),
            shape: Some(&[2]),
            initial_value: Some(&[3.0f64, 3.0]),
            optimizer: Some((adagrad, Some(0.5))),
            ..Default::default()
        })
        .unwrap();
    let (mut value, mut acc) = ([3.0f64, 3.0], [0.1f64, 0.1]);
    for g in [[1.0, -2.0], [0.5, 4.0]] {
        v.apply_gradient(&g).unwrap();
        for i in 0..2 {
            acc[i] += g[i] * g[i];
            value[i] -= 0.5 * g[i] / (acc[i].sqrt() + 1e-7);
        }
    }
    for (got, want) in v.value().unwrap().iter().zip(&value) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    // One worker: each synchronous round is complete with its gradient.
    let mut sync = s
        .variable(&VariableOptions::<f32> {
            name: Some("sync"),
            shape: Some(&[3]),
            optimizer: Some((OptimizerKind::Sgd, Some(1.0))),
            sync_gradients: Some(true),
            replicas_to_aggregate: Some(1),
            ..Default::default()
        })
        .unwrap();
    sync.apply_gradient(&[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(sync.value().unwrap(), vec![-1.0, -2.0, -3.0]);
}
