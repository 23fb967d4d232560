#!/usr/bin/env bash
# Bytes per hash field with a time to live in net-shell: the resident set size (RSS, from /proc)
# after HASHES hashes of FIELDS fields each are written (`HSET`), then after every field is
# given a deadline an hour away (`HPEXPIRE … FIELDS n …`), and the bytes per field that follow
# (RSS growth over the fields). Beside Valkey's published 16-29 bytes per field; Redis 7.0 has
# no per-field TTL to measure here. The shell runs on a tap inside a network namespace this
# script creates and removes; commands go through `redis-cli --pipe`, so every count is exact.
#
# Needs root, redis-cli, python3. Environment: HASHES (default 1000), FIELDS (default 100).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ns=nsh-fttl-$$
tap=fttltap0
shell_ip=10.82.0.2
hashes=${HASHES:-1000}
fields=${FIELDS:-100}
out=$(mktemp -d)

cleanup() {
  if [ -n "${shell_pid:-}" ]; then kill "$shell_pid" 2>/dev/null || true; wait "$shell_pid" 2>/dev/null || true; fi
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT

cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p net-shell --features std

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
ip netns exec "$ns" ip addr add 10.82.0.1/24 dev "$tap"
ip netns exec "$ns" ip link set "$tap" up
inns() { ip netns exec "$ns" "$@"; }

ip netns exec "$ns" "$target/release/net-shell" --tap "$tap" --address "$shell_ip/24" \
  --trusted-network 10.82.0.1/32 --log-level warn > "$out/shell.out" &
shell_pid=$!
for _ in $(seq 100); do grep -q ready "$out/shell.out" && break; sleep 0.1; done
grep -q ready "$out/shell.out"
inns redis-cli -h "$shell_ip" ping >/dev/null

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$shell_pid/status"; }

# commands WHAT: the RESP commands for every hash, HSET (fields) or HPEXPIRE (deadlines).
commands() {
  python3 - "$1" "$hashes" "$fields" <<'PY'
import sys
what, hashes, fields = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = sys.stdout.buffer
def command(*args):
    b = [b"*%d\r\n" % len(args)]
    for a in args:
        a = str(a).encode()
        b.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(b)
names = ["field:%d" % j for j in range(fields)]
for i in range(hashes):
    key = "hash:%d" % i
    if what == "HSET":
        args = ["HSET", key]
        for name in names:
            args += [name, "v"]
    else:
        args = ["HPEXPIRE", key, 3_600_000, "FIELDS", fields] + names
    out.write(command(*args))
PY
}

run() {
  commands "$1" > "$out/cmds"
  inns redis-cli -h "$shell_ip" --pipe < "$out/cmds" > "$out/pipe" 2>&1 || { cat "$out/pipe"; exit 1; }
  grep -q 'errors: 0' "$out/pipe" || { echo "net-shell refused commands:"; cat "$out/pipe"; exit 1; }
}

sleep 0.5
empty=$(rss_kb)
run HSET
without=$(rss_kb)
run HPEXPIRE
with=$(rss_kb)
ttl=$(inns redis-cli -h "$shell_ip" hpttl hash:0 FIELDS 1 field:0)
[ "$ttl" -gt 3000000 ] || { echo "no deadline on hash:0 field:0 ($ttl)"; exit 1; }
python3 - "$hashes" "$fields" "$empty" "$without" "$with" <<'PY'
import sys
h, f, empty, without, with_ttl = map(int, sys.argv[1:])
n = h * f
print(f"## RSS of net-shell, {h:,} hashes of {f} fields ({n:,} fields)")
print()
print("| state | RSS (MB) | B/field over the empty server |")
print("|---|--:|--:|")
print(f"| empty | {empty/1000:.1f} | |")
print(f"| fields, no TTL | {without/1000:.1f} | {(without-empty)*1024/n:.1f} |")
print(f"| every field with a TTL | {with_ttl/1000:.1f} | {(with_ttl-empty)*1024/n:.1f} |")
print()
print(f"Bytes per field for its TTL: {(with_ttl-without)*1024/n:.1f} (Valkey 9 publishes 16-29).")
PY
