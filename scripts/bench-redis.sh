#!/usr/bin/env bash
# net-shell (over a tap, in its own namespace) against redis-server (on loopback), measured in
# one run with the same parameters: redis-benchmark throughput, how late keys are removed after
# their deadline when 100,000 expire within one second, how late `expired` keyspace events are
# published (scripts/event_lateness.py), how late a BLPOP's timeout is answered
# (scripts/blpop_lateness.py), CPU use while idle, and (through
# scripts/bench-scale.py) throughput, memory, latency and idle closes at 10,000 clients.
# Needs root, redis-server, redis-benchmark, python3. All traffic stays on loopback or inside
# the namespace this script creates and removes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
ns=nsh-bench-$$
tap=benchtap0
shell_ip=10.79.0.2
redis_port=16379
idle_s=${IDLE_SECONDS:-10}

cleanup() {
  [ -n "${shell_pid:-}" ] && kill "$shell_pid" 2>/dev/null || true
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT

cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p net-shell --features std

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip tuntap add dev "$tap" mode tap
ip netns exec "$ns" ip addr add 10.79.0.1/24 dev "$tap"
ip netns exec "$ns" ip link set "$tap" up
ip netns exec "$ns" "$target/release/net-shell" --tap "$tap" --address "$shell_ip/24" \
  --trusted-network 10.79.0.1/32 --log-level warn > /tmp/net-shell-bench.out &
shell_pid=$!
for _ in $(seq 100); do grep -q ready /tmp/net-shell-bench.out && break; sleep 0.1; done
grep -q ready /tmp/net-shell-bench.out
# The shell is a child of `ip netns exec`: find its own pid for CPU accounting.
shell_cpu_pid=$(pgrep -f "release/net-shell --tap $tap" | head -1)

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --loglevel warning > /tmp/redis-bench.out &
redis_pid=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
idle_cpu() {
  local pid=$1 before after hz
  hz=$(getconf CLK_TCK)
  before=$(cpu_ticks "$pid"); sleep "$idle_s"; after=$(cpu_ticks "$pid")
  python3 -c "print(f'{($after - $before) / $hz / $idle_s * 100:.3f}')"
}

echo "## idle CPU over ${idle_s}s (percent of one core)"
echo "net-shell $(idle_cpu "$shell_cpu_pid")"
echo "redis-server $(idle_cpu "$redis_pid")"

run_bench() {
  local label=$1; shift
  "$@" -c 50 -n 100000 -t set,get -q 2>/dev/null | tr '\r' '\n' | grep 'requests per second' | sed "s/^/$label /"
}
echo "## redis-benchmark -c 50 -n 100000 -t set,get"
run_bench "net-shell" ip netns exec "$ns" redis-benchmark -h "$shell_ip" -p 6379
run_bench "redis-server" redis-benchmark -h 127.0.0.1 -p "$redis_port"
echo "## redis-benchmark -c 50 -n 100000 -t lpush,lpop (one list of up to 100,000 elements)"
run_list_bench() {
  local label=$1; shift
  "$@" -c 50 -n 100000 -t lpush,lpop -q 2>/dev/null | tr '\r' '\n' | grep 'requests per second' | sed "s/^/$label /"
}
run_list_bench "net-shell" ip netns exec "$ns" redis-benchmark -h "$shell_ip" -p 6379
run_list_bench "redis-server" redis-benchmark -h 127.0.0.1 -p "$redis_port"
echo "## redis-benchmark -c 50 -n 100000 -t hset, then HGET (one hash)"
run_hash_bench() {
  local label=$1; shift
  { "$@" -c 50 -n 100000 -t hset -q; "$@" -c 50 -n 100000 -q HGET myhash element:__rand_int__; } \
    2>/dev/null | tr '\r' '\n' | grep 'requests per second' | sed "s/^/$label /"
}
run_hash_bench "net-shell" ip netns exec "$ns" redis-benchmark -h "$shell_ip" -p 6379
run_hash_bench "redis-server" redis-benchmark -h 127.0.0.1 -p "$redis_port"
echo "## redis-benchmark -c 50 -n 100000 -r 100000 -t hset, then HGET of random fields (one hash of up to 100,000 fields)"
run_big_hash_bench() {
  local label=$1; shift
  { "$@" -c 50 -n 100000 -r 100000 -t hset -q; "$@" -c 50 -n 100000 -r 100000 -q HGET myhash element:__rand_int__; } \
    2>/dev/null | tr '\r' '\n' | grep 'requests per second' | sed "s/^/$label /"
}
ip netns exec "$ns" redis-cli -h "$shell_ip" DEL myhash >/dev/null
redis-cli -p "$redis_port" DEL myhash >/dev/null
run_big_hash_bench "net-shell" ip netns exec "$ns" redis-benchmark -h "$shell_ip" -p 6379
run_big_hash_bench "redis-server" redis-benchmark -h 127.0.0.1 -p "$redis_port"
echo "## redis-benchmark -c 50 -n 100000 -t set,get -P 16"
run_bench "net-shell" ip netns exec "$ns" redis-benchmark -h "$shell_ip" -p 6379 -P 16
run_bench "redis-server" redis-benchmark -h 127.0.0.1 -p "$redis_port" -P 16

echo "## expiry lateness, 100000 keys due within one second"
echo "net-shell:"; ip netns exec "$ns" python3 "$root/scripts/expiry_lateness.py" "$shell_ip" 6379 100000
echo "redis-server:"; python3 "$root/scripts/expiry_lateness.py" 127.0.0.1 "$redis_port" 100000

echo "## keyspace expired events: lateness after each key's deadline, 1000 keys due within one second"
echo "net-shell:"; ip netns exec "$ns" python3 "$root/scripts/event_lateness.py" "$shell_ip" 6379 1000
echo "redis-server:"; python3 "$root/scripts/event_lateness.py" 127.0.0.1 "$redis_port" 1000

echo "## BLPOP timeout lateness: 200 clients, timeouts spread over 50-545 ms"
echo "net-shell:"; ip netns exec "$ns" python3 "$root/scripts/blpop_lateness.py" "$shell_ip" 6379 200
echo "redis-server:"; python3 "$root/scripts/blpop_lateness.py" 127.0.0.1 "$redis_port" 200

echo "## hash field expiry lateness, 2000 fields due within one second (net-shell only: Redis 7.0 has no per-field TTL)"
echo "net-shell:"; ip netns exec "$ns" python3 "$root/scripts/field_expiry_lateness.py" "$shell_ip" 6379 2000

echo "## 10,000 clients (scripts/bench-scale.py)"
python3 "$root/scripts/bench-scale.py" --binary "$target/release/net-shell"
