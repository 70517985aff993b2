//! Generates the bindings from braid's C headers (generate.py, into OUT_DIR) and links
//! libbraid_c. Where they are:
//!   BRAID_INCLUDE_DIR  the directory holding braid/c.h and braid/c/ (with the generated ops.h);
//!                      default: the first of the repository's build/release/bindings/c/generated/include
//!                      and /usr/local/include that has braid/c/ops.h
//!   BRAID_LIB_DIR      ':'-separated directories of libbraid_c.so and libbraid.so; default: the
//!                      repository's build/release/bindings/c and build/release
//! Each library directory is also written into the test and example binaries' rpath, so
//! `cargo test` runs without LD_LIBRARY_PATH.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest.join("..").join("..");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));

    let include = match env::var_os("BRAID_INCLUDE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let candidates = [
                repo.join("build/release/bindings/c/generated/include"),
                PathBuf::from("/usr/local/include"),
            ];
            match candidates.iter().find(|d| d.join("braid/c/ops.h").is_file()) {
                Some(dir) => dir.clone(),
                None => fail("no braid/c/ops.h found; build the C API (make rust) or set BRAID_INCLUDE_DIR"),
            }
        }
    };
    if !include.join("braid/c.h").is_file() {
        fail(&format!("{} has no braid/c.h (BRAID_INCLUDE_DIR)", include.display()));
    }

    let python = env::var("PYTHON3").unwrap_or_else(|_| "python3".to_string());
    let generated = Command::new(&python)
        .arg(manifest.join("generate.py"))
        .arg("--include")
        .arg(&include)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {}: {}", python, e)));
    let notes = String::from_utf8_lossy(&generated.stderr);
    if !generated.status.success() {
        fail(&format!("generate.py failed:\n{}", notes));
    }
    // An op whose C types have no safe mapping yet still builds (it is in `sys`); say so.
    for line in notes.lines() {
        println!("cargo:warning={}", line);
    }

    let lib_dirs: Vec<PathBuf> = match env::var_os("BRAID_LIB_DIR") {
        Some(dirs) => env::split_paths(&dirs).collect(),
        None => vec![repo.join("build/release/bindings/c"), repo.join("build/release")],
    };
    if !lib_dirs.iter().any(|d| d.join("libbraid_c.so").exists()) {
        println!(
            "cargo:warning=libbraid_c.so is in none of {:?}; set BRAID_LIB_DIR or build it (make rust)",
            lib_dirs
        );
    }
    for dir in &lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=braid_c");

    println!("cargo:rerun-if-env-changed=BRAID_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=BRAID_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PYTHON3");
    println!("cargo:rerun-if-changed=generate.py");
    println!("cargo:rerun-if-changed={}", include.join("braid/c.h").display());
    watch_headers(&include.join("braid/c"));
}

fn watch_headers(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("braid build.rs: {}", message);
    std::process::exit(1);
}
