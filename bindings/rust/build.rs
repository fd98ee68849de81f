// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// Link libsds statically: the archive goes into this crate's rlib, so
// every program that depends on the crate (tests and examples too) runs
// without an rpath or LD_LIBRARY_PATH, and its probe sites are in the
// program itself (`sds-bpf attach ./program`).  The archive is the one
// `make` builds: $SDS_LIB_DIR/libsds.a, by default this tree's
// build/lib.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=SDS_LIB_DIR");
    let dir = match env::var_os("SDS_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let manifest = env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
            PathBuf::from(manifest).join("../../build/lib")
        }
    };
    let lib = dir.join("libsds.a");
    if !lib.exists() {
        eprintln!(
            "sds-bpf: {}: no libsds.a (run make in the sds-bpf tree, or set SDS_LIB_DIR)",
            lib.display()
        );
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=sds");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
