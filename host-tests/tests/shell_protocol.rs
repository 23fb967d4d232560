//! The wire protocol over the simulated network: pipelining, commands split across segments at
//! every byte, inline commands, malformed and oversized requests.

use host_tests::sim;
use host_tests::sim::{encode_str, Reply, Sim};
use net_shell::{ServerBuffers, Timeouts};

type Small<'m> = Sim<'m, 4, 256, 65536>;

fn sim(buffers: &mut ServerBuffers) -> Small<'_> {
    Sim::new(buffers, Timeouts::DEFAULT)
}

#[test]
fn pipelined_commands_in_one_send_replied_in_order() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let mut bytes = Vec::new();
    let mut expected = Vec::new();
    for i in 0..200 {
        let key = format!("key{i}");
        let value = format!("value{i}");
        bytes.extend(encode_str(&["SET", &key, &value]));
        expected.push(Reply::ok());
        bytes.extend(encode_str(&["GET", &key]));
        expected.push(Reply::bulk(&value));
        bytes.extend(encode_str(&["INCR", "counter"]));
        expected.push(Reply::Int(i + 1));
    }
    assert!(bytes.len() > 8 * 2048, "more than the server's window");
    let start = sim.now;
    sim.send(c, &bytes);
    let replies = sim.wait_replies(c, expected.len(), start + 1_000);
    assert_eq!(replies.len(), expected.len());
    if let Some(i) = (0..replies.len()).find(|&i| replies[i] != expected[i]) {
        panic!("reply {i}: {:?}, expected {:?}", replies[i], expected[i]);
    }
    assert_eq!(
        sim.now, start,
        "a pipeline over a lossless link takes no time"
    );
    assert_eq!(sim.request(c, &["DBSIZE"]), Reply::Int(201));
}

/// A multibulk and an inline request, cut in two at every byte: no reply until the last byte,
/// then exactly one.
#[test]
fn command_split_at_every_byte_boundary_parses_the_same() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let requests: [(&[u8], Reply); 4] = [
        (&encode_str(&["SET", "split", "a value"]), Reply::ok()),
        (b"SET inline \"a b\\tc\"\r\n", Reply::ok()),
        (&encode_str(&["GET", "split"]), Reply::bulk("a value")),
        (b"GET inline\n", Reply::bulk("a b\tc")),
    ];
    for (request, reply) in &requests {
        for cut in 1..request.len() {
            sim.send(c, &request[..cut]);
            assert!(
                sim.replies(c).is_empty(),
                "replied to {:?}",
                String::from_utf8_lossy(&request[..cut])
            );
            sim.send(c, &request[cut..]);
            assert_eq!(sim.replies(c), vec![reply.clone()], "cut at {cut}");
        }
    }
    assert!(sim.is_open(c));
}

#[test]
fn command_arriving_one_byte_per_segment_is_served() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let mut bytes = encode_str(&["SET", "k", "v", "EX", "100"]);
    bytes.extend(encode_str(&["GET", "k"]));
    bytes.extend(b"PING\r\n");
    for byte in &bytes {
        sim.send(c, &[*byte]);
    }
    assert_eq!(
        sim.replies(c),
        vec![Reply::ok(), Reply::bulk("v"), Reply::simple("PONG")]
    );
}

#[test]
fn inline_commands_are_served() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.send(c, b"PING\r\n");
    assert_eq!(sim.replies(c), vec![Reply::simple("PONG")]);
    sim.send(c, b"PING\n");
    assert_eq!(sim.replies(c), vec![Reply::simple("PONG")]);
    sim.send(c, b"\r\n\n  \r\n");
    assert!(sim.replies(c).is_empty(), "empty lines are skipped");
    sim.send(c, b"*0\r\n*-1\r\n");
    assert!(
        sim.replies(c).is_empty(),
        "empty multibulk requests are skipped"
    );
    sim.send(c, b"set greeting \"hello world\"\r\nGET greeting\r\n");
    assert_eq!(
        sim.replies(c),
        vec![Reply::ok(), Reply::bulk("hello world")]
    );
    sim.send(c, b"SET bin \"\\x41\\x00\\n\" EX 10\r\n");
    assert_eq!(sim.replies(c), vec![Reply::ok()]);
    assert_eq!(
        sim.request(c, &["GET", "bin"]),
        Reply::Bulk(b"A\x00\n".to_vec())
    );
    sim.send(c, b"SET single 'it\\'s'\r\n");
    assert_eq!(sim.replies(c), vec![Reply::ok()]);
    assert_eq!(sim.request(c, &["GET", "single"]), Reply::bulk("it's"));
    // Inline and multibulk mixed in one segment.
    let mut mixed = b"INCR n\r\n".to_vec();
    mixed.extend(encode_str(&["INCR", "n"]));
    mixed.extend(b"TTL bin\r\n");
    sim.send(c, &mixed);
    assert_eq!(
        sim.replies(c),
        vec![Reply::Int(1), Reply::Int(2), Reply::Int(10)]
    );
}

/// Each malformed request gets Redis' protocol error and the connection is closed, without
/// running what follows it; another client goes on being served throughout.
#[test]
fn malformed_request_answered_with_protocol_error_and_closed() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let bystander = sim.connect_ready();
    let cases: [(&[u8], &str); 7] = [
        (b"*2\r\n$x\r\n", "ERR Protocol error: invalid bulk length"),
        // Redis 7 takes a count up to INT_MAX (and waits for the arguments).
        (
            b"*2147483648\r\n",
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*1\r\n+PING\r\n",
            "ERR Protocol error: expected '$', got '+'",
        ),
        (b"*1\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"),
        (b"*x\r\n", "ERR Protocol error: invalid multibulk length"),
        (
            b"SET k \"unbalanced\r\n",
            "ERR Protocol error: unbalanced quotes in request",
        ),
        (
            b"*1\r\n$99999999999\r\n",
            "ERR Protocol error: invalid bulk length",
        ),
    ];
    for (n, (bad, error)) in cases.iter().enumerate() {
        let c = sim.connect_ready();
        let mut bytes = bad.to_vec();
        bytes.extend(encode_str(&["SET", "after-error", "ran"]));
        sim.send(c, &bytes);
        assert_eq!(
            sim.replies(c),
            vec![Reply::error(error)],
            "{:?}",
            String::from_utf8_lossy(bad)
        );
        assert!(sim.closed_by_server(c));
        sim.close(c);
        assert_eq!(sim.stats().protocol_error_closes, n as u64 + 1);
        assert_eq!(
            sim.request(bystander, &["EXISTS", "after-error"]),
            Reply::Int(0)
        );
        assert_eq!(sim.request(bystander, &["PING"]), Reply::simple("PONG"));
    }
    assert_eq!(sim.stats().connected_clients, 1);
}

/// Requests longer than the input buffer (2 KiB) grow it (the `alloc` feature, on in these
/// tests) and are served; an inline request past Redis' 64 KiB gets Redis' error and the
/// connection is closed, the other client unaffected.
#[test]
fn request_larger_than_input_buffer_grows_it_and_is_served() {
    // Values up to 8 KiB.
    let store = net_shell::store::Store::new(
        net_shell::store::StoreMemory::allocate(256, 65536),
        sim::MAX_KEY,
        8192,
    );
    let mut buffers = ServerBuffers::default();
    let mut sim: Small = Sim::with(
        &mut buffers,
        sim::config(Timeouts::DEFAULT),
        sim::SizedStore(store),
    );
    let bystander = sim.connect_ready();
    let input = sim::default_buffers().input;
    let c = sim.connect_ready();
    for (n, value) in ["x".repeat(input - 8), "y".repeat(input + 1)]
        .iter()
        .enumerate()
    {
        assert_eq!(
            sim.request(c, &["SET", "k", value]),
            Reply::ok(),
            "case {n}"
        );
        assert_eq!(
            sim.request(c, &["GET", "k"]),
            Reply::bulk(value),
            "case {n}"
        );
    }
    // An inline line that ends within 64 KiB is a request...
    let mut inline = b"ECHO ".to_vec();
    inline.extend(vec![b'a'; 60_000]);
    inline.extend(b"\r\n");
    sim.send(c, &inline);
    assert_eq!(sim.replies(c), vec![Reply::bulk(&"a".repeat(60_000))]);
    // ... one that does not is refused, as by Redis.
    let long = sim.connect_ready();
    sim.send(long, &vec![b'a'; 70_000]);
    assert_eq!(
        sim.replies(long),
        vec![Reply::error("ERR Protocol error: too big inline request")]
    );
    assert!(sim.closed_by_server(long));
    assert_eq!(sim.request(bystander, &["EXISTS", "k"]), Reply::Int(1));
    assert_eq!(sim.stats().protocol_error_closes, 1);
}

/// The largest request the input buffer holds exactly is served.
#[test]
fn request_filling_the_input_buffer_exactly_is_served() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let input = sim::default_buffers().input;
    let arg = (input - 32..input)
        .map(|n| "e".repeat(n))
        .find(|arg| encode_str(&["ECHO", arg]).len() == input)
        .unwrap();
    let request = encode_str(&["ECHO", &arg]);
    sim.send(c, &request);
    assert_eq!(sim.replies(c), vec![Reply::bulk(&arg)]);
    assert!(sim.is_open(c));
}

/// A client that sends a pipeline and then its FIN (`nc -q`, a script's stdin ending) still
/// gets every reply, even when the replies are larger than the send buffer; then the server
/// closes.
#[test]
fn half_closed_client_gets_every_pipelined_reply() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    let value = "x".repeat(1000);
    assert_eq!(sim.request(c, &["SET", "big", &value]), Reply::ok());
    let mut pipeline = sim::encode_str(&["GET", "big"]).repeat(30);
    pipeline.extend(encode_str(&["INCR", "n"]));
    sim.queue(c, &pipeline);
    sim.close(c);
    let start = sim.now;
    let replies = sim.wait_replies(c, 31, start + 10_000);
    assert_eq!(replies.len(), 31);
    assert!(replies[..30].iter().all(|r| *r == Reply::bulk(&value)));
    assert_eq!(replies[30], Reply::Int(1));
    sim.settle();
    assert_eq!(sim.stats().connected_clients, 0);
    assert_eq!(sim.server.open_connections(), 0);
}

/// A FIN after half a command: nothing to answer, the server closes at once.
#[test]
fn half_closed_client_with_half_a_command_is_closed() {
    let mut buffers = ServerBuffers::default();
    let mut sim = sim(&mut buffers);
    let c = sim.connect_ready();
    sim.queue(c, b"*2\r\n$3\r\nGET\r\n$1\r\n");
    sim.close(c);
    assert!(sim.replies(c).is_empty());
    assert!(sim.closed_by_server(c));
    assert_eq!(sim.stats().connected_clients, 0);
}
