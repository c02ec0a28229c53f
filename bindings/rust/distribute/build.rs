//! Lets this crate's tests and examples find libdistribute where distribute-sys
//! found it (an rpath), so they run from the build tree without LD_LIBRARY_PATH.
fn main() {
    if let Ok(dir) = std::env::var("DEP_DISTRIBUTE_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
