#!/usr/bin/env bash
# Every check CI runs, in order: format, lints, all tests (unit, property, doc, tap and QEMU end
# to end), no_std builds for the thumb targets, docs, and both firmware boards.
# Usage: scripts/check.sh        (the tap and QEMU tests need root, qemu-system-arm, redis-cli)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "format"
cargo fmt --all -- --check
(cd firmware && cargo fmt --all -- --check)

step "clippy (host, warnings denied)"
cargo clippy --workspace --all-targets --features net-shell/std -- -D warnings
cargo clippy -p timer-core --all-targets --all-features -- -D warnings
(cd firmware && cargo clippy --release -- -D warnings)
(cd firmware && cargo clippy --release --features cluster -- -D warnings)
(cd firmware && cargo clippy --release --no-default-features --features nucleo-f429zi -- -D warnings)
(cd firmware && cargo clippy --release --no-default-features --features nucleo-f429zi,sntp -- -D warnings)
(cd firmware && cargo clippy -p lan9118 -p calendar --target x86_64-unknown-linux-gnu --all-targets -- -D warnings)

step "no_std builds for the thumb targets"
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  cargo check -p timer-core --target "$target"
  cargo check -p timer-core --target "$target" --features defmt
  cargo check -p timer-core --target "$target" --features embassy-time
  cargo check -p timer-core --target "$target" --features defmt,embassy-time
done
# net-shell's feature matrix: no_std without `alloc`; each capability on its own (pub/sub,
# transactions and CLIENT LIST turn on `alloc`; cluster mode and hashes do not); everything a
# no_std build can have; the firmware's sets (`defmt`, and `defmt,sntp` for the NUCLEO's wall
# clock; `defmt,lists,hashes` for QEMU's). Pairs on their own: transactions with the extended
# commands but not CLIENT LIST (it once failed to build), and cluster mode with lists and with
# hashes, without `alloc` (the QEMU board's `cluster` builds).
# `std` is the host build that clippy and the tests use. Warnings are errors here too: a
# variable used only under another feature shows only in some of these builds.
for features in "" alloc pubsub transactions client-list key-timers-wheel extended-commands lists blocking-lists hashes \
  command-docs cluster sntp defmt defmt,sntp defmt,lists,hashes hashes,cluster transactions,extended-commands lists,cluster \
  alloc,pubsub,transactions,client-list,key-timers-wheel,extended-commands,lists,blocking-lists,hashes,command-docs,cluster,sntp; do
  echo "net-shell --features \"$features\""
  RUSTFLAGS="-D warnings" cargo check -q -p net-shell --target thumbv7em-none-eabihf \
    --features "$features"
done
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  cargo check -p embassy-wheel-queue --target "$target"
  cargo check -p embassy-wheel-queue --target "$target" --features defmt
  cargo check -p embassy-wheel-queue --target "$target" --features time-driver
  cargo check -p embassy-wheel-queue --target "$target" --features defmt,time-driver
done

step "Miri: embassy-wheel-queue's unsafe (src/item.rs) under its queue and driver unit tests"
# Needs a nightly toolchain with Miri (`rustup toolchain install nightly --component miri`).
# Node addresses carry exposed provenance (src/item.rs says why), hence permissive provenance.
if cargo +nightly miri --version >/dev/null 2>&1; then
  MIRIFLAGS=-Zmiri-permissive-provenance cargo +nightly miri test -p embassy-wheel-queue \
    --features time-driver --lib -- integrated:: driver:: wheel::tests::
else
  echo "NOT RUN: no nightly toolchain with Miri (rustup toolchain install nightly --component miri)"
fi

step "docs (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --features net-shell/std,timer-core/defmt,timer-core/embassy-time

step "firmware: both boards (the NUCLEO within its flash and RAM), the LAN9118 frame logic and the calendar on the host"
(cd firmware && cargo build --release)
# Panic locations name source files by path: the checkout's is remapped to `.`, so the image and
# its footprint are the same wherever the repository is cloned.
remap="target.thumbv7em-none-eabihf.rustflags=[\"--remap-path-prefix=$PWD=.\"]"
(cd firmware && cargo nucleo-build --config "$remap")
scripts/footprint.sh
(cd firmware && cargo nucleo-build --features sntp)
(cd firmware && cargo test -p lan9118 -p calendar --target x86_64-unknown-linux-gnu)

step "firmware: cargo run in QEMU shows decoded logs and the ready line, no raw defmt frames"
firmware_run_log=$(mktemp)
(cd firmware && cargo build --release -q && QEMU_PORT=16379 timeout 15 cargo run --release -q) \
  > "$firmware_run_log" 2>&1 || true
cat "$firmware_run_log"
grep -q "net-shell ready on" "$firmware_run_log"
grep -q "INFO.*net-shell: " "$firmware_run_log"
# Only text: tab, newline, carriage return, printable ASCII and UTF-8 (defmt-print's output).
if LC_ALL=C grep -qP '[\x00-\x08\x0b\x0c\x0e-\x1f]' "$firmware_run_log"; then
  echo "binary bytes in cargo run's output" >&2
  exit 1
fi
rm -f "$firmware_run_log"

step "fuzz targets: build, replay the committed corpus, then fuzz each for 15 s (leaks checked)"
(
  cd fuzz
  RUSTC_BOOTSTRAP=1 cargo fuzz build
  for target in $(cargo fuzz list); do
    ASAN_OPTIONS=detect_leaks=1 RUSTC_BOOTSTRAP=1 \
      cargo fuzz run "$target" "corpus/$target" -- -runs=0
    # New inputs go to a scratch directory: the committed corpus stays as it is. A harness that
    # cannot fuzz (a leak, a crash, a timeout on the first inputs) fails here.
    scratch=$(mktemp -d)
    ASAN_OPTIONS=detect_leaks=1 RUSTC_BOOTSTRAP=1 \
      cargo fuzz run "$target" "$scratch" "corpus/$target" -- -max_total_time=15
    rm -rf "$scratch"
  done
)

step "tests: unit, property, doc, and end to end (tap, QEMU, redis-server: #[ignore], run here)"
features=net-shell/std,timer-core/embassy-time
test_log=$(mktemp)
# Doc tests apart, without --include-ignored: a doc example marked `ignore` is a sketch (register
# access, say) that is not meant to compile.
cargo test --workspace --features "$features" --doc
cargo test --workspace --features "$features" --lib --bins --tests -- --include-ignored 2>&1 |
  tee "$test_log"
# The tests that need root, a tap, QEMU or a server are #[ignore]d so that a plain `cargo test`
# cannot pass them without running them: list each with its result here.
printf '\n==> end-to-end tests (marked #[ignore], run with --include-ignored):\n'
not_run=0
while read -r name; do
  if ! grep -E "^test $name \.\.\. " "$test_log"; then
    echo "test $name ... NOT RUN"
    not_run=1
  fi
done < <(cargo test -q --workspace --features "$features" --lib --bins --tests -- --ignored \
  --list 2>/dev/null |
  sed -n 's/: test$//p' | sort -u)
rm -f "$test_log"
[ "$not_run" = 0 ]
# net-shell without `alloc`, as on the boards: the store's key timers are then timer-core's heap.
cargo test -p net-shell --lib
