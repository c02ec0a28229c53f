//! The allreduce example under `dist-run -n 2`: both ranks report identical, correct weights.
use std::path::PathBuf;
use std::process::Command;

fn build_dir() -> PathBuf {
    std::env::var_os("DIST_BUILD_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build"))
}

#[test]
fn allreduce_example_on_two_ranks() {
    let launcher = build_dir().join("tools/dist-run/dist-run");
    assert!(launcher.exists(), "{} is missing: build the project first", launcher.display());
    // cargo test builds the examples next to the test binaries' deps/ directory.
    let example = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("examples/allreduce");
    assert!(example.exists(), "{} is missing", example.display());
    let output = Command::new(launcher).args(["-n", "2", "--timeout", "120", "--"]).arg(&example).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("rank 0 of 2") && stdout.contains("rank 1 of 2"), "{stdout}");
    assert_eq!(stdout.matches("identical on all ranks, correct").count(), 2, "{stdout}");
}
