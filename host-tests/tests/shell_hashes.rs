//! Hashes over the simulated network, where Redis cannot be the judge: `HRANDFIELD`'s random
//! draws (distinct fields of the hash for a positive count, fields of the hash with repeats for
//! a negative one). Byte-for-byte agreement with Redis (every deterministic reply) is in
//! `redis_diff`.

use host_tests::sim::{Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

fn bulks(reply: Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Reply::Bulk(bytes) => bytes,
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn hrandfield_draws_fields_of_the_hash() {
    let mut buffers = ServerBuffers::default();
    let mut sim: Sim<4, 16, 65536> = Sim::new(&mut buffers, Timeouts::DEFAULT);
    let c = sim.connect_ready();
    let fields: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let mut args = vec!["HSET".to_string(), "h".to_string()];
    for f in &fields {
        args.extend([f.clone(), format!("v{f}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(sim.request(c, &args), Reply::Int(10));
    let is_field = |bytes: &[u8]| fields.iter().any(|f| f.as_bytes() == bytes);
    let mut seen = std::collections::BTreeSet::new();
    for round in 0..50 {
        sim.advance(1 + round % 3);
        let Reply::Bulk(one) = sim.request(c, &["HRANDFIELD", "h"]) else {
            panic!("HRANDFIELD h");
        };
        assert!(is_field(&one));
        seen.insert(one);
        // Distinct, in the hash's order.
        let some = bulks(sim.request(c, &["HRANDFIELD", "h", "4"]));
        assert_eq!(some.len(), 4);
        let positions: Vec<usize> = some
            .iter()
            .map(|f| {
                fields
                    .iter()
                    .position(|x| x.as_bytes() == f.as_slice())
                    .unwrap()
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        // With repeats.
        let many = bulks(sim.request(c, &["HRANDFIELD", "h", "-25"]));
        assert_eq!(many.len(), 25);
        assert!(many.iter().all(|f| is_field(f)));
        let pairs = bulks(sim.request(c, &["HRANDFIELD", "h", "-3", "WITHVALUES"]));
        assert_eq!(pairs.len(), 6);
        for pair in pairs.chunks(2) {
            assert_eq!(pair[1], [b"v".as_slice(), &pair[0]].concat());
        }
    }
    assert!(seen.len() > 3, "one field drawn over and over: {seen:?}");
    assert_eq!(
        sim.request(c, &["HRANDFIELD", "h", "-9223372036854775807"]),
        Reply::error("ERR reply too large")
    );
}
