#!/usr/bin/env bash
# Checks the NUCLEO-F429ZI image against its targets: flash (.vector_table + .text + .rodata +
# .data) at most 96 KiB, static RAM (.data + .bss + .uninit) at most 64 KiB. Prints both and
# fails when either is over. Run after `cargo nucleo-build` in firmware/ (scripts/check.sh does,
# with the checkout's path remapped to `.`: panic locations carry source paths, so an image built
# in a longer path is larger); an argument names another image.
set -euo pipefail
cd "$(dirname "$0")/../firmware"

image=${1:-${CARGO_TARGET_DIR:-target}/thumbv7em-none-eabihf/release/firmware}
flash_limit=$((96 * 1024))
ram_limit=$((64 * 1024))

size=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-size 2>/dev/null | head -1 || true)
if [ -z "$size" ]; then
  size=$(command -v llvm-size || true)
fi
if [ -z "$size" ]; then
  echo "footprint: llvm-size not found: rustup component add llvm-tools" >&2
  exit 1
fi
[ -f "$image" ] || { echo "footprint: no image at $image (cargo nucleo-build first)" >&2; exit 1; }

read -r flash ram < <("$size" -A "$image" | awk '
  $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" { flash += $2 }
  $1 == ".data" { flash += $2; ram += $2 }
  $1 == ".bss" || $1 == ".uninit" { ram += $2 }
  END { print flash + 0, ram + 0 }')

echo "footprint: flash ${flash} B of ${flash_limit} ($((flash_limit - flash)) B left)," \
  "static RAM ${ram} B of ${ram_limit} ($((ram_limit - ram)) B left)"
if [ "$flash" -gt "$flash_limit" ] || [ "$ram" -gt "$ram_limit" ]; then
  echo "footprint: over the NUCLEO's target" >&2
  exit 1
fi
