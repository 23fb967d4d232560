#!/usr/bin/env bash
# `cargo run`'s runner for the QEMU board: boots the firmware in QEMU mps2-an386 and shows its
# defmt logs decoded (defmt-print), with the plain-text ready line, instead of raw defmt frames.
#
#   cargo run --release            (from firmware/; this script is the runner)
#   scripts/qemu-run.sh ELF        (by hand)
#
# The guest's port 6379 is forwarded to 127.0.0.1 only (QEMU_PORT changes the host port), and
# `restrict=on` keeps the guest from reaching anything else. Without defmt-print
# (`cargo install defmt-print --locked`), the defmt frames are dropped and only the plain-text
# lines (ready, panic) show.
set -euo pipefail
elf=${1:?usage: qemu-run.sh ELF}
port=${QEMU_PORT:-6379}

qemu=(qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial none
  -semihosting-config enable=on,target=native
  -nic "user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:${port}-:6379"
  -kernel "$elf")

if command -v defmt-print > /dev/null; then
  # QEMU's stdout is the defmt stream; its stderr (ready line, panics) passes through as text.
  # pipefail carries QEMU's exit status (1 after a panic) out of the pipe.
  "${qemu[@]}" | defmt-print -e "$elf"
else
  echo "defmt-print not found (cargo install defmt-print --locked): showing plain-text lines only" >&2
  "${qemu[@]}" > /dev/null
fi
