#!/usr/bin/env bash
# How long an idle net-shell takes to exit after SIGTERM: starts the shell in a namespace this
# script creates (and removes), waits for its ready line and then a random 0.1-0.9 s (so the
# signal lands at a different point of the shell's sleep each time), sends SIGTERM and times
# until the process is gone. Prints each run, then min/median/max in ms, and how many runs
# logged the shell's "stopped:" line (a graceful exit). Needs root.
#
#   scripts/measure-signal-exit.sh [--binary PATH] [--runs N] [--signal TERM|INT]
#
# The binary defaults to target/release/net-shell (cargo build --release -p net-shell --features std).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$root/target/release/net-shell
runs=20
signal=TERM
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --signal) signal=$2; shift 2 ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "measure-signal-exit.sh: needs root" >&2; exit 1; }
[ -x "$binary" ] || { echo "measure-signal-exit.sh: no binary at $binary" >&2; exit 1; }
[ "$runs" -ge 1 ] && [ "$runs" -le 200 ] || { echo "--runs must be 1..200" >&2; exit 2; }

ns=nstap-sig-$$
tap=sigtap0
work=$(mktemp -d)
cleanup() {
  [ -n "${pid:-}" ] && kill -KILL "$pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
ip netns exec "$ns" ip addr add 10.81.0.1/24 dev "$tap"
ip netns exec "$ns" ip link set "$tap" up

# microseconds since the epoch, without forking
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }

times=()
graceful=0
for run in $(seq "$runs"); do
  : > "$work/out"
  : > "$work/err"
  # `ip netns exec` execs the program, so $! is the shell's own pid.
  ip netns exec "$ns" "$binary" --tap "$tap" --address 10.81.0.2/24 --log-level info \
    > "$work/out" 2> "$work/err" &
  pid=$!
  for _ in $(seq 300); do grep -q "net-shell ready" "$work/out" && break; sleep 0.1; done
  grep -q "net-shell ready" "$work/out" || { echo "run $run: no ready line" >&2; cat "$work/err" >&2; exit 1; }
  sleep "0.$((RANDOM % 9 + 1))"
  start=$(now_us)
  kill -"$signal" "$pid"
  wait "$pid" || true
  end=$(now_us)
  pid=
  grep -q "stopped:" "$work/err" && graceful=$((graceful + 1))
  ms=$(awk -v us=$((end - start)) 'BEGIN { printf "%.1f", us / 1000 }')
  times+=("$ms")
  echo "run $run: ${ms} ms"
done

printf '%s\n' "${times[@]}" | sort -n | awk -v graceful="$graceful" -v sig="$signal" '
  { v[NR] = $1 }
  END {
    median = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "SIG%s to exit, idle, %d runs: min %.1f ms, median %.1f ms, max %.1f ms; graceful (stopped: logged) %d/%d\n",
      sig, NR, v[1], median, v[NR], graceful, NR
  }'
