//! The allreduce example under `dist-run -n 2`: both ranks report identical, correct weights.
use std::path::PathBuf;
use std::process::Command;

fn build_dir() -> PathBuf {
    std::env::var_os("DIST_BUILD_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build"))
}

/// Runs an example of this crate under dist-run (whose --timeout bounds the job) and returns its output.
fn dist_run(example: &str, ranks: u32) -> String {
    let launcher = build_dir().join("tools/dist-run/dist-run");
    assert!(launcher.exists(), "{} is missing: build the project first", launcher.display());
    // cargo test builds the examples next to the test binaries' deps/ directory.
    let program = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("examples").join(example);
    assert!(program.exists(), "{} is missing: `cargo test` builds it, `cargo test --test ...` does not", program.display());
    let output = Command::new(launcher)
        .args(["-n", &ranks.to_string(), "--timeout", "120", "--"])
        .arg(&program)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

#[test]
fn allreduce_example_on_two_ranks() {
    let stdout = dist_run("allreduce", 2);
    assert!(stdout.contains("rank 0 of 2") && stdout.contains("rank 1 of 2"), "{stdout}");
    assert_eq!(stdout.matches("identical on all ranks, correct").count(), 2, "{stdout}");
}

#[test]
fn strategy_example_on_two_ranks() {
    let stdout = dist_run("strategy", 2);
    assert!(stdout.contains("rank 0 of 2: 4 replicas") && stdout.contains("rank 1 of 2: 4 replicas"), "{stdout}");
    assert_eq!(stdout.matches("identical on all ranks, correct").count(), 2, "{stdout}");
}

#[test]
fn every_collective_across_two_and_three_processes() {
    for ranks in [2, 3] {
        let stdout = dist_run("every_collective", ranks);
        assert_eq!(stdout.matches("all collectives correct").count(), ranks as usize, "{stdout}");
    }
}
