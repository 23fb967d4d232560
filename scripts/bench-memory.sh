#!/usr/bin/env bash
# Memory of net-shell and redis-server holding the same keys, measured in one run: resident set
# size (RSS, from /proc) of each server when empty and after 10,000, 100,000 and 1,000,000 keys
# (`SET key:N <value>`, optionally `EX 3600`), with 16- and 100-byte values, and the bytes per
# key that follow from it; then after deleting nine keys in ten (every key but key:N with N a
# multiple of 10, so that every part of the table keeps keys), and after deleting the rest:
# what each server gives back. Both servers run inside a network namespace this script creates and
# removes: net-shell on a tap, redis-server on the namespace's loopback. Keys are written through
# `redis-cli --pipe` from scripts/memory_fill.py, so every count is exact.
#
# With LATENCY=1 it also measures `SET` latency (redis-benchmark percentiles) while net-shell's
# key table grows from 0 to 1,000,000 keys and then at a steady 1,000,000 keys.
#
# Needs root, redis-server, redis-cli, redis-benchmark, python3. Environment: SHELL_ARGS (extra
# net-shell flags), POINTS (key counts, default "10000 100000 1000000"), VALUES ("16 100").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ns=nsh-mem-$$
tap=memtap0
shell_ip=10.81.0.2
redis_port=16380
points=${POINTS:-10000 100000 1000000}
values=${VALUES:-16 100}
out=$(mktemp -d)

cleanup() {
  stop_servers
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$out"
}
stop_servers() {
  if [ -n "${shell_pid:-}" ]; then kill "$shell_pid" 2>/dev/null || true; wait "$shell_pid" 2>/dev/null || true; fi
  if [ -n "${redis_pid:-}" ]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
  shell_pid=; redis_pid=
}
trap cleanup EXIT

cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p net-shell --features std

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
ip netns exec "$ns" ip addr add 10.81.0.1/24 dev "$tap"
ip netns exec "$ns" ip link set "$tap" up
inns() { ip netns exec "$ns" "$@"; }

start_servers() {
  # `ip netns exec` runs the server itself (exec), so $! is the server's pid.
  # shellcheck disable=SC2086
  ip netns exec "$ns" "$target/release/net-shell" --tap "$tap" --address "$shell_ip/24" \
    --trusted-network 10.81.0.1/32 --log-level warn ${SHELL_ARGS:-} > "$out/shell.out" &
  shell_pid=$!
  ip netns exec "$ns" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' \
    --appendonly no --daemonize no --loglevel warning > "$out/redis.out" &
  redis_pid=$!
  for _ in $(seq 100); do grep -q ready "$out/shell.out" && break; sleep 0.1; done
  grep -q ready "$out/shell.out"
  for _ in $(seq 100); do inns redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  inns redis-cli -h "$shell_ip" ping >/dev/null
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
dbsize() { inns redis-cli "$@" dbsize; }

# delete TO KEEP_EVERY: deletes keys 0..TO-1 from both servers, but those whose number is a
# multiple of KEEP_EVERY (0: none kept).
delete() {
  python3 - "$1" "$2" > "$out/cmds" <<'EOF'
import sys
to, every = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
chunk = []
for n in range(to):
    if every and n % every == 0:
        continue
    chunk.append(b"*2\r\n$3\r\nDEL\r\n$16\r\nkey:%012d\r\n" % n)
    if len(chunk) == 10000:
        out.write(b"".join(chunk))
        chunk.clear()
out.write(b"".join(chunk))
EOF
  inns redis-cli -h "$shell_ip" --pipe < "$out/cmds" > "$out/pipe-shell" 2>&1 || { cat "$out/pipe-shell"; exit 1; }
  inns redis-cli -p "$redis_port" --pipe < "$out/cmds" > "$out/pipe-redis" 2>&1 || { cat "$out/pipe-redis"; exit 1; }
}

# row VALUE_LEN TTL WHAT KEYS: one row of the table, with RSS now.
row() {
  python3 - "$1" "$2" "$3" "$4" "$(rss_kb "$shell_pid")" "$(rss_kb "$redis_pid")" "$shell_empty" "$redis_empty" <<'EOF'
import sys
l, t, what, n, s, r, s0, r0 = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:])
per = f"{(s-s0)*1024/n:.0f} | {(r-r0)*1024/n:.0f}" if n else " | "
print(f"| {l} | {t} | {what}{n:,} | {s/1000:.1f} | {r/1000:.1f} | {s/r:.2f} | {per} |")
EOF
}

# fill FROM TO VALUE_LEN TTL: writes keys FROM..TO-1 to both servers.
fill() {
  local from=$1 to=$2 len=$3 ttl=$4
  python3 "$root/scripts/memory_fill.py" "$from" "$to" "$len" "$ttl" > "$out/cmds"
  inns redis-cli -h "$shell_ip" --pipe < "$out/cmds" > "$out/pipe-shell" 2>&1 || { cat "$out/pipe-shell"; exit 1; }
  inns redis-cli -p "$redis_port" --pipe < "$out/cmds" > "$out/pipe-redis" 2>&1 || { cat "$out/pipe-redis"; exit 1; }
  grep -q 'errors: 0' "$out/pipe-shell" || { echo "net-shell refused writes:"; cat "$out/pipe-shell"; exit 1; }
}

echo "## RSS, net-shell and redis-server $(redis-server --version | grep -o 'v=[0-9.]*') in one namespace, $(date -u +%Y-%m-%d)"
echo "net-shell flags: ${SHELL_ARGS:-(defaults)}"
echo
echo "| value | TTL | keys | net-shell RSS (MB) | redis-server RSS (MB) | ratio | net-shell B/key | redis B/key |"
echo "|--:|---|--:|--:|--:|--:|--:|--:|"
for len in $values; do
  for ttl in no yes; do
    start_servers
    sleep 0.5
    shell_empty=$(rss_kb "$shell_pid"); redis_empty=$(rss_kb "$redis_pid")
    row "$len" "$ttl" "" 0
    have=0
    for n in $points; do
      fill "$have" "$n" "$len" "$ttl"
      have=$n
      got_shell=$(dbsize -h "$shell_ip"); got_redis=$(dbsize -p "$redis_port")
      if [ "$got_shell" != "$n" ] || [ "$got_redis" != "$n" ]; then
        echo "expected $n keys, net-shell has $got_shell, redis-server $got_redis"; exit 1
      fi
      row "$len" "$ttl" "" "$n"
    done
    # Nine keys in ten deleted, spread over the whole table; then the rest.
    delete "$have" 10
    left=$(( (have + 9) / 10 ))
    got_shell=$(dbsize -h "$shell_ip"); got_redis=$(dbsize -p "$redis_port")
    if [ "$got_shell" != "$left" ] || [ "$got_redis" != "$left" ]; then
      echo "expected $left keys, net-shell has $got_shell, redis-server $got_redis"; exit 1
    fi
    sleep 1
    row "$len" "$ttl" "9 in 10 deleted: " "$left"
    delete "$have" 0
    [ "$(dbsize -h "$shell_ip")" = 0 ] && [ "$(dbsize -p "$redis_port")" = 0 ]
    sleep 1
    row "$len" "$ttl" "all deleted: " 0
    stop_servers
  done
done
echo
echo "B/key: RSS above the empty server's, divided by the keys. Values are ${values// /- and }-byte; keys are key:N."

if [ "${LATENCY:-0}" = 1 ]; then
  echo
  echo "## SET latency, redis-benchmark -c 50 -P 1 -n 1000000 (ms)"
  echo "| server | phase | p50 | p99 | p99.9 |"
  echo "|---|---|--:|--:|--:|"
  bench_set() {
    # SET key:__rand_int__ with -r over a keyspace of 1,000,000 draws keys at random: 1,000,000
    # writes into an empty server leave about 632,000 keys (the line says how many).
    inns redis-benchmark "$@" -c 50 -n 1000000 -r 1000000 -d 16 -t set --csv 2>/dev/null |
      python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
head, row = rows[0], rows[1]
cols = dict(zip(head, row))
print(cols["p50_latency_ms"], cols["p99_latency_ms"], cols.get("p99.9_latency_ms", cols["max_latency_ms"]))'
  }
  start_servers
  shell_args=(-h "$shell_ip"); redis_args=(-p "$redis_port")
  read -r p50 p99 p999 < <(bench_set "${shell_args[@]}")
  grown=$(dbsize -h "$shell_ip")
  echo "| net-shell | growing from 0 to $grown keys | $p50 | $p99 | $p999 |"
  read -r p50 p99 p999 < <(bench_set "${redis_args[@]}")
  grown=$(dbsize -p "$redis_port")
  echo "| redis-server | growing from 0 to $grown keys | $p50 | $p99 | $p999 |"
  fill 0 1000000 16 no
  read -r p50 p99 p999 < <(bench_set "${shell_args[@]}")
  echo "| net-shell | steady at 1,000,000 keys | $p50 | $p99 | $p999 |"
  read -r p50 p99 p999 < <(bench_set "${redis_args[@]}")
  echo "| redis-server | steady at 1,000,000 keys | $p50 | $p99 | $p999 |"
  echo
  echo "Load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
  stop_servers
fi
