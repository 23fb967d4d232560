//! Puts the selected board's memory layout on the linker's search path as `memory.x`, where
//! cortex-m-rt's `link.x` includes it, draws the store's hash key for a board without an RNG
//! (`BUILD_HASH_KEY`, from the build host's randomness), and rebuilds when the build-time
//! settings change.

use std::io::Read as _;
use std::path::PathBuf;
use std::{env, fs};

const BOARDS: [&str; 2] = ["qemu-mps2-an386", "nucleo-f429zi"];

fn main() {
    // Read by `option_env!` in src/app.rs: a change must rebuild the firmware.
    println!("cargo:rerun-if-env-changed=NET_SHELL_IDLE_TIMEOUT_MS");
    println!("cargo:rerun-if-env-changed=NET_SHELL_REQUIREPASS");
    println!("cargo:rerun-if-env-changed=NET_SHELL_TRUSTED_NETWORK");
    println!("cargo:rerun-if-env-changed=NET_SHELL_NTP_SERVER");
    let selected: Vec<&str> = BOARDS
        .iter()
        .copied()
        .filter(|board| {
            let var = format!("CARGO_FEATURE_{}", board.to_uppercase().replace('-', "_"));
            env::var_os(var).is_some()
        })
        .collect();
    // Zero or two boards: main.rs says so with compile_error!; leave the linker script out.
    let [board] = selected[..] else {
        return;
    };

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut key = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut source| source.read_exact(&mut key))
        .expect("read 16 random bytes from /dev/urandom for the store's hash key");
    fs::write(
        out.join("hash_key.rs"),
        format!("/// The store's hash key, drawn at build time.\nconst BUILD_HASH_KEY: [u8; 16] = {key:?};\n"),
    )
    .expect("write the hash key");
    let layout = format!("memory/{board}.x");
    fs::copy(&layout, out.join("memory.x")).expect("copy the board's memory layout");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={layout}");
    println!("cargo:rerun-if-changed=build.rs");
}
