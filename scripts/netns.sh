#!/usr/bin/env bash
# Runs net-shell on a tap device inside its own network namespace, so it can be reached from
# that namespace and nowhere else. Needs root (ip netns, /dev/net/tun).
#
#   scripts/netns.sh run [net-shell options]   # create the namespace if needed, build, serve
#   scripts/netns.sh exec redis-cli -h 10.77.0.2   # run a command inside the namespace
#   scripts/netns.sh up | down                  # only create / remove the namespace and tap
#
# Environment: NETSHELL_NS (netshell), NETSHELL_TAP (tap0), NETSHELL_HOST (10.77.0.1/24, the
# kernel's side of the tap, where clients run), NETSHELL_ADDR (10.77.0.2/24, the shell).
set -euo pipefail

ns=${NETSHELL_NS:-netshell}
tap=${NETSHELL_TAP:-tap0}
host=${NETSHELL_HOST:-10.77.0.1/24}
addr=${NETSHELL_ADDR:-10.77.0.2/24}
root=$(cd "$(dirname "$0")/.." && pwd)

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "netns.sh: needs root for ip netns and /dev/net/tun (try: sudo $0 $*)" >&2
    exit 1
  fi
}

up() {
  if ip netns list | grep -qw "^$ns"; then
    return
  fi
  ip netns add "$ns"
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
  ip netns exec "$ns" ip addr add "$host" dev "$tap"
  ip netns exec "$ns" ip link set "$tap" up
  echo "namespace $ns: $tap at $host; the shell will be ${addr%/*}"
}

down() {
  if ip netns list | grep -qw "^$ns"; then
    ip netns del "$ns"
    echo "namespace $ns removed"
  fi
}

case "${1:-}" in
  up) need_root "$@"; up ;;
  down) need_root "$@"; down ;;
  run)
    shift
    need_root run
    up
    # Build outside the namespace (it has no route to the package registry).
    cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p net-shell --features std
    # The host's side of the tap is this machine: protected mode trusts it, as Redis trusts
    # loopback (pass --trusted-network again, or --requirepass, to change that).
    exec ip netns exec "$ns" "${CARGO_TARGET_DIR:-$root/target}/release/net-shell" --tap "$tap" --address "$addr" \
      --trusted-network "${host%/*}/32" "$@"
    ;;
  exec)
    shift
    need_root exec
    exec ip netns exec "$ns" "$@"
    ;;
  *)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
