#!/usr/bin/env python3
"""redis-py (8.x) with its default configuration against a server: RESP3 (`HELLO 3`),
pipelines as MULTI/EXEC transactions, WATCH, CONFIG GET as a dict, INFO and CLIENT LIST
parsed, pub/sub and a keyspace `expired` event. Prints one line per check; the test runs it
against redis-server and against net-shell and compares the lines.

usage: redis_py_check.py HOST PORT
"""
import sys
import time

import redis

host, port = sys.argv[1], int(sys.argv[2])
r = redis.Redis(host=host, port=port, socket_timeout=10)  # otherwise redis-py's defaults
conn = r.connection_pool.get_connection()
print("protocol", conn.protocol)
r.connection_pool.release(conn)
r.flushall()
print("set", r.set("k", "v"), "get", r.get("k"), "missing", r.get("nope"))
print("mget", r.mget("k", "nope"))
pipe = r.pipeline()  # a MULTI/EXEC transaction by default
pipe.set("n", 1).incr("n").incrby("n", 5).get("n")
print("pipeline", pipe.execute())
with r.pipeline() as pipe:
    pipe.watch("n")
    current = int(pipe.get("n"))
    pipe.multi()
    pipe.set("n", current * 2)
    print("watched", pipe.execute())
print("config", list(r.config_get("maxclients").keys()))
info = r.info()
print("info", type(info).__name__, "redis_version" in info, info.get("connected_clients", 0) >= 1)
print("client_list", len(r.client_list()) >= 1)
r.config_set("notify-keyspace-events", "Ex")
p = r.pubsub()
p.subscribe("news", "__keyevent@0__:expired")
deadline = time.time() + 10  # bounded
subscribed = 0
while subscribed < 2 and time.time() < deadline:
    m = p.get_message(timeout=1)
    if m and m["type"] == "subscribe":
        subscribed += 1
print("subscribed", subscribed)
print("publish", r.publish("news", "hello"))
r.set("soon", "x", px=50)
got = []
while len(got) < 2 and time.time() < deadline:
    m = p.get_message(timeout=1)
    if m and m["type"] == "message":
        got.append((m["channel"], m["data"]))
print("messages", got)
r.config_set("notify-keyspace-events", "")
p.close()
print("ttl", r.ttl("k"), r.ttl("nope"))
