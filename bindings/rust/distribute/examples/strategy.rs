//! The example: a MULTI_WORKER_MIRRORED strategy with two CPU replicas
//! per worker trains a mirrored variable. In each step every replica computes a
//! gradient from its own data (reading the variable in replica context), and
//! the strategy mean-all-reduces the gradients and applies them with SGD. The
//! weights must be bit-identical on every rank and every local copy, and match
//! the closed-form result.
//!
//!     dist-run -n 2 -- bindings/rust/target/debug/examples/strategy
use std::sync::Mutex;

use distribute::{
    Aggregation, Cluster, Context, Optimizer, OptimizerKind, StrategyKind, StrategyOptions, Synchronization, Variable,
    VariableOptions,
};

const STEPS: usize = 5;
const SIZE: usize = 1024;
const LOCAL_REPLICAS: i32 = 2;
const LEARNING_RATE: f64 = 0.5;

/// Replica `id`'s data: what it alone would fit the weights to.
fn target(id: i32, i: usize) -> f32 {
    ((id + 1) as f32) * ((i % 10) as f32)
}

/// The same steps on the mean target of all replicas, without communication.
fn expected_weight(replicas: i32, i: usize) -> f64 {
    let mean_target = (0..replicas).map(|r| target(r, i) as f64).sum::<f64>() / replicas as f64;
    (0..STEPS).fold(0f64, |w, _| w - LEARNING_RATE * (w - mean_target))
}

fn run() -> distribute::Result<bool> {
    let cluster = Cluster::from_env()?;
    let context = Context::join(&cluster)?;
    let options = StrategyOptions {
        kind: Some(StrategyKind::MultiWorkerMirrored),
        num_cpu_devices: Some(LOCAL_REPLICAS),
        ..Default::default()
    };
    let strategy = distribute::Strategy::new(Some(&context), &options)?;
    let (rank, workers) = strategy.worker_index()?;
    let replicas = strategy.num_replicas_in_sync()?;
    let mut weights: Variable<'_, f32> = strategy.variable(&VariableOptions {
        name: Some("weights"),
        shape: Some(&[SIZE as i64]),
        synchronization: Some(Synchronization::OnWrite),
        aggregation: Some(Aggregation::Mean),
        ..Default::default()
    })?;
    let mut sgd = Optimizer::new(OptimizerKind::Sgd, Some(LEARNING_RATE))?;

    for _ in 0..STEPS {
        // One gradient per local replica, filled by the replicas on their threads.
        let gradients: Vec<Mutex<Vec<f32>>> = (0..LOCAL_REPLICAS).map(|_| Mutex::new(vec![0f32; SIZE])).collect();
        strategy.run(|replica| {
            let id = replica.id()?;
            let mut w = vec![0f32; SIZE];
            replica.read(&weights, &mut w)?;
            let mut g = gradients[replica.local_index()? as usize].lock().unwrap();
            g.iter_mut().enumerate().for_each(|(i, g)| *g = w[i] - target(id, i));
            Ok(())
        })?;
        let mut gradients: Vec<Vec<f32>> = gradients.into_iter().map(|g| g.into_inner().unwrap()).collect();
        let mut slices: Vec<&mut [f32]> = gradients.iter_mut().map(Vec::as_mut_slice).collect();
        strategy.apply_gradients(&[&weights], &mut slices, &mut sgd)?;
    }

    let result = weights.value()?;
    let mut copies_agree = true;
    for copy in 0..weights.num_copies()? {
        let mut stored = vec![0f32; SIZE];
        weights.read_copy(copy, &mut stored)?;
        copies_agree &= stored.iter().zip(&result).all(|(a, b)| a.to_bits() == b.to_bits());
    }
    // Compare with every other rank through the world communicator.
    let world = context.world()?;
    let mut everyone = vec![0f32; SIZE * workers as usize];
    world.all_gather(&result, &mut everyone)?;
    let identical = copies_agree && everyone.chunks(SIZE).all(|b| b.iter().zip(&result).all(|(a, b)| a.to_bits() == b.to_bits()));
    let correct = result.iter().enumerate().all(|(i, &w)| (w as f64 - expected_weight(replicas, i)).abs() <= 1e-5 * (1.0 + w.abs() as f64));
    println!(
        "rank {rank} of {workers}: {replicas} replicas, {} SGD steps, weights[7] = {:.4}; {}, {}",
        sgd.iterations()?,
        result[7],
        if identical { "identical on all ranks" } else { "DIFFERENT across ranks or copies" },
        if correct { "correct" } else { "WRONG" }
    );
    Ok(identical && correct && sgd.iterations()? == STEPS as i64)
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
