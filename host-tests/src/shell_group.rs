//! Several `net-shell`s on one Linux bridge, in a network namespace the test creates: the
//! setting for the tests of several shells as one keyspace (behind a proxy, or as a cluster).
//!
//! The namespace holds a bridge with the host's address and one tap per shell, each shell with
//! its own address and MAC. Clients (redis-cli, Python, a proxy) run inside the namespace with
//! [`ShellGroup::command`]. Everything is removed on drop, also when a test fails.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::e2e::{self, KillOnDrop, Namespace};

/// The bridge's name inside the namespace.
const BRIDGE: &str = "shells0";

/// Shells on a bridge in their own namespace.
pub struct ShellGroup {
    // Field order matters: the processes die before their namespace goes.
    shells: Vec<KillOnDrop>,
    addresses: Vec<String>,
    host: String,
    namespace: Namespace,
}

impl ShellGroup {
    /// Starts `count` shells (at most 200) built at `binary` in namespace `name`, on network
    /// `10.<net>.0.0/24`: the bridge (where clients run) is `.1`, shell `i` is `.(2 + i)`. Each
    /// shell gets `extra(i)` after its network flags; protected mode trusts the whole subnet, so
    /// the shells may also be each other's clients.
    ///
    /// # Errors
    ///
    /// The failing `ip` command, or a shell that printed no ready line.
    pub fn start(
        name: &str,
        net: u8,
        count: usize,
        binary: &Path,
        extra: impl Fn(usize) -> Vec<String>,
    ) -> Result<Self, String> {
        if count > 200 {
            return Err(format!("{count} shells: at most 200 fit in one /24"));
        }
        let namespace = Namespace::create_empty(name)?;
        let host = format!("10.{net}.0.1");
        let subnet = format!("10.{net}.0.0/24");
        namespace.ip(&["link", "add", BRIDGE, "type", "bridge"])?;
        namespace.ip(&["addr", "add", &format!("{host}/24"), "dev", BRIDGE])?;
        namespace.ip(&["link", "set", BRIDGE, "up"])?;
        let mut group = Self {
            shells: Vec::with_capacity(count),
            addresses: Vec::with_capacity(count),
            host,
            namespace,
        };
        for i in 0..count {
            let tap = format!("shtap{i}");
            group
                .namespace
                .ip(&["tuntap", "add", "dev", &tap, "mode", "tap"])?;
            group
                .namespace
                .ip(&["link", "set", &tap, "master", BRIDGE])?;
            group.namespace.ip(&["link", "set", &tap, "up"])?;
            let address = format!("10.{net}.0.{}", 2 + i);
            let mac = format!("02:00:00:{net:02x}:00:{:02x}", 2 + i);
            let mut args = vec![
                "--tap".to_string(),
                tap,
                "--address".to_string(),
                format!("{address}/24"),
                "--mac".to_string(),
                mac,
                "--trusted-network".to_string(),
                subnet.clone(),
                "--log-level".to_string(),
                "warn".to_string(),
            ];
            args.extend(extra(i));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (process, ready) =
                e2e::start_net_shell(&group.namespace, binary, &args, Stdio::inherit())?;
            if !ready.contains(&address) {
                return Err(format!("shell {i} is not at {address}: {ready}"));
            }
            group.shells.push(process);
            group.addresses.push(address);
        }
        Ok(group)
    }

    /// The shells' addresses, in order.
    pub fn addresses(&self) -> &[String] {
        &self.addresses
    }

    /// The host's address on the bridge, where clients run.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// A command running `program` inside the namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        self.namespace.command(program)
    }

    /// Runs one `redis-cli` command against shell `i` (port 6379) and returns its output,
    /// trimmed.
    ///
    /// # Panics
    ///
    /// If redis-cli cannot run or fails.
    pub fn cli(&self, i: usize, args: &[&str]) -> String {
        e2e::stdout_of(
            self.command("redis-cli")
                .args(["-h", &self.addresses[i], "-p", "6379"])
                .args(args),
        )
        .trim()
        .to_string()
    }

    /// The shell processes, e.g. to see whether one has died.
    pub fn processes(&mut self) -> &mut [KillOnDrop] {
        &mut self.shells
    }
}
