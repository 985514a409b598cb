// Embeds a runpath to the libtorch that torch-sys linked against, so `target/release/rlsolver`
// starts without LD_LIBRARY_PATH. On the GPU machine LD_LIBRARY_PATH (searched before RUNPATH)
// points at that image's torch/lib instead.
fn main() {
    if let Ok(lib_dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,--enable-new-dtags");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib_dir}");
        // The linker's --as-needed would drop libtorch_cuda (nothing references it by symbol),
        // and then CUDA silently reports unavailable.
        if std::path::Path::new(&lib_dir).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
            println!("cargo:rustc-link-arg=-L{lib_dir}");
            println!("cargo:rustc-link-arg=-ltorch_cuda");
            println!("cargo:rustc-link-arg=-Wl,--as-needed");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
