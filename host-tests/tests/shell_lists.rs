//! Lists over the simulated network, where Redis cannot be the judge: the store's limits
//! (`maxmemory`, the largest value) refuse a push with Redis' texts and lose nothing, a list's
//! bytes count in `used_memory`, and a list lives in the same key table as strings (its TTL,
//! `DBSIZE`). Byte-for-byte agreement with Redis is in `redis_diff`.

use host_tests::sim::{info_field, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|i| Reply::bulk(i)).collect())
}

#[test]
fn a_push_past_maxmemory_is_refused_and_the_list_kept() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let dataset = |sim: &mut Sim<4, 16, 65536>| {
        let info = sim.request(c, &["INFO", "memory"]).text();
        info_field(&info, "used_memory_dataset")
    };
    let empty = dataset(&mut sim);
    assert_eq!(sim.request(c, &["RPUSH", "l", "a", "b"]), Reply::Int(2));
    let two = dataset(&mut sim);
    assert!(two > empty, "a list's bytes count: {empty} then {two}");
    let limit = (two + 2_000).to_string();
    assert_eq!(
        sim.request(c, &["CONFIG", "SET", "maxmemory", &limit]),
        Reply::ok()
    );
    // Push 400-byte elements until the store refuses one (a few fit under the limit).
    let element = "x".repeat(400);
    let mut len = 2;
    while len < 12 {
        match sim.request(c, &["RPUSH", "l", &element]) {
            Reply::Int(n) => len = n,
            refused => {
                assert_eq!(refused, Reply::error(OOM));
                break;
            }
        }
    }
    assert!((3..12).contains(&len), "{len} elements before the limit");
    let before = sim.request(c, &["LRANGE", "l", "0", "-1"]);
    for args in [
        &["RPUSH", "l", &element][..],
        &["LPUSH", "l", &element],
        &["LINSERT", "l", "BEFORE", "a", &element],
        &[
            "LPUSH", "other", &element, &element, &element, &element, &element,
        ],
    ] {
        assert_eq!(sim.request(c, args), Reply::error(OOM), "{:?}", &args[..2]);
    }
    assert_eq!(sim.request(c, &["LRANGE", "l", "0", "-1"]), before);
    assert_eq!(sim.request(c, &["EXISTS", "other"]), Reply::Int(0));
    // Popping frees the bytes, and the push fits again.
    assert_eq!(sim.request(c, &["RPOP", "l"]), Reply::bulk(&element));
    assert_eq!(sim.request(c, &["RPUSH", "l", &element]), Reply::Int(len));
    assert_eq!(
        sim.request(c, &["LRANGE", "l", "0", "1"]),
        bulks(&["a", "b"])
    );
}

#[test]
fn a_list_over_the_largest_value_is_refused_with_its_limit() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let max = sim.server.store().max_value_len();
    let half = "y".repeat(max / 2);
    assert_eq!(sim.request(c, &["RPUSH", "l", &half]), Reply::Int(1));
    assert_eq!(
        sim.request(c, &["RPUSH", "l", &half]),
        Reply::error(&format!("ERR value is too large (max {max} bytes)"))
    );
    assert_eq!(sim.request(c, &["LLEN", "l"]), Reply::Int(1));
}

#[test]
fn a_list_expires_on_time_like_any_key() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::new(0, 10_000, 10_000));
    let c = sim.connect_ready();
    assert_eq!(sim.request(c, &["RPUSH", "l", "a"]), Reply::Int(1));
    assert_eq!(sim.request(c, &["PEXPIRE", "l", "100"]), Reply::Int(1));
    let deadline = sim.now + 100;
    // Pushes keep the time to live, as in Redis.
    assert_eq!(sim.request(c, &["LPUSH", "l", "b"]), Reply::Int(2));
    assert!(matches!(
        sim.request(c, &["PTTL", "l"]),
        Reply::Int(1..=100)
    ));
    let gone = sim.run_until_store_len(0, 1_000).expect("the list expires");
    assert_eq!(
        gone,
        deadline + 1,
        "removed the millisecond after its deadline"
    );
    assert_eq!(sim.request(c, &["LLEN", "l"]), Reply::Int(0));
}
