//! Puts the selected board's memory layout on the linker's search path as `memory.x`, where
//! cortex-m-rt's `link.x` includes it, and rebuilds when the build-time settings change.

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
    let layout = format!("memory/{board}.x");
    fs::copy(&layout, out.join("memory.x")).expect("copy the board's memory layout");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={layout}");
    println!("cargo:rerun-if-changed=build.rs");
}
