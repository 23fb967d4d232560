//! Cluster mode on the simulated network, in simulated time: what a node answers while it
//! moves a slot away to a node that never answers (so every key stays here): keys still here
//! are served, keys not here get `-ASK`, a request over both gets `-TRYAGAIN`; `ASKING` lets a
//! request for another node's slot through once, if that slot is on its way here (`CLUSTER
//! IMPORT`); and after 10 s without a connection the migration fails and the node serves its
//! slots again.

use host_tests::sim::{self, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Node<'m> = Sim<'m, 4, 256, 65536>;

/// This node's id, and the other's (at an address of the simulated network nobody answers).
const ME: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const OTHER: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

#[test]
fn a_slot_moving_to_a_silent_node_asks_for_keys_gone_then_fails_and_serves_again() {
    let mut buffers = ServerBuffers::default();
    let mut config = sim::config(Timeouts::new(0, 10_000, 10_000));
    config.cluster_enabled = true;
    let mut node: Node = Sim::with(&mut buffers, config, sim::store());
    node.server.set_unix_time(node.now, 1_700_000_000_000);
    let c = node.connect_ready();
    let topology =
        format!("{ME} 10.0.0.1 6379 master - 0-8191\n{OTHER} 10.0.0.3 6379 master - 8192-16383");
    assert_eq!(node.request(c, &["CLUSTERX", "SETNODEID", ME]), Reply::ok());
    assert_eq!(
        node.request(c, &["CLUSTERX", "SETNODES", &topology, "1"]),
        Reply::ok()
    );
    // "bar" is slot 5061, this node's; "foo" slot 12182, the other's.
    assert_eq!(node.request(c, &["SET", "{bar}here", "1"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379")
    );
    // ASKING lets a request through only for a slot on its way here, as in Redis.
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "not importing"
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "0"]),
        Reply::ok()
    );
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(node.request(c, &["GET", "foo"]), Reply::Nil);
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "ASKING holds for one command"
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "7"]),
        Reply::error("ERR Invalid import state")
    );
    assert_eq!(
        node.request(c, &["CLUSTER", "IMPORT", "12000-12999", "2"]),
        Reply::ok()
    );
    assert_eq!(node.request(c, &["ASKING"]), Reply::ok());
    assert_eq!(
        node.request(c, &["GET", "foo"]),
        Reply::error("MOVED 12182 10.0.0.3:6379"),
        "the import failed"
    );

    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::ok()
    );
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "5061", OTHER]),
        Reply::error("ERR There is already a migrating job")
    );
    assert_eq!(node.request(c, &["GET", "{bar}here"]), Reply::bulk("1"));
    assert_eq!(
        node.request(c, &["GET", "{bar}gone"]),
        Reply::error("ASK 5061 10.0.0.3:6379")
    );
    assert_eq!(
        node.request(c, &["SET", "{bar}new", "1"]),
        Reply::error("ASK 5061 10.0.0.3:6379"),
        "a new key of a moving slot goes to the new owner"
    );
    assert_eq!(
        node.request(c, &["EXISTS", "{bar}here", "{bar}gone"]),
        Reply::error("TRYAGAIN Multiple keys request during rehashing of slot")
    );
    assert_eq!(
        node.request(c, &["SET", "{bar}here", "2"]),
        Reply::ok(),
        "a key not yet sent is written here"
    );
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_slot: 5061\r\n"), "{info}");
    assert!(
        info.contains(&format!("destination_node: {OTHER}\r\n")),
        "{info}"
    );
    assert!(info.contains("migrating_state: start\r\n"), "{info}");

    // Nobody answers at 10.0.0.3: after 10 s the migration gives up.
    node.advance(10_500);
    let info = node.request(c, &["CLUSTER", "INFO"]).text();
    assert!(info.contains("migrating_state: fail\r\n"), "{info}");
    assert_eq!(node.request(c, &["GET", "{bar}gone"]), Reply::Nil);
    assert_eq!(node.request(c, &["GET", "{bar}here"]), Reply::bulk("2"));
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "12182", OTHER]),
        Reply::error("ERR Can't migrate slot which doesn't belong to me")
    );
    assert_eq!(
        node.request(c, &["CLUSTERX", "MIGRATE", "0-100", ME]),
        Reply::error("ERR Can't migrate slot to myself")
    );
}
