//! Every collective on a real multi-process communicator, each result checked
//! against a reference this rank computes alone (run by tests/multiprocess.rs):
//!
//!     dist-run -n 3 -- bindings/rust/target/debug/examples/every_collective
use distribute::{AllreduceAlgorithm, Cluster, Collective, Comm, CommOptions, CommPath, Context, Op, F16};

fn check(world: &Comm<'_>) -> distribute::Result<Vec<String>> {
    let (r, n) = (world.rank()?, world.size()?);
    let mut failures = Vec::new();
    let mut expect = |name: &str, ok: bool, detail: String| {
        if !ok {
            failures.push(format!("{name}: {detail}"));
        }
    };

    let mut sum = vec![r + 1; 4];
    world.all_reduce_in_place(&mut sum, Op::Sum)?;
    expect("all_reduce", sum == vec![n * (n + 1) / 2; 4], format!("{sum:?}"));

    let root = n - 1;
    let mut max = vec![0f32; 3];
    let send = vec![r as f32; 3];
    world.reduce(&send, (r == root).then_some(&mut max[..]), Op::Max, root)?;
    expect("reduce", r != root || max == vec![(n - 1) as f32; 3], format!("{max:?}"));

    let mut b = vec![r as f64; 2];
    world.broadcast(&mut b, root)?;
    expect("broadcast", b == vec![root as f64; 2], format!("{b:?}"));

    let mut gathered = vec![0i64; 2 * n as usize];
    world.all_gather(&[10 * r as i64, 10 * r as i64 + 1], &mut gathered)?;
    let want: Vec<i64> = (0..n as i64).flat_map(|k| [10 * k, 10 * k + 1]).collect();
    expect("all_gather", gathered == want, format!("{gathered:?}"));

    // Block j of rank k's input is [2j + k, 2j + 1 + k]; block r of the sum is ours.
    let inputs: Vec<i32> = (0..2 * n).map(|j| j + r).collect();
    let block: Vec<i32> = (2 * r..2 * r + 2).map(|j| (0..n).map(|k| j + k).sum()).collect();
    let mut out = vec![0i32; 2];
    world.reduce_scatter(&inputs, &mut out, Op::Sum)?;
    expect("reduce_scatter", out == block, format!("{out:?}"));
    let mut in_place = inputs.clone();
    world.reduce_scatter_in_place(&mut in_place, Op::Sum)?;
    expect("reduce_scatter in place", in_place[..2] == block[..], format!("{:?}", &in_place[..2]));

    let mut exchanged: Vec<u32> = (0..n).map(|j| (100 * r + j) as u32).collect();
    world.all_to_all_in_place(&mut exchanged)?;
    let want: Vec<u32> = (0..n).map(|i| (100 * i + r) as u32).collect();
    expect("all_to_all", exchanged == want, format!("{exchanged:?}"));

    let reversed = world.split(0, -r)?.expect("color 0 joins");
    let reversed_rank = reversed.rank()?;
    expect("split", reversed_rank == n - 1 - r, format!("rank {reversed_rank}"));
    drop(reversed);

    let ones = world.all_reduce_start(vec![F16(0x3C00); 5], Op::Sum)?.wait()?; // 1.0 each
    let n_as_f16 = if n == 2 { 0x4000 } else { 0x4200 }; // 2.0, 3.0
    expect("non-blocking all_reduce", ones.iter().all(|h| h.0 == n_as_f16), format!("{ones:?}"));
    world.barrier()?;
    check_path(world, &mut failures)?;
    check_hosts(world, &mut failures)?;
    Ok(failures)
}

/// Every rank runs on this host: it is its own host communicator, in the same order.
fn check_hosts(world: &Comm<'_>, failures: &mut Vec<String>) -> distribute::Result<()> {
    let (r, n) = (world.rank()?, world.size()?);
    let got = (world.local_rank()?, world.local_size()?, world.num_hosts()?);
    if got != (r, n, 1) {
        failures.push(format!("local_rank, local_size, num_hosts: got {got:?}, want {:?}", (r, n, 1)));
    }
    let host = world.split_host()?;
    let mut summed = vec![r as i64 + 1; 3];
    host.all_reduce_in_place(&mut summed, Op::Sum)?;
    let got = (host.rank()?, host.size()?, host.path()?, host.num_hosts()?);
    let n = n as i64;
    if got != (r, n as i32, CommPath::SharedMemory, 1) || summed != vec![n * (n + 1) / 2; 3] {
        failures.push(format!("split_host: got {got:?} and all_reduce {summed:?}"));
    }
    Ok(())
}

/// Ranks launched on one host share memory: the path and the algorithms show it.
fn check_path(world: &Comm<'_>, failures: &mut Vec<String>) -> distribute::Result<()> {
    let got = (
        world.path()?,
        world.algorithm(Collective::AllReduce, 8)?,
        world.algorithm(Collective::AllReduce, 64 << 20)?,
        world.algorithm(Collective::Broadcast, 8)?,
    );
    let want = (CommPath::SharedMemory, "shm_direct", "shm_split", "shm");
    if got != want {
        failures.push(format!("path and algorithms: got {got:?}, want {want:?}"));
    }
    let force = |algorithm| world.configure(&CommOptions { allreduce: Some(algorithm), ..Default::default() });
    force(AllreduceAlgorithm::Ring)?; // point to point, even on shared memory
    let ring = world.algorithm(Collective::AllReduce, 8)?;
    let mut summed = vec![world.rank()? as i64 + 1; 3];
    world.all_reduce_in_place(&mut summed, Op::Sum)?;
    force(AllreduceAlgorithm::SharedMemory)?;
    let forced = world.algorithm(Collective::AllReduce, 8)?;
    let n = world.size()? as i64;
    if (ring, forced) != ("ring", "shm_direct") || summed != vec![n * (n + 1) / 2; 3] {
        failures.push(format!("configure: ring gave {ring} and {summed:?}, shared_memory gave {forced}"));
    }
    Ok(())
}

fn main() {
    let run = || -> distribute::Result<(i32, Vec<String>)> {
        let cluster = Cluster::from_env()?;
        let context = Context::join(&cluster)?;
        let world = context.world()?;
        Ok((world.rank()?, check(&world)?))
    };
    match run() {
        Ok((rank, failures)) => {
            for failure in &failures {
                println!("rank {rank}: {failure}");
            }
            println!("rank {rank}: {}", if failures.is_empty() { "all collectives correct" } else { "FAILED" });
            std::process::exit(if failures.is_empty() { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
