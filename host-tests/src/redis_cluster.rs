//! A real Redis Cluster on loopback for differential tests: Debian's `redis-server` with
//! `cluster-enabled yes`, joined by `redis-cli --cluster create`, each node killed on drop.

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::e2e::KillOnDrop;
use crate::redis_diff::RedisConnection;
use crate::reply::Value;
use crate::sim::encode;

/// Masters of one Redis Cluster on 127.0.0.1, slots spread by `redis-cli --cluster create`.
pub struct RedisCluster {
    // Field order matters: the servers die before their directory goes.
    nodes: Vec<KillOnDrop>,
    ports: Vec<u16>,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts `count` masters (at least 3, as `redis-cli --cluster create` wants) and waits up
    /// to 30 s until every one says `cluster_state:ok`.
    ///
    /// # Errors
    ///
    /// When a server cannot start, the cluster cannot be created, or it never comes up.
    pub fn start(count: usize) -> Result<Self, String> {
        // One directory per cluster: tests of one binary run at once, each with its own.
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("redis-cluster-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut cluster = Self {
            nodes: Vec::new(),
            ports: Vec::new(),
            dir,
        };
        for _ in 0..count {
            let port = port_with_bus()?;
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--cluster-enabled", "yes", "--cluster-config-file"])
                .arg(cluster.dir.join(format!("nodes-{port}.conf")))
                .arg("--dir")
                .arg(&cluster.dir)
                .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start redis-server: {e}"))?;
            cluster.nodes.push(KillOnDrop::new(child));
            cluster.ports.push(port);
            cluster.wait(port, |reply| reply == b"+PONG\r\n", &[b"PING"])?;
        }
        let output = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(cluster.ports.iter().map(|p| format!("127.0.0.1:{p}")))
            .arg("--cluster-yes")
            .output()
            .map_err(|e| format!("cannot run redis-cli: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "redis-cli --cluster create: {}",
                String::from_utf8_lossy(&output.stdout)
            ));
        }
        for &port in &cluster.ports {
            let ok = |reply: &[u8]| reply.windows(16).any(|w| w == b"cluster_state:ok");
            cluster.wait(port, ok, &[b"CLUSTER", b"INFO"])?;
        }
        Ok(cluster)
    }

    /// Sends `request` to the node at `port` every 50 ms until `done` accepts the reply, for up
    /// to 30 s.
    fn wait(
        &self,
        port: u16,
        done: impl Fn(&[u8]) -> bool,
        request: &[&[u8]],
    ) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(mut conn) = RedisConnection::open(port) {
                if let Ok(replies) = conn.exchange(&[encode(request)], 1) {
                    if done(&replies[0]) {
                        return Ok(());
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "redis-server on port {port}: no answer to {request:?} within 30 s"
        ))
    }

    /// The nodes' ports, on 127.0.0.1.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// The id of node `i` and the cluster's topology in Kvrocks' `CLUSTERX SETNODES` text
    /// (`<id> <ip> <port> master - <slots>...`, one line per master), read from its
    /// `CLUSTER NODES`: what a controller would push to a shell standing in for node `i`.
    ///
    /// # Errors
    ///
    /// When the node does not answer, or its answer cannot be read.
    pub fn topology_as_kvrocks(&self, i: usize) -> Result<(String, String), String> {
        let mut conn = RedisConnection::open(self.ports[i])?;
        let reply = conn.exchange(&[encode(&[b"CLUSTER", b"NODES"])], 1)?;
        let text = match Value::decode(&reply[0]) {
            Some((Value::Bulk(Some(text)), _)) => String::from_utf8_lossy(&text).into_owned(),
            _ => return Err("CLUSTER NODES is not a bulk string".into()),
        };
        let mut me = None;
        let mut lines = Vec::new();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let [id, address, flags, _master, _ping, _pong, _epoch, _link, slots @ ..] =
                &fields[..]
            else {
                return Err(format!("CLUSTER NODES line {line:?}"));
            };
            let (ip, rest) = address.split_once(':').ok_or("no port")?;
            let port = rest.split(['@', ',']).next().unwrap_or_default();
            if flags.contains("myself") {
                me = Some(id.to_string());
            }
            lines.push(format!("{id} {ip} {port} master - {}", slots.join(" ")));
        }
        Ok((me.ok_or("no myself in CLUSTER NODES")?, lines.join("\n")))
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free on 127.0.0.1 whose cluster bus port (10,000 above) is free too.
fn port_with_bus() -> Result<u16, String> {
    for _ in 0..200 {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if TcpListener::bind((Ipv4Addr::LOCALHOST, bus)).is_ok() {
            return Ok(port);
        }
    }
    Err("no port with a free bus port".into())
}
