#!/usr/bin/env bash
# Three shells as one keyspace against three redis-servers as one, in one run with the same
# parameters: `redis-benchmark --cluster` against three net-shells in cluster mode (each on its
# own tap, on one bridge, the topology pushed with CLUSTERX as a controller would) and against a
# three-node Redis Cluster on loopback (redis-cli --cluster create), both inside a namespace
# this script creates and removes; the time to move a third of the slots holding 10,000 keys
# with TTLs (CLUSTERX MIGRATE while redis-py writes; redis-cli --cluster reshard); then the same
# keys through twemproxy (nutcracker) in front of three shells in standalone mode.
# Needs root, redis-server, redis-cli, redis-benchmark, nutcracker, python3 with redis-py. No
# traffic leaves the namespace.
#
# usage: scripts/bench-cluster.sh   (REQUESTS=300000 CLIENTS=50 to change the load)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ns=nsh-cbench-$$
requests=${REQUESTS:-300000}
clients=${CLIENTS:-50}
work=$(mktemp -d)
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p net-shell --features std
in_ns() { ip netns exec "$ns" "$@"; }

ip netns add "$ns"
in_ns ip link set lo up
in_ns ip link add br0 type bridge
in_ns ip addr add 10.83.0.1/24 dev br0
in_ns ip link set br0 up
hosts=()
# Starts the shells, with cluster mode as $1 (yes or no).
start_shells() {
  hosts=()
  for i in 0 1 2; do
    local ip=10.83.0.$((2 + i))
    in_ns ip tuntap add dev "cbtap$i" mode tap 2>/dev/null || true
    in_ns ip link set "cbtap$i" master br0
    in_ns ip link set "cbtap$i" up
    # Not through in_ns: `$!` must be the shell itself (ip netns exec execs it), not a subshell.
    ip netns exec "$ns" "$root/target/release/net-shell" --tap "cbtap$i" --address "$ip/24" \
      --mac "02:00:00:83:00:0$((2 + i))" --trusted-network 10.83.0.0/24 --log-level warn \
      --cluster-enabled "$1" > "$work/shell$i.out" &
    pids+=($!)
    for _ in $(seq 100); do grep -qs ready "$work/shell$i.out" && break; sleep 0.1; done
    grep -q ready "$work/shell$i.out"
    hosts+=("$ip")
  done
}
stop_shells() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

start_shells yes
nodes=""
for i in 0 1 2; do
  id=$(printf '%040x' $((i + 1)))
  nodes+="$id ${hosts[$i]} 6379 master - $((16384 * i / 3))-$((16384 * (i + 1) / 3 - 1))"$'\n'
  in_ns redis-cli -h "${hosts[$i]}" CLUSTERX SETNODEID "$id" > /dev/null
done
for host in "${hosts[@]}"; do in_ns redis-cli -h "$host" CLUSTERX SETNODES "$nodes" 1 > /dev/null; done

ports=(17101 17102 17103)
for port in "${ports[@]}"; do
  ip netns exec "$ns" redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "$work/nodes-$port.conf" --dir "$work" --save '' --appendonly no \
    --loglevel warning > /dev/null &
  pids+=($!)
done
for port in "${ports[@]}"; do
  for _ in $(seq 100); do in_ns redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
done
in_ns redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-yes > /dev/null
for _ in $(seq 100); do
  in_ns redis-cli -p "${ports[0]}" cluster info | grep -q cluster_state:ok && break; sleep 0.1
done

run_bench() {
  local label=$1; shift
  in_ns "$@" -c "$clients" -n "$requests" -r 100000 -t set,get -q 2>/dev/null | tr '\r' '\n' |
    grep 'requests per second' | sed "s/^/$label /"
}
echo "## redis-benchmark --cluster -c $clients -n $requests -r 100000 -t set,get"
run_bench "net-shell x3 (taps)" redis-benchmark --cluster -h "${hosts[0]}" -p 6379
run_bench "redis-server x3 (loopback)" redis-benchmark --cluster -h 127.0.0.1 -p "${ports[0]}"
echo "## redis-benchmark --cluster -c $clients -n $requests -r 100000 -t set,get -P 16"
run_bench "net-shell x3 (taps)" redis-benchmark --cluster -h "${hosts[0]}" -p 6379 -P 16
run_bench "redis-server x3 (loopback)" redis-benchmark --cluster -h 127.0.0.1 -p "${ports[0]}" -P 16
for i in 0 1 2; do
  echo "net-shell ${hosts[$i]}: $(in_ns redis-cli -h "${hosts[$i]}" DBSIZE) keys"
done

echo "## moving slots 0-5460 holding 10,000 keys with TTLs to another node"
for host in "${hosts[@]}"; do in_ns redis-cli -h "$host" FLUSHALL > /dev/null; done
echo "net-shell x3: CLUSTERX MIGRATE while redis-py writes (host-tests/scripts/migration_check.py):"
in_ns python3 "$root/host-tests/scripts/migration_check.py" 10000 "${hosts[@]}" 2>&1 |
  grep -E "^moved|^FAIL" || true
in_ns redis-cli -p "${ports[0]}" FLUSHALL > /dev/null
# 10,000 keys of node 1's slots (0-5460 after --cluster create), with TTLs, no client writing.
python3 -c '
import binascii
n = found = 0
while found < 10000:
    key = f"k:{n}".encode()
    n += 1
    if binascii.crc_hqx(key, 0) % 16384 <= 5460:
        print(f"SET {key.decode()} v PX {60000 + n % 10000}")
        found += 1
' > "$work/fill.txt"
in_ns redis-cli -c -p "${ports[0]}" < "$work/fill.txt" > /dev/null
from=$(in_ns redis-cli -p "${ports[0]}" CLUSTER MYID)
to=$(in_ns redis-cli -p "${ports[1]}" CLUSTER MYID)
held=$(in_ns redis-cli -p "${ports[0]}" DBSIZE)
began=$(date +%s%N)
in_ns redis-cli --cluster reshard "127.0.0.1:${ports[0]}" --cluster-from "$from" \
  --cluster-to "$to" --cluster-slots 5461 --cluster-yes > /dev/null
took=$(( ($(date +%s%N) - began) / 1000000 ))
echo "redis-server x3: redis-cli --cluster reshard, 5461 slots, $held keys: $took ms;" \
  "node 1 holds $(in_ns redis-cli -p "${ports[0]}" DBSIZE) keys after"

echo "## twemproxy (nutcracker 0.5.0) in front of three shells, standalone mode"
stop_shells
start_shells no
cat > "$work/nutcracker.yml" <<EOF
shells:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  redis: true
  auto_eject_hosts: false
  servers:
$(for i in 0 1 2; do echo "    - ${hosts[$i]}:6379:1 shell$i"; done)
EOF
ip netns exec "$ns" nutcracker -c "$work/nutcracker.yml" -o "$work/nutcracker.log" &
pids+=($!)
for _ in $(seq 100); do in_ns redis-cli -p 22121 set probe x > /dev/null 2>&1 && break; sleep 0.1; done
run_bench "nutcracker -> net-shell x3, -r 100000" redis-benchmark -h 127.0.0.1 -p 22121
run_bench "nutcracker -> net-shell x3, -r 100000 -P 16" redis-benchmark -h 127.0.0.1 -p 22121 -P 16
