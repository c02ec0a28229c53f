//! Data-parallel training in miniature: every rank computes a gradient from its
//! own data, all-reduces it to the mean and applies it to its copy of the
//! weights. The copies must stay bit-identical on every rank and match the
//! closed-form result.
//!
//!     dist-run -n 2 -- bindings/rust/target/debug/examples/allreduce
//!
//! (When strategies and variables land, the weights become a mirrored variable
//! and `train` a strategy run; the checks stay the same.)
use distribute::{Cluster, Comm, Context, Op};

const STEPS: usize = 5;
const SIZE: usize = 4096;
const LEARNING_RATE: f32 = 0.5;

/// This rank's data: what it alone would fit the weights to.
fn local_target(rank: i32, i: usize) -> f32 {
    ((rank + 1) as f32) * ((i % 10) as f32)
}

fn train(world: &Comm<'_>, rank: i32) -> distribute::Result<Vec<f32>> {
    let mut weights = vec![0f32; SIZE];
    for _ in 0..STEPS {
        let mut gradient: Vec<f32> = weights.iter().enumerate().map(|(i, w)| w - local_target(rank, i)).collect();
        world.all_reduce_in_place(&mut gradient, Op::Mean)?;
        weights.iter_mut().zip(&gradient).for_each(|(w, g)| *w -= LEARNING_RATE * g);
    }
    Ok(weights)
}

/// The same steps on the mean target, without communication.
fn expected_weight(size: i32, i: usize) -> f64 {
    let mean_target = (0..size).map(|r| local_target(r, i) as f64).sum::<f64>() / size as f64;
    let mut w = 0f64;
    for _ in 0..STEPS {
        w -= LEARNING_RATE as f64 * (w - mean_target);
    }
    w
}

fn run() -> distribute::Result<bool> {
    let cluster = Cluster::from_env()?;
    let context = Context::join(&cluster)?;
    let world = context.world()?;
    let (rank, size) = (world.rank()?, world.size()?);
    let weights = train(&world, rank)?;
    let mut everyone = vec![0f32; SIZE * size as usize];
    world.all_gather(&weights, &mut everyone)?;
    let identical = everyone.chunks(SIZE).all(|block| block.iter().zip(&weights).all(|(a, b)| a.to_bits() == b.to_bits()));
    let correct = weights.iter().enumerate().all(|(i, &w)| (w as f64 - expected_weight(size, i)).abs() <= 1e-5 * (1.0 + w.abs() as f64));
    println!(
        "rank {rank} of {size}: {STEPS} steps, weights[7] = {:.4}; {}, {}",
        weights[7],
        if identical { "identical on all ranks" } else { "DIFFERENT across ranks" },
        if correct { "correct" } else { "WRONG" }
    );
    Ok(identical && correct)
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
