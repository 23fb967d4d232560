//! Differential test: the same scripts against Debian's `redis-server` (7.0) and net-shell in
//! the simulated network, every reply compared byte for byte (raw RESP), intended differences
//! marked step by step (see [`Difference`] for the list and the reasons).
//!
//! `#[ignore]`d (it needs `redis-server`): `cargo test -- --include-ignored` runs it, as
//! `scripts/check.sh` does, and a missing `redis-server` fails it.

use std::time::Instant;

use host_tests::e2e::{have, missing};
use host_tests::property::{self, Cases, Draw};
use host_tests::redis_diff::{
    run_scripts, words, Difference, RedisServer, Request, Script, Shell, Step, Tally,
};
use net_shell::ServerBuffers;
use rand::Rng;

use Difference as D;

/// Overflow at both ends, and the numbers around them.
const I64_MAX: &str = "9223372036854775807";
const I64_MIN: &str = "-9223372036854775808";

fn strings() -> Vec<Script> {
    vec![
        Script::new("get and set").run(&[
            "GET k",
            "SET k v",
            "GET k",
            "SET k \"\"",
            "GET k",
            "SET \"\" empty-key",
            "GET \"\"",
            "SET \"a b\" \"\\x00\\xff\\r\\n\"",
            "GET \"a b\"",
            "get k",
            "sEt k V",
            "GET k",
        ]),
        Script::new("set options").run(&[
            "SET k v NX",
            "SET k w NX",
            "GET k",
            "SET z v XX",
            "EXISTS z",
            "SET k w xx",
            "SET k x GET",
            "SET new 1 GET",
            "SET k y NX GET",
            "SET none y XX GET",
            "EXISTS none",
            "SET k v NX NX",
            "SET k v GET GET",
            "SET k v NX XX",
            "SET k v XX NX",
            "SET k v KEEPTTL EX 10",
            "SET k v EX 10 KEEPTTL",
            "SET k v EX 10 PX 10",
            "SET k v EX 10 EX 20",
            "TTL k",
            "SET k v PX 10 EXAT 10",
            "SET k v EX",
            "SET k v BOGUS",
            "SET k v EX ten",
            "SET k v EX 0",
            "SET k v EX -1",
            "SET k v PX 0",
            "SET k v EXAT 0",
            "SET k v PXAT -5",
            "SET k v KEEPTTL KEEPTTL",
            "SET k v PERSIST",
            "SET k v EX 9223372036854775",
            "SET k v EX 9223372036854776",
            "SET k v EX 9223372036854775807",
            "SET k v PX 9223372036854775807",
            "SET k v PX 9223371036854775807",
            "SET k v PX 9223370000000000000",
            "TTL k",
            "SET k v PXAT 9223372036854775807",
            "EXPIRETIME k",
            "PEXPIRETIME k",
            "SET k v EXAT 1",
            "EXISTS k",
            "SET k v PXAT 100 GET",
            "GET k",
        ]),
        Script::new("set keepttl").run(&[
            "SET t 1 EX 100",
            "SET t 2 KEEPTTL",
            "TTL t",
            "SET t 3 GET KEEPTTL",
            "TTL t",
            "SET t 4",
            "TTL t",
            "SET t 5 PX 300000",
            "SET t 6 EX 7",
            "TTL t",
        ]),
        Script::new("setex psetex").run(&[
            "SETEX a 10 v",
            "TTL a",
            "GET a",
            "PSETEX b 15000 w",
            "TTL b",
            "SETEX c 0 v",
            "SETEX c -1 v",
            "PSETEX c 0 v",
            "SETEX c 9223372036854775807 v",
            "SETEX c 9223372036854775 v",
            "PSETEX c 9223372036854775807 v",
            "SETEX c soon v",
            "EXISTS c",
            "SETEX c 10",
            "PSETEX c",
        ]),
        Script::new("getdel getex").run(&[
            "GETDEL k",
            "SET k v EX 10",
            "GETDEL k",
            "GETDEL k",
            "EXISTS k",
            "GETEX missing EX 5",
            "GETEX missing EX 0",
            "GETEX missing EX abc",
            "GETEX missing BOGUS",
            "SET k v EX 100",
            "GETEX k",
            "TTL k",
            "GETEX k EX 10",
            "TTL k",
            "GETEX k PERSIST",
            "TTL k",
            "GETEX k EX 0",
            "GETEX k EX -3",
            "GETEX k EX abc",
            "GETEX k EX 10 PX 10",
            "GETEX k EX 10 EX 20",
            "TTL k",
            "GETEX k PERSIST EX 10",
            "GETEX k EX",
            "GETEX k NX",
            "GETEX k KEEPTTL",
            "GETEX k EX 9223372036854775807",
            "GETEX k PX 9223371036854775807",
            "GETEX k EXAT 1",
            "EXISTS k",
            "SET k v",
            "GETEX k PXAT 9223372036854775807",
            "PEXPIRETIME k",
        ]),
        Script::new("incr decr").run(&[
            "INCR n",
            "INCRBY n 10",
            "DECR n",
            "DECRBY n 3",
            "INCRBY n -17",
            "DECRBY fresh 5",
            "GET n",
            "SET n abc",
            "INCR n",
            "SET n \" 1\"",
            "INCR n",
            "SET n 01",
            "INCR n",
            "SET n -0",
            "INCR n",
            "SET n 1.5",
            "INCR n",
            "SET n 99999999999999999999",
            "INCR n",
            &format!("SET n {I64_MAX}"),
            "INCR n",
            "DECR n",
            "INCRBY n 1",
            &format!("SET n {I64_MIN}"),
            "DECR n",
            "INCRBY n -1",
            "INCR n",
            "SET m 0",
            &format!("DECRBY m {I64_MIN}"),
            &format!("INCRBY m {I64_MIN}"),
            &format!("INCRBY m {I64_MAX}"),
            "INCRBY m x",
            "DECRBY m 1.0",
            "INCRBY m 9223372036854775808",
            "SET t 5 EX 100",
            "INCR t",
            "TTL t",
            "INCR",
            "INCRBY n",
        ]),
    ]
}

fn more_strings() -> Vec<Script> {
    vec![
        Script::new("mget mset msetnx").run(&[
            "MGET a b",
            "MSET a 1 b 2",
            "MGET a b c a",
            "MSET a",
            "MSET a 1 b",
            "MSETNX a 1 c 3",
            "EXISTS c",
            "MSETNX c 3 d 4",
            "MGET a b c d",
            "MSETNX c",
            "MSET a 1 a 2",
            "GET a",
            "SET t v EX 100",
            "MSET t w",
            "TTL t",
            "MGET",
            "MSET",
        ]),
        Script::new("setnx getset").run(&[
            "SETNX k v",
            "SETNX k w",
            "GET k",
            "GETSET k x",
            "GETSET nokey y",
            "GET nokey",
            "SET t v EX 100",
            "GETSET t w",
            "TTL t",
            "SETNX k",
            "GETSET k",
        ]),
        Script::new("strlen append").run(&[
            "STRLEN nokey",
            "APPEND k hello",
            "APPEND k \" world\"",
            "GET k",
            "STRLEN k",
            "APPEND k ''",
            "SET n 12",
            "APPEND n 3",
            "INCR n",
            "SET t v EX 100",
            "APPEND t w",
            "TTL t",
            "APPEND \"\" x",
            "APPEND k",
            "STRLEN",
        ]),
        Script::new("getrange substr").run(&[
            "GETRANGE nokey 0 -1",
            "SET k \"This is a string\"",
            "GETRANGE k 0 3",
            "GETRANGE k -3 -1",
            "GETRANGE k 0 -1",
            "GETRANGE k 10 100",
            "GETRANGE k 5 3",
            "GETRANGE k -1 -5",
            "GETRANGE k -100 -50",
            "GETRANGE k -100 2",
            "GETRANGE k 100 200",
            "GETRANGE k 9223372036854775807 -9223372036854775808",
            "GETRANGE k -9223372036854775808 9223372036854775807",
            "GETRANGE k a 1",
            "GETRANGE k 0 1.5",
            "SUBSTR k 0 3",
            "SUBSTR k -6 -1",
            "SET e \"\"",
            "GETRANGE e 0 -1",
            "GETRANGE e -1 0",
            "GETRANGE k 0",
        ]),
        Script::new("setrange")
            .run(&[
                "SETRANGE k 6 Redis",
                "GET k",
                "SET k \"Hello World\"",
                "SETRANGE k 6 Redis",
                "GET k",
                "SETRANGE k 20 !",
                "GET k",
                "SETRANGE k 0 ''",
                "SETRANGE nokey 5 ''",
                "EXISTS nokey",
                "SETRANGE k -1 x",
                "SETRANGE k x x",
                "SETRANGE k 536870912 x",
                "SETRANGE k 9223372036854775807 x",
                "SET t v EX 100",
                "SETRANGE t 1 w",
                "TTL t",
                "SETRANGE k 1",
            ])
            .differs(
                D::ValueLimit,
                &["SETRANGE k 100000 x", "APPEND k2 x", "SETRANGE k2 2000 x"],
            ),
    ]
}

fn bitmaps_and_floats() -> Vec<Script> {
    vec![
        Script::new("setbit getbit")
            .run(&[
                "GETBIT nokey 0",
                "SETBIT b 7 1",
                "GET b",
                "GETBIT b 7",
                "GETBIT b 6",
                "GETBIT b 100",
                "SETBIT b 7 0",
                "SETBIT b 7 0",
                "SETBIT b 20 1",
                "STRLEN b",
                "GET b",
                "SETBIT b 7 2",
                "SETBIT b 7 -1",
                "SETBIT b 7 x",
                "SETBIT b -1 1",
                "SETBIT b x 1",
                "SETBIT b 4294967296 1",
                "GETBIT b -1",
                "GETBIT b 4294967296",
                "GETBIT b 9223372036854775807",
                "SET t v EX 100",
                "SETBIT t 0 1",
                "TTL t",
                "SETBIT b 1",
                "GETBIT b",
            ])
            .differs(D::ValueLimit, &["SETBIT big 100000 1"]),
        Script::new("bitcount bitpos").run(&[
            "BITCOUNT nokey",
            "BITCOUNT nokey x y",
            "SET s foobar",
            "BITCOUNT s",
            "BITCOUNT s 0 0",
            "BITCOUNT s 1 1",
            "BITCOUNT s 1 1 BYTE",
            "BITCOUNT s 5 30 BIT",
            "BITCOUNT s -2 -1",
            "BITCOUNT s -1 -2",
            "BITCOUNT s -100 100",
            "BITCOUNT s 0 -1 bit",
            "BITCOUNT s 1",
            "BITCOUNT s 0 -1 bogus",
            "BITCOUNT s x 1",
            "BITCOUNT s 1 x bogus",
            "BITCOUNT s 0 1 bit x",
            "SET e \"\"",
            "BITCOUNT e",
            "BITCOUNT e 0 -1",
            "BITPOS nokey 0",
            "BITPOS nokey 1",
            "BITPOS s 2",
            "BITPOS s x",
            "BITPOS s 1",
            "BITPOS s 0",
            "BITPOS s 1 2",
            "BITPOS s 1 2 -1",
            "BITPOS s 1 2 -1 bit",
            "BITPOS s 0 -3 -1 BYTE",
            "BITPOS s 1 7 15 BIT",
            "BITPOS s 1 100",
            "BITPOS s 1 2 1",
            "BITPOS s 0 1 1 bogus",
            "BITPOS s 0 1 x bogus",
            "BITPOS s 0 1 2 bit x",
            "SET ones \"\\xff\\xff\"",
            "BITPOS ones 0",
            "BITPOS ones 0 0 -1",
            "BITPOS ones 0 1",
            "BITPOS ones 1",
            "BITPOS ones 0 3 11 bit",
            "BITPOS e 0",
            "BITPOS e 1",
        ]),
        Script::new("bitop").run(&[
            "SET a \"\\x0f\\xf0\"",
            "SET b \"\\xff\"",
            "BITOP AND d a b",
            "GET d",
            "BITOP OR d a b",
            "GET d",
            "BITOP XOR d a b nokey",
            "GET d",
            "BITOP NOT d a",
            "GET d",
            "BITOP not d a b",
            "BITOP nand d a",
            "SET d v EX 100",
            "BITOP AND d nokey1 nokey2",
            "EXISTS d",
            "SET d v EX 100",
            "BITOP OR d a",
            "TTL d",
            "BITOP AND d a",
            "BITOP AND",
        ]),
        Script::new("lcs")
            .run(&[
                "LCS a b",
                "MSET key1 ohmytext key2 mynewtext",
                "LCS key1 key2",
                "LCS key1 key2 LEN",
                "LCS key1 key2 IDX",
                "LCS key1 key2 IDX MINMATCHLEN 4",
                "LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN",
                "LCS key1 key2 idx withmatchlen minmatchlen -5",
                "LCS key1 key2 LEN IDX",
                "LCS key1 key2 MINMATCHLEN",
                "LCS key1 key2 MINMATCHLEN x",
                "LCS key1 key2 BOGUS",
                "LCS key1 nokey",
                "LCS key1 nokey IDX",
                "LCS key1 key1 IDX WITHMATCHLEN",
                "MSET x abcbdab y bdcaba",
                "LCS x y",
                "LCS y x",
                "LCS x y IDX WITHMATCHLEN",
                "MSET p aaaa q aa",
                "LCS p q IDX",
                "LCS key1",
            ])
            .differs(D::ValueLimit, &["SET long 01234567890123456789012345678901234567890123456789012345678901234567890123456789", "LCS long long"]),
        Script::new("incrbyfloat")
            .run(&[
                "INCRBYFLOAT f 1.5",
                "INCRBYFLOAT f .5",
                "INCRBYFLOAT f 5.",
                "INCRBYFLOAT f +1",
                "INCRBYFLOAT f 1e3",
                "INCRBYFLOAT f -1008",
                "GET f",
                "SET m 10.50",
                "INCRBYFLOAT m 0.1",
                "INCRBYFLOAT m -5",
                "SET m 5.0e3",
                "INCRBYFLOAT m 2.0e2",
                "SET m 0.1",
                "INCRBYFLOAT m 0.2",
                "SET m 1e-20",
                "INCRBYFLOAT m 0",
                "SET m -0.0",
                "INCRBYFLOAT m 0",
                "SET m 12345678901234567890",
                "INCRBYFLOAT m 1",
                "INCRBYFLOAT m abc",
                "INCRBYFLOAT m ''",
                "INCRBYFLOAT m \" 1\"",
                "INCRBYFLOAT m \"1 \"",
                "INCRBYFLOAT m nan",
                "INCRBYFLOAT m inf",
                "INCRBYFLOAT m -inf",
                "SET x abc",
                "INCRBYFLOAT x 1",
                "SET t 1 EX 100",
                "INCRBYFLOAT t 1.5",
                "TTL t",
                "INCRBYFLOAT m",
            ])
            .differs(
                D::LongDouble,
                &["SET f 1008", "INCRBYFLOAT f 1E-2", "INCRBYFLOAT f 0.1"],
            ),
    ]
}

fn keys() -> Vec<Script> {
    vec![
        Script::new("del exists unlink").run(&[
            "SET a 1",
            "SET b 2",
            "EXISTS a b c",
            "EXISTS a a a",
            "DEL a c",
            "UNLINK b b",
            "EXISTS a b",
            "DEL",
            "UNLINK",
            "EXISTS",
        ]),
        Script::new("expire family").run(&[
            "EXPIRE k 10",
            "SET k v",
            "EXPIRE k 100",
            "TTL k",
            "EXPIRE k 50 NX",
            "EXPIRE k 50 XX",
            "TTL k",
            "EXPIRE k 40 GT",
            "EXPIRE k 60 GT",
            "TTL k",
            "EXPIRE k 70 LT",
            "EXPIRE k 30 LT",
            "TTL k",
            "EXPIRE k 10 NX XX",
            "EXPIRE k 10 GT LT",
            "EXPIRE k 10 NX GT",
            "EXPIRE k 10 xx gt",
            "EXPIRE k notanint BADOPT",
            "EXPIRE k 10 BADOPT",
            "EXPIRE k notanint",
            "EXPIRE k",
            "SET p v",
            "EXPIRE p 10 XX",
            "EXPIRE p 10 GT",
            "EXPIRE p 10 LT",
            "TTL p",
            "PERSIST p",
            "EXPIRE p 10 NX",
            "EXPIRE p 0",
            "EXISTS p",
            "SET p v",
            "EXPIRE p -5",
            "EXISTS p",
            "SET q v",
            "PEXPIRE q 100000",
            "TTL q",
            "PEXPIRE q -1",
            "EXISTS q",
            "SET e v",
            "EXPIRE e 9223372036854775807",
            "PEXPIRE e 9223372036854775807",
            "EXPIRE e 9223370399119966",
            "EXPIRE e 9223372036854775",
            "PEXPIRE e 9223370000000000000",
            "TTL e",
            "EXPIRE e -9223372036854775808",
            "EXPIRE e -9223372036854775",
            "EXISTS e",
        ]),
        Script::new("expireat family").run(&[
            "SET k v",
            "EXPIREAT k 1",
            "EXISTS k",
            "SET k v",
            "PEXPIREAT k 0",
            "EXISTS k",
            "SET k v",
            "EXPIREAT k -1",
            "EXISTS k",
            "SET k v",
            "EXPIREAT k 4102444800",
            "EXPIRETIME k",
            "PEXPIRETIME k",
            "TTL k",
            "EXPIREAT k 4102444801 GT",
            "EXPIRETIME k",
            "EXPIREAT k 4102444900 LT",
            "PEXPIREAT k 4102444800000 LT",
            "EXPIRETIME k",
            "PEXPIREAT k 9223372036854775807",
            "PEXPIRETIME k",
            "EXPIREAT k 9223372036854775",
            "EXPIREAT k 9223372036854776",
            "EXPIREAT k 9223372036854775807",
            "PEXPIREAT k -9223372036854775808",
            "EXISTS k",
            "EXPIREAT nokey 1",
            "EXPIREAT k x",
        ]),
        Script::new("ttl family")
            .run(&[
                "TTL nokey",
                "PTTL nokey",
                "EXPIRETIME nokey",
                "PEXPIRETIME nokey",
                "SET k v",
                "TTL k",
                "PTTL k",
                "EXPIRETIME k",
                "PEXPIRETIME k",
                "SET k v EX 100",
                "TTL k",
            ])
            .differs(D::Timing(20), &["PTTL k", "PEXPIRETIME k"])
            // TTL rounds to the nearest second (away from .5, where a millisecond decides).
            .run(&["SET k v PX 1600", "TTL k", "SET k v PX 1400", "TTL k"])
            .differs(D::Timing(20), &["PTTL k"]),
        Script::new("persist").run(&[
            "PERSIST nokey",
            "SET k v",
            "PERSIST k",
            "SET k v EX 100",
            "PERSIST k",
            "TTL k",
            "PERSIST k",
        ]),
        Script::new("type rename copy touch")
            .run(&[
                "TYPE nokey",
                "SET a 1",
                "TYPE a",
                "TOUCH a b a",
                "RENAME nokey x",
                "RENAMENX nokey x",
                "RENAME a a",
                "RENAMENX a a",
                "RENAME a b",
                "MGET a b",
                "SET c 3 EX 100",
                "RENAME c d",
                "TTL d",
                "EXISTS c",
                "RENAMENX d b",
                "RENAMENX d e",
                "TTL e",
                "RENAME e b",
                "GET b",
                "TTL b",
                "COPY b b",
                "COPY nokey x",
                "COPY b f",
                "TTL f",
                "COPY b f",
                "SET g 7",
                "COPY g f",
                "COPY g f REPLACE",
                "GET f",
                "TTL f",
                "COPY g h DB 0",
                "COPY g h2 db 0 replace",
                "COPY g h3 BOGUS",
                "COPY g h3 DB",
                "COPY g h3 DB x",
                "COPY g h3 DB 16",
                "COPY g h3 DB -1",
                "COPY g h3 DB 4294967296",
                "COPY g g DB 0",
                "RENAME a",
                "COPY a",
                "TYPE",
                "TOUCH",
            ])
            .differs(D::OneDatabase, &["COPY g h4 DB 1"]),
        Script::new("keys scan randomkey")
            .run(&[
                "KEYS *",
                "RANDOMKEY",
                "SCAN 0",
                "SET one 1",
                "RANDOMKEY",
                "KEYS *",
                "SCAN 0",
            ])
            .run(&[
                "MSET alpha 1 beta 2 gamma 3 \"\" empty h?llo 4 hello 5 hallo 6 \"a*b\" 7",
                "SET temp 8 PX 100",
            ])
            .differs(
                D::Unordered,
                &[
                    "KEYS *",
                    "KEYS h?llo",
                    "KEYS h[ae]llo",
                    "KEYS h[^e]llo",
                    "KEYS h\\?llo",
                    "KEYS a\\*b",
                    "KEYS *a",
                    "KEYS [a-c]*",
                    "KEYS nomatch",
                    "KEYS \"\"",
                ],
            )
            .scan_all("")
            .scan_all("COUNT 1")
            .scan_all("MATCH h*llo COUNT 2")
            .scan_all("TYPE string")
            .scan_all("TYPE hash")
            .scan_all("MATCH * COUNT 1000")
            .sleep(150)
            .scan_all("")
            .differs(D::Unordered, &["KEYS *"])
            .run(&[
                "SCAN x",
                "SCAN 0 COUNT 0",
                "SCAN 0 COUNT -1",
                "SCAN 0 COUNT x",
                "SCAN 0 MATCH",
                "SCAN 0 BOGUS 1",
                "SCAN",
                "KEYS",
                "RANDOMKEY x",
            ]),
        Script::new("object")
            .run(&[
                "OBJECT ENCODING nokey",
                "SET i 12345",
                "SET s short",
                "SET l \"a value longer than forty-four bytes, so Redis says raw\"",
                "SET n -1",
                "SET big 123456789012345678901",
                "OBJECT ENCODING i",
                "OBJECT ENCODING s",
                "OBJECT ENCODING l",
                "OBJECT ENCODING big",
                "OBJECT REFCOUNT i",
                "OBJECT REFCOUNT n",
                "OBJECT REFCOUNT s",
                "SET z 9999",
                "OBJECT REFCOUNT z",
                "SET z 10000",
                "OBJECT REFCOUNT z",
                "OBJECT IDLETIME s",
                "OBJECT FREQ s",
                "OBJECT FREQ nokey",
                "OBJECT REFCOUNT nokey",
                "OBJECT",
                "OBJECT ENCODING",
                "OBJECT NOSUCH k",
            ])
            .differs(D::HelpText, &["OBJECT HELP"]),
        Script::new("memory usage")
            .run(&[
                "MEMORY USAGE nokey",
                "MEMORY USAGE nokey SAMPLES 5",
                "MEMORY USAGE nokey SAMPLES",
                "MEMORY USAGE nokey samples x",
                "MEMORY USAGE nokey SAMPLES -1",
                "MEMORY USAGE nokey SAMPLES 9223372036854775808",
                "MEMORY USAGE nokey FOO 1",
                "MEMORY USAGE nokey SAMPLES 1 FOO",
                "MEMORY USAGE",
                "MEMORY",
                "MEMORY NOSUCH",
                "MEMORY usage",
                "MEMORY PURGE x",
                "SET s short",
                "SET t short PX 100000",
                "RPUSH l a b c",
                "HSET h f v g w",
                "MEMORY USAGE s SAMPLES",
                "MEMORY USAGE s SAMPLES -5",
                "MEMORY USAGE s SAMPLES 1 SAMPLES x",
                "MEMORY PURGE",
                "COMMAND INFO memory|usage memory|purge memory|help",
            ])
            .differs(
                D::KeyBytes,
                &[
                    "MEMORY USAGE s",
                    "MEMORY USAGE t",
                    "MEMORY USAGE l",
                    "MEMORY USAGE h SAMPLES 0",
                    "MEMORY usage s samples 2 SAMPLES 3",
                ],
            )
            .differs(D::CommandSubset, &["COMMAND INFO memory"])
            .differs(D::HelpText, &["MEMORY HELP"]),
        Script::new("expiry as time passes")
            .run(&[
                "SET a 1 PX 100",
                "SET b 2 EX 100",
                "PSETEX c 100 3",
                "GET a",
            ])
            .sleep(200)
            .run(&["GET a", "EXISTS a b c", "TTL a", "DBSIZE"]),
    ]
}

fn server() -> Vec<Script> {
    vec![
        Script::new("connection")
            .run(&[
                "PING",
                "PING hello",
                "PING a b",
                "ping",
                "ECHO hi",
                "ECHO",
                "ECHO a b",
                "SELECT 0",
                "SELECT -1",
                "SELECT 4294967296",
                "SELECT x",
                "SELECT",
                "AUTH pw",
                "AUTH default pw",
                "AUTH a b c",
                "AUTH",
            ])
            .differs(D::Clock, &["TIME"])
            .run(&["TIME x"]),
        Script::new("select")
            .differs(D::OneDatabase, &["SELECT 1", "SELECT 15"])
            .run(&["SELECT 16"]),
        Script::new("dbsize flush").run(&[
            "DBSIZE",
            "SET a 1",
            "SET b 2 EX 100",
            "DBSIZE",
            "FLUSHALL",
            "DBSIZE",
            "SET a 1",
            "FLUSHDB ASYNC",
            "DBSIZE",
            "FLUSHALL sync",
            "FLUSHALL a",
            "FLUSHALL a b",
            "FLUSHDB a b",
            "DBSIZE x",
        ]),
        Script::new("unknown and arity")
            .run(&[
                "NOSUCH",
                "NOSUCH a b",
                "\"\"",
                "GET",
                "GET a b",
                "SET k",
                "GETDEL",
                "GETEX",
                "DEL",
                "TTL",
                "TTL a b",
                "PTTL",
                "EXPIRETIME",
                "PEXPIRETIME a b",
                "PERSIST",
                "INCR",
                "DECR a b",
                "INCRBY a",
                "DECRBY a",
                "SETEX a 1",
                "PSETEX a",
                "EXPIRE a",
                "PEXPIRE a",
                "EXPIREAT a",
                "PEXPIREAT a",
                "FLUSHDB a b c",
                "CONFIG",
                "CONFIG GET",
                "CONFIG SET timeout",
                "CONFIG RESETSTAT x",
                "CONFIG NOSUCH",
                "CLIENT",
                "CLIENT NOSUCH",
                "CLIENT ID x",
                "COMMAND NOSUCH",
                "COMMAND COUNT x",
            ])
            .differs(D::CommandSubset, &["COMMAND INFO"]),
        Script::new("config")
            .run(&[
                "CONFIG GET timeout",
                "CONFIG GET TIMEOUT",
                "CONFIG GET nosuch",
                "CONFIG GET save",
                "CONFIG GET appendonly",
                "CONFIG SET timeout 0",
                "CONFIG SET nosuch 1",
                "CONFIG SET timeout abc",
                "CONFIG SET TIMEOUT -1",
                "CONFIG SET timeout 5 timeout 6",
                "CONFIG SET timeout 5 nosuch 1",
                "CONFIG SET timeout 5 maxclients",
                "CONFIG REWRITE",
                "CONFIG RESETSTAT",
                "CONFIG GET timeout",
            ])
            .differs(D::UnorderedPairs, &["CONFIG GET timeout save appendonly"])
            // A schedule is refused (Redis takes it: the next step puts its back); the values
            // the server has are taken, as Redis takes them.
            .differs(D::NoPersistence, &["CONFIG SET save \"900 1\""])
            .run(&["CONFIG SET appendonly no", "CONFIG SET save \"\""])
            .differs(D::HelpText, &["CONFIG HELP"]),
        Script::new("command table")
            .run(&[
                "COMMAND INFO get set getex del exists expire ttl incr flushall info",
                "COMMAND INFO nosuch GET",
                "COMMAND INFO config|get client|id command|count",
                "COMMAND INFO dbsize select auth hello ping echo quit",
                "COMMAND DOCS nosuch",
            ])
            .differs(
                D::CommandSubset,
                &[
                    "COMMAND COUNT",
                    "COMMAND INFO config",
                    "COMMAND INFO client",
                    "COMMAND INFO command",
                    "COMMAND",
                    "COMMAND LIST",
                ],
            )
            .differs(D::Docs, &["COMMAND DOCS get set config", "COMMAND DOCS"])
            .differs(D::HelpText, &["COMMAND HELP", "CLIENT HELP"]),
        Script::new("client")
            .differs(D::ClientId, &["CLIENT ID"])
            .differs(D::ClientSetinfo, &["CLIENT SETINFO lib-name redis-py"])
            .run(&[
                "CLIENT GETNAME",
                "CLIENT SETNAME \"a b\"",
                "CLIENT SETNAME \"a\\nb\"",
                "CLIENT SETNAME \"\\x80\"",
                "CLIENT SETNAME \"\\x7f\"",
                "CLIENT GETNAME",
                "CLIENT SETNAME my-app:1",
                "CLIENT GETNAME",
                "CLIENT SETNAME ''",
                "CLIENT GETNAME",
                "CLIENT SETNAME",
                "CLIENT SETNAME a b",
                "CLIENT GETNAME x",
                "HELLO 2 SETNAME \"a b\"",
                "CLIENT GETNAME",
                "HELLO 2 SETNAME x SETNAME",
            ])
            .differs(D::HelloNameOnSuccess, &["CLIENT GETNAME"])
            .differs(D::Handshake, &["HELLO 2 SETNAME from-hello"])
            .run(&["CLIENT GETNAME"])
            .differs(
                D::ValueLimit,
                &["CLIENT SETNAME a-name-longer-than-thirty-two-bytes"],
            ),
        Script::new("hello")
            .differs(
                D::Handshake,
                &["HELLO", "HELLO 2", "HELLO 2 AUTH default pw"],
            )
            .differs(D::Handshake, &["HELLO 3"])
            .run(&[
                "HELLO 4",
                "HELLO 1",
                "HELLO two",
                "HELLO 2 AUTH default",
                "HELLO 2 BOGUS",
                "HELLO 2 AUTH default pw SETNAME",
                "PING",
            ]),
        Script::new("info").differs(
            D::InfoText,
            &[
                "INFO",
                "INFO server",
                "INFO server clients",
                "INFO keyspace",
                "INFO nosuch server",
                "INFO ALL",
                "INFO commandstats",
                "INFO memory errorstats commandstats",
                "INFO everything",
                "INFO replication",
                "INFO persistence cluster modules",
            ],
        ),
    ]
}

fn pipelines() -> Vec<Script> {
    vec![
        Script::new("pipelines")
            .pipeline(&["SET a 1", "INCR a", "GET a", "DEL a", "GET a"])
            .pipeline(&[
                "PING",
                "NOSUCH x",
                "GET",
                "ECHO still",
                "SET k v EX 0",
                "GET k",
            ])
            .pipeline(&[
                "SET k 1",
                "EXPIRE k 100",
                "TTL k",
                "PERSIST k",
                "TTL k",
                "GETDEL k",
                "EXISTS k",
            ]),
        Script::new("long pipeline").pipeline(
            &(0..200)
                .map(|i| {
                    if i % 2 == 0 {
                        "INCR counter"
                    } else {
                        "GET counter"
                    }
                })
                .collect::<Vec<_>>(),
        ),
        Script::new("binary").binary(vec![
            Request {
                args: vec![b"SET".to_vec(), vec![0, 1, 2, 255], vec![b'\r', b'\n', 0]],
                differs: None,
            },
            Request {
                args: vec![b"GET".to_vec(), vec![0, 1, 2, 255]],
                differs: None,
            },
        ]),
    ]
}

fn client_list_and_kill() -> Vec<Script> {
    vec![Script::new("client list and kill").run(&[
        "CLIENT LIST TYPE foo",
        "CLIENT LIST TYPE master",
        "CLIENT LIST TYPE normal extra",
        "CLIENT LIST ID x",
        "CLIENT LIST ID 1 x",
        "CLIENT LIST ID 0",
        "CLIENT LIST ID 999999",
        "CLIENT KILL 1.2.3.4:5",
        "CLIENT KILL ID 0",
        "CLIENT KILL ID x",
        "CLIENT KILL ID 999999",
        "CLIENT KILL ADDR 1.2.3.4:5 SKIPME maybe",
        "CLIENT KILL ADDR 1.2.3.4:5 SKIPME no",
        "CLIENT KILL TYPE foo",
        "CLIENT KILL TYPE pubsub",
        "CLIENT KILL TYPE normal",
        "CLIENT KILL USER bob",
        "CLIENT KILL USER default",
        "CLIENT KILL MAXAGE 5",
        "CLIENT KILL foo bar",
        "CLIENT KILL ID",
        "CLIENT KILL",
        "CLIENT NO-EVICT on",
        "CLIENT NO-EVICT OFF",
        "CLIENT NO-EVICT maybe",
        "CLIENT NO-EVICT",
        "PING",
    ])]
}

/// Lists: every command of the family, wrong arity, wrong types both ways, options in
/// several orders, the keyspace commands on lists, and the `l` events.
fn lists() -> Vec<Script> {
    let events = |name: &str, commands: &[&str]| {
        let mut script = Script::new(name)
            .run(&["CONFIG SET notify-keyspace-events KEAmn"])
            .on(1, &["PSUBSCRIBE __key*__:*"], 0);
        for command in commands {
            script = script.run(&[command]).messages(1);
        }
        script.run(&["CONFIG SET notify-keyspace-events ''"])
    };
    let family = [
        "RPUSH l a b c",
        "LPUSH l x y",
        "LPUSHX nol a",
        "RPUSHX nol a",
        "LPUSHX l w",
        "RPUSHX l z z2",
        "LLEN l",
        "LLEN nol",
        "LRANGE l 0 -1",
        "LRANGE l -100 100",
        "LRANGE l 2 1",
        "LRANGE l -2 -1",
        "LRANGE l 5 3",
        "LRANGE nol 0 -1",
        "LRANGE l x 1",
        "LRANGE nol x 1",
        "LINDEX l 0",
        "LINDEX l -1",
        "LINDEX l 100",
        "LINDEX l -100",
        "LINDEX l x",
        "LINDEX nol x",
        "LPOP l",
        "RPOP l",
        "LPOP l 2",
        "RPOP l 2",
        "LPOP l 0",
        "LPOP l -1",
        "LPOP l x",
        "LPOP l 1 2",
        "LPOP nol",
        "LPOP nol 2",
        "RPOP nol 0",
        "RPUSH m a b a c a d",
        "LSET m 0 A",
        "LSET m -1 D",
        "LSET m 100 x",
        "LSET m x y",
        "LSET nol 0 x",
        "LINSERT m BEFORE a p",
        "LINSERT m AFTER a q",
        "LINSERT m AFTER nope q",
        "LINSERT m MIDDLE a q",
        "LINSERT nol BEFORE a q",
        "LRANGE m 0 -1",
        "LPOS m a",
        "LPOS m a RANK 2",
        "LPOS m a RANK -1",
        "LPOS m a COUNT 0",
        "LPOS m a COUNT 2 RANK 2",
        "LPOS m a RANK -2 COUNT 5",
        "LPOS m a MAXLEN 3 COUNT 0",
        "LPOS m a RANK 0",
        "LPOS m a COUNT -1",
        "LPOS m a MAXLEN -1",
        "LPOS m a RANK x",
        "LPOS m a FOO 1",
        "LPOS m a COUNT",
        "LPOS m zz",
        "LPOS m zz COUNT 1",
        "LPOS nol a",
        "LPOS nol a COUNT 1",
        "LREM m 1 a",
        "LREM m -1 a",
        "LREM m 0 a",
        "LREM m 0 nope",
        "LREM m x a",
        "LREM nol 0 a",
        "LRANGE m 0 -1",
        "LTRIM m 1 -2",
        "LRANGE m 0 -1",
        "LTRIM m x 1",
        "LTRIM nol 0 1",
        "LTRIM m 5 1",
        "EXISTS m",
        "RPUSH s a b c",
        "LMOVE s d LEFT RIGHT",
        "LMOVE s d RIGHT LEFT",
        "LMOVE s s LEFT RIGHT",
        "LMOVE s d UP LEFT",
        "LMOVE nol d LEFT LEFT",
        "RPOPLPUSH s d",
        "RPOPLPUSH s d",
        "LRANGE d 0 -1",
        "EXISTS s",
        "RPUSH mp a b c d",
        "LMPOP 2 nol mp LEFT",
        "LMPOP 2 nol mp RIGHT COUNT 2",
        "LMPOP 1 mp LEFT COUNT 10",
        "LMPOP 1 mp LEFT",
        "LMPOP 0 mp LEFT",
        "LMPOP x mp LEFT",
        "LMPOP 3 mp LEFT",
        "LMPOP 1 mp UP",
        "LMPOP 1 mp LEFT COUNT 0",
        "LMPOP 1 mp LEFT COUNT x",
        "LMPOP 1 mp LEFT COUNT 1 COUNT 2",
        "LMPOP 1 mp LEFT FOO",
        "COMMAND INFO lmpop blmpop",
        "RPUSH one x",
        "LMOVE one one LEFT RIGHT",
        "RPOPLPUSH one one",
        "LRANGE one 0 -1",
    ];
    let arity = [
        "LMPOP 1 l",
        "BLMPOP 0 1 l",
        "LPUSH l",
        "RPUSH",
        "LPUSHX l",
        "LLEN",
        "LLEN a b",
        "LRANGE l 0",
        "LINDEX l",
        "LSET l 0",
        "LINSERT l BEFORE a",
        "LREM l 0",
        "LTRIM l 0",
        "LPOS l",
        "LMOVE a b LEFT",
        "RPOPLPUSH a",
        "LPOP",
        "RPOP",
    ];
    let wrong_types = [
        "SET str v",
        "RPUSH lst a b",
        "LPUSH str a",
        "RPUSHX str a",
        "LPOP str",
        "RPOP str 2",
        "LLEN str",
        "LRANGE str 0 -1",
        "LRANGE str x 1",
        "LINDEX str 0",
        "LINDEX str x",
        "LSET str 0 a",
        "LINSERT str BEFORE a b",
        "LINSERT str MIDDLE a b",
        "LREM str 0 a",
        "LTRIM str 0 1",
        "LPOS str a",
        "LPOS str a RANK 0",
        "LMOVE str lst LEFT LEFT",
        "LMOVE lst str LEFT LEFT",
        "LMOVE nol str LEFT LEFT",
        "LMPOP 2 nol str LEFT",
        "LMPOP 2 lst str LEFT",
        "BLMPOP 0 2 nol str LEFT",
        "RPOPLPUSH lst str",
        "GET lst",
        "SET lst v GET",
        "SET lst v BADOPT GET",
        "GETSET lst v",
        "GETDEL lst",
        "GETEX lst EX 10",
        "GETEX lst BADOPT",
        "INCR lst",
        "INCRBY lst x",
        "INCRBYFLOAT lst 1",
        "DECRBY lst 1",
        "APPEND lst x",
        "SETRANGE lst 0 x",
        "SETRANGE lst 0 ''",
        "SETRANGE lst -1 x",
        "GETRANGE lst 0 1",
        "GETRANGE lst x 1",
        "STRLEN lst",
        "MGET str lst nol",
        "SETNX lst x",
        "MSETNX lst x other y",
        "SETBIT lst 1 1",
        "SETBIT lst x 1",
        "GETBIT lst 1",
        "BITCOUNT lst",
        "BITCOUNT lst x y",
        "BITPOS lst 1",
        "BITPOS lst 2",
        "BITOP AND dest str lst",
        "BITOP AND lst str",
        "TYPE lst",
        "DEL lst",
        "RPUSH lst a b",
        "LCS str lst",
        "LCS lst str BADOPT",
        "TYPE lst",
        "TYPE str",
        "TYPE nol",
        "OBJECT ENCODING lst",
        "OBJECT REFCOUNT lst",
        "EXPIRE lst 100",
        "TTL lst",
        "PERSIST lst",
        "RENAME lst lst2",
        "LRANGE lst2 0 -1",
        "COPY lst2 lst3",
        "LRANGE lst3 0 -1",
        "TYPE lst3",
        "RENAME str lst3",
        "TYPE lst3",
        "GET lst3",
        "SET lst2 v",
        "TYPE lst2",
        "MSET lst2 a",
        "DEL lst2 lst3",
        "RPUSH lst a",
        "DBSIZE",
        "KEYS l*",
    ];
    vec![
        Script::new("lists").run(&family).run(&arity),
        Script::new("lists: wrong types").run(&wrong_types),
        Script::new("lists: scan by type")
            .run(&["RPUSH l1 a", "RPUSH l2 b", "SET s1 x", "SET s2 y"])
            .scan_all("TYPE list")
            .scan_all("TYPE string")
            .scan_all("TYPE hash")
            .scan_all("MATCH l* TYPE list COUNT 1"),
        Script::new("lists: watched")
            .run(&["RPUSH w a", "WATCH w"])
            .on(1, &["RPUSH w b"], 0)
            .pipeline(&["MULTI", "LLEN w", "EXEC"])
            .run(&[
                "WATCH w",
                "MULTI",
                "LPUSH w c",
                "RPOP w",
                "EXEC",
                "LRANGE w 0 -1",
            ]),
        events("lists: keyspace events", &family),
        Script::new("lists: expiry")
            .run(&["RPUSH e a", "PEXPIRE e 50", "LLEN e"])
            .sleep(200)
            .run(&["LLEN e", "EXISTS e", "LPUSHX e x"]),
        big_lists(),
    ]
}

/// Lists past Redis' listpack thresholds (more than 128 elements, elements over 64 bytes) and
/// past several of Redis' 8 KiB quicklist nodes, changed at both ends and in the middle: here
/// pushes fill a block's room, move the elements to its middle, write it anew larger, and pops
/// shrink it again.
fn big_lists() -> Script {
    // Elements of 1 to 300 bytes (the length's size changes at 128), with repeats for LREM and
    // LPOS, and no spaces.
    let element = |i: usize| format!("e{}-{}", i % 37, "x".repeat(i * 7 % 300));
    let push = |command: &str, key: &str, range: std::ops::Range<usize>| {
        let elements: Vec<String> = range.map(element).collect();
        format!("{command} {key} {}", elements.join(" "))
    };
    let lines = [
        push("RPUSH", "big", 0..150),
        push("LPUSH", "big", 150..300),
        push("RPUSH", "big", 300..310),
        "LLEN big".to_string(),
        "OBJECT ENCODING big".to_string(),
        "LINDEX big 0".to_string(),
        "LINDEX big 149".to_string(),
        "LINDEX big -1".to_string(),
        "LINDEX big -200".to_string(),
        "LRANGE big 140 160".to_string(),
        "LRANGE big -170 -150".to_string(),
        format!("LPOS big {} RANK -2 COUNT 3", element(40)),
        format!("LPOS big {} COUNT 0 MAXLEN 200", element(3)),
        format!("LINSERT big BEFORE {} inserted", element(200)),
        format!("LINSERT big AFTER {} {}", element(100), "y".repeat(200)),
        "LSET big 155 replaced".to_string(),
        format!("LSET big -3 {}", "z".repeat(129)),
        format!("LREM big 3 {}", element(5)),
        format!("LREM big -2 {}", element(7)),
        "LRANGE big 0 -1".to_string(),
        "LPOP big 100".to_string(),
        "RPOP big 100".to_string(),
        "LTRIM big 20 -20".to_string(),
        "LRANGE big 0 -1".to_string(),
        push("RPUSH", "other", 0..200),
        "LMOVE big other LEFT RIGHT".to_string(),
        "LMOVE other big RIGHT LEFT".to_string(),
        "LMOVE big big RIGHT LEFT".to_string(),
        "LMPOP 2 big other RIGHT COUNT 70".to_string(),
        "LRANGE big 0 -1".to_string(),
        "LPOP other 1000".to_string(),
        "EXISTS other".to_string(),
        "RPOP big 1000".to_string(),
        "EXISTS big".to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Script::new("lists: past the thresholds").run(&lines)
}

/// Hashes: every command of the family, wrong arity, wrong types both ways, the keyspace
/// commands on hashes, and the `h` events.
fn hashes() -> Vec<Script> {
    let family = [
        "HSET h f1 v1",
        "HSET h f2 v2 f3 v3 f1 v1b",
        "HSET h f4 a f4 b",
        "HSET h f5",
        "HSET h",
        "HMSET h f6 v6 f7 v7",
        "HMSET h f8",
        "HSETNX h f1 x",
        "HSETNX h f9 v9",
        "HSETNX nh f v",
        "HGET h f1",
        "HGET h nope",
        "HGET nh2 f",
        "HMGET h f1 nope f2",
        "HMGET nh2 a b",
        "HLEN h",
        "HLEN nh2",
        "HSTRLEN h f1",
        "HSTRLEN h nope",
        "HEXISTS h f2",
        "HEXISTS h nope",
        "HEXISTS nh2 f",
        "HKEYS h",
        "HVALS h",
        "HGETALL h",
        "HKEYS nh2",
        "HVALS nh2",
        "HGETALL nh2",
        "HDEL h f2 nope f3",
        "HDEL h nope",
        "HDEL nh2 f",
        "HGETALL h",
        "HINCRBY h n 5",
        "HINCRBY h n -7",
        "HINCRBY h n x",
        "HINCRBY h f1 1",
        "HINCRBY h n 9223372036854775807",
        "HINCRBY nh3 n 1",
        "HINCRBYFLOAT h fl 1.5",
        "HINCRBYFLOAT h fl 0.25",
        "HINCRBYFLOAT h fl x",
        "HINCRBYFLOAT h f1 1",
        "HINCRBYFLOAT h fl inf",
        "HINCRBYFLOAT h n 1e3",
        "HGETALL h",
        "OBJECT ENCODING h",
        "TYPE h",
        "DEL nh",
        "HSET d a 1",
        "HDEL d a",
        "EXISTS d",
        "HGET h",
        "HMGET h",
        "HDEL h",
        "HLEN",
        "HSTRLEN h",
        "HEXISTS h",
        "HKEYS",
        "HGETALL h x",
        "HINCRBY h n",
        "HINCRBYFLOAT h n",
        "COMMAND INFO hset hsetnx hget hmget hmset hdel hlen hstrlen hexists hkeys hvals hgetall hincrby hincrbyfloat",
        "COMMAND INFO hscan hrandfield",
        "HSET sc a 1 b 2 ab 3 c 4",
        "HSCAN sc 0",
        "HSCAN sc 7",
        "HSCAN sc 0 MATCH a*",
        "HSCAN sc 0 COUNT 1",
        "HSCAN sc 0 MATCH * COUNT 100",
        "HSCAN sc 0 COUNT 0",
        "HSCAN sc 0 COUNT x",
        "HSCAN sc 0 TYPE hash",
        "HSCAN sc 0 MATCH",
        "HSCAN sc x",
        "HSCAN sc -1",
        "HSCAN nsc 0",
        "HSCAN sc",
        "HRANDFIELD nsc",
        "HRANDFIELD nsc 3",
        "HRANDFIELD sc 4",
        "HRANDFIELD sc 10",
        "HRANDFIELD sc 10 WITHVALUES",
        "HRANDFIELD sc 0",
        "HRANDFIELD sc 0 WITHVALUES",
        "HRANDFIELD sc x",
        "HRANDFIELD sc 1 FOO",
        "HRANDFIELD sc 1 WITHVALUES x",
        "HRANDFIELD sc -9223372036854775807 WITHVALUES",
        "HRANDFIELD sc -9223372036854775808",
        "HRANDFIELD sc -9223372036854775808 WITHVALUES",
        "HRANDFIELD sc -9223372036854775808 x",
        "HRANDFIELD nsc -9223372036854775808",
        "HRANDFIELD sc -4611686018427387904 WITHVALUES",
        "HRANDFIELD",
    ];
    let wrong_types = [
        "SET str v",
        "RPUSH lst a",
        "HSET hh f v",
        "HSET str f v",
        "HSETNX lst f v",
        "HGET str f",
        "HMGET lst f",
        "HDEL str f",
        "HLEN lst",
        "HSTRLEN str f",
        "HEXISTS lst f",
        "HKEYS str",
        "HVALS lst",
        "HGETALL str",
        "HSCAN str 0",
        "HSCAN str x",
        "HRANDFIELD lst",
        "HRANDFIELD lst 2",
        "HINCRBY str f 1",
        "HINCRBY str f x",
        "HINCRBYFLOAT lst f 1",
        "HINCRBYFLOAT lst f x",
        "GET hh",
        "LPUSH hh a",
        "LLEN hh",
        "APPEND hh x",
        "MGET hh str",
        "TYPE hh",
        "OBJECT ENCODING hh",
        "RENAME hh hh2",
        "HGETALL hh2",
        "COPY hh2 hh3",
        "HGETALL hh3",
        "TYPE hh3",
        "EXPIRE hh3 100",
        "TTL hh3",
        "SET hh3 v",
        "TYPE hh3",
    ];
    let mut events = Script::new("hashes: keyspace events")
        .run(&["CONFIG SET notify-keyspace-events KEAmn"])
        .on(1, &["PSUBSCRIBE __key*__:*"], 0);
    for command in &family[..50] {
        events = events.run(&[command]).messages(1);
    }
    vec![
        Script::new("hashes").run(&family),
        Script::new("hashes: wrong types").run(&wrong_types),
        Script::new("hashes: scan by type")
            .run(&["HSET h1 a 1", "RPUSH l1 b", "SET s1 x"])
            .scan_all("TYPE hash")
            .scan_all("TYPE list"),
        events.run(&["CONFIG SET notify-keyspace-events ''"]),
        big_hashes(),
    ]
}

/// Hashes past Redis 7.0's listpack thresholds (more than 512 fields; a value over 64 bytes), which
/// both servers keep with an index from then on (`OBJECT ENCODING` says `hashtable`): every
/// command on them, and the fields in Redis' hash-table order compared as sets.
fn big_hashes() -> Script {
    let pairs = |range: std::ops::Range<usize>, value: &dyn Fn(usize) -> String| {
        range
            .map(|i| format!("f{i} {}", value(i)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let short = |i: usize| format!("v{i}");
    let long = |i: usize| format!("{i}{}", "w".repeat(70));
    let lines = [
        format!("HSET many {}", pairs(0..300, &short)),
        "OBJECT ENCODING many".to_string(),
        format!("HSET many {}", pairs(290..512, &short)),
        "OBJECT ENCODING many".to_string(),
        format!("HSET many {}", pairs(500..600, &short)),
        "OBJECT ENCODING many".to_string(),
        "HLEN many".to_string(),
        "HGET many f0".to_string(),
        "HGET many f599".to_string(),
        "HGET many f600".to_string(),
        "HMGET many f5 nope f120".to_string(),
        "HEXISTS many f77".to_string(),
        "HSTRLEN many f100".to_string(),
        format!("HSET many f3 {} f200 x", "y".repeat(100)),
        "HGET many f3".to_string(),
        "HSETNX many f4 z".to_string(),
        "HSETNX many f300 z".to_string(),
        "HINCRBY many n 5".to_string(),
        "HINCRBYFLOAT many n 1.5".to_string(),
        "HDEL many f1 f2 f2 nope f599".to_string(),
        "HLEN many".to_string(),
        format!(
            "HDEL many {}",
            (0..599)
                .map(|i| format!("f{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "HLEN many".to_string(),
        "OBJECT ENCODING many".to_string(),
        format!("HSET wide a {}", long(1)),
        "OBJECT ENCODING wide".to_string(),
        format!("HSET wide {}", pairs(0..5, &long)),
        "HGET wide f4".to_string(),
        "HLEN wide".to_string(),
        "HDEL wide a f0 f1 f2 f3 f4".to_string(),
        "EXISTS wide".to_string(),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Script::new("hashes: past the thresholds")
        .run(&lines)
        .differs(Difference::UnorderedPairs, &["HGETALL many"])
        .run(&[&format!("HSET order {}", pairs(0..600, &short))])
        .differs(Difference::UnorderedPairs, &["HGETALL order"])
        .differs(Difference::Unordered, &["HKEYS order", "HVALS order"])
        .scan_all("HSCAN order")
        .scan_all("HSCAN order COUNT 7")
        .scan_all("HSCAN order COUNT 1000")
        .scan_all("HSCAN order MATCH f1* COUNT 3")
        .run(&[
            "HSCAN order 0 COUNT 0",
            "HSCAN order x",
            "HSCAN order 0 MATCH",
        ])
        .run(&["DEL many order"])
}

/// Back to Redis 7.0's defaults as built, at the end of each script that changes them (the two
/// servers live through every script).
const DEFAULT_ENCODINGS: &str = "CONFIG SET hash-max-listpack-entries 512 hash-max-listpack-value 64 list-max-listpack-size -2 list-compress-depth 0";

/// `CONFIG SET|GET` of the encoding thresholds (hashes: `hash-max-listpack-entries|value`;
/// lists: `list-max-listpack-size`, `list-compress-depth`) under both of Redis 7.0's names,
/// and `OBJECT ENCODING` of hashes as the thresholds change: converted when a write passes
/// them, never when they are lowered or by a delete.
fn encodings() -> Vec<Script> {
    let config = Script::new("config: encoding thresholds")
        .run(&[
            "CONFIG GET hash-max-listpack-entries",
            "CONFIG GET hash-max-ziplist-entries",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG GET hash-max-ziplist-value",
            "CONFIG GET list-max-listpack-size",
            "CONFIG GET list-max-ziplist-size",
            "CONFIG GET list-compress-depth",
            "CONFIG SET hash-max-listpack-entries 4",
            "CONFIG GET hash-max-ziplist-entries",
            "CONFIG SET hash-max-ziplist-value 1kb",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-value ''",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-value 8KB",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-value kb",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-value 10g",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-value \"5\\x00junk\"",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET hash-max-listpack-entries -1",
            "CONFIG SET hash-max-ziplist-entries x",
            "CONFIG SET hash-max-ziplist-entries 1kb",
            "CONFIG SET hash-max-listpack-entries ''",
            "CONFIG SET hash-max-listpack-entries 9223372036854775808",
            "CONFIG SET hash-max-listpack-entries 9223372036854775807",
            "CONFIG GET hash-max-listpack-entries",
            "CONFIG SET hash-max-listpack-value -1",
            "CONFIG SET hash-max-listpack-value 1.5",
            "CONFIG SET hash-max-listpack-value \" 5\"",
            "CONFIG SET hash-max-listpack-value 1kib",
            "CONFIG SET hash-max-listpack-value 99999999999999999999",
            "CONFIG SET hash-max-listpack-value 9223372036854775808",
            "CONFIG SET hash-max-listpack-value 9223372036854775807",
            "CONFIG GET hash-max-ziplist-value",
            "CONFIG SET hash-max-listpack-value 20000000000gb",
            "CONFIG GET hash-max-listpack-value",
            "CONFIG SET HASH-MAX-ZIPLIST-VALUE abc",
            "CONFIG SET hash-max-listpack-entries 1 hash-max-ziplist-entries 2",
            "CONFIG GET hash-max-listpack-entries",
            "CONFIG SET hash-max-ziplist-entries 5 hash-max-ziplist-entries 6",
            "CONFIG SET hash-max-listpack-entries 5 HASH-MAX-LISTPACK-ENTRIES 6",
            "CONFIG SET hash-max-listpack-entries 7 hash-max-listpack-value x",
            "CONFIG GET hash-max-listpack-entries",
            "CONFIG SET hash-max-listpack-entries 7 nosuch 1",
            "CONFIG GET HASH-MAX-ZIPLIST-VALUE hash-max-ziplist-value",
            "CONFIG SET hash-max-listpack-value 64 hash-max-listpack-entries",
            "CONFIG SET list-max-listpack-size -5",
            "CONFIG GET list-max-ziplist-size",
            "CONFIG SET list-max-ziplist-size 2147483647",
            "CONFIG GET list-max-listpack-size",
            "CONFIG SET list-max-ziplist-size -2147483648",
            "CONFIG GET list-max-listpack-size",
            "CONFIG SET list-max-ziplist-size 2147483648",
            "CONFIG SET list-max-listpack-size -2147483649",
            "CONFIG SET list-max-listpack-size 1kb",
            "CONFIG SET list-max-listpack-size ''",
            "CONFIG SET list-compress-depth 2",
            "CONFIG GET list-compress-depth",
            "CONFIG SET list-compress-depth -1",
            "CONFIG SET list-compress-depth 2147483648",
            "CONFIG SET list-compress-depth x",
            // Redis reads no digits as 0: for maxmemory, no limit; for the byte limits, too
            // little.
            "CONFIG SET maxmemory ''",
            "CONFIG GET maxmemory",
            "CONFIG SET proto-max-bulk-len ''",
            "CONFIG SET client-query-buffer-limit kb",
            "RPUSH l a b c",
            "OBJECT ENCODING l",
            "LRANGE l 0 -1",
        ])
        .differs(
            D::UnorderedPairs,
            &[
                "CONFIG GET hash-max-ziplist-value hash-max-listpack-value",
                "CONFIG GET hash-max-*",
                "CONFIG GET list-*",
                "CONFIG GET hash-max-zip*",
                "CONFIG GET *-ziplist-size",
            ],
        )
        .run(&[DEFAULT_ENCODINGS, "CONFIG GET hash-max-listpack-entries"]);
    let transitions = Script::new("hashes: encodings at changed thresholds")
        .run(&[
            "CONFIG SET hash-max-listpack-entries 4 hash-max-listpack-value 8",
            "HSET h a 1 b 2 c 3 d 4",
            "OBJECT ENCODING h",
            "HSET h d 5",
            "OBJECT ENCODING h",
            "HSET h e 5",
            "OBJECT ENCODING h",
            "HLEN h",
            "HSET twice a 1 b 2 a 3 b 4 a 5 b 6",
            "OBJECT ENCODING twice",
            "HSET five a 1 b 2 c 3 d 4 e 5",
            "OBJECT ENCODING five",
            "HSET v f 12345678",
            "OBJECT ENCODING v",
            "HSET v g 123456789",
            "OBJECT ENCODING v",
            "HSET w 123456789 x",
            "OBJECT ENCODING w",
            "HMSET m a 1 b 123456789",
            "OBJECT ENCODING m",
            "HSET dup a 123456789 a 1",
            "OBJECT ENCODING dup",
            "HGET dup a",
            "HINCRBY i n 5",
            "OBJECT ENCODING i",
            "HINCRBY i n 12345678",
            "OBJECT ENCODING i",
            "HINCRBYFLOAT f n 1.5",
            "HINCRBYFLOAT f n 0.000001",
            "OBJECT ENCODING f",
            "HINCRBYFLOAT f n 0.0000001",
            "OBJECT ENCODING f",
            "HSETNX nx longfield1 v",
            "OBJECT ENCODING nx",
            "HSET nx2 a 1",
            "HSETNX nx2 a 123456789",
            "OBJECT ENCODING nx2",
            "HSETNX nx2 b 123456789",
            "OBJECT ENCODING nx2",
            "HDEL h a b c",
            "OBJECT ENCODING h",
            // Lowered thresholds convert nothing already written, nor a delete; any set does.
            "CONFIG SET hash-max-listpack-entries 512 hash-max-listpack-value 64",
            "HSET big a 1 b 2 c 3 d 4 e 5 f 6",
            "HSET big2 a 1 b 2 c 3 d 4 e 5 f 6",
            "HSET big3 a 1 b 2 c 3 d 4 e 5 f 6",
            "HSET long a 123456789",
            "CONFIG SET hash-max-listpack-entries 2 hash-max-listpack-value 4",
            "OBJECT ENCODING big",
            "OBJECT ENCODING long",
            "HDEL big a",
            "OBJECT ENCODING big",
            "HGETALL big",
            "HSETNX big b 9",
            "OBJECT ENCODING big",
            "HSET big b 9",
            "OBJECT ENCODING big",
            "HINCRBY big2 a 1",
            "OBJECT ENCODING big2",
            "HSET long a 1",
            "OBJECT ENCODING long",
            "COPY big3 big4",
            "OBJECT ENCODING big4",
            "RENAME big3 big5",
            "OBJECT ENCODING big5",
            "HGETALL big5",
            "HDEL big5 a b c d e",
            "OBJECT ENCODING big5",
            "HSET big5 g 7",
            "OBJECT ENCODING big5",
            // Thresholds of 0: any field makes a hash table; an empty field and value fit 0.
            "CONFIG SET hash-max-listpack-entries 0",
            "HSET zero a 1",
            "OBJECT ENCODING zero",
            "CONFIG SET hash-max-listpack-entries 512 hash-max-listpack-value 0",
            "HSET empty '' ''",
            "OBJECT ENCODING empty",
            "HSET empty a ''",
            "OBJECT ENCODING empty",
        ])
        .scan_all("HSCAN empty")
        .run(&[
            // Raised again: a hash table stays one.
            "CONFIG SET hash-max-listpack-entries 1000 hash-max-listpack-value 1000",
            "OBJECT ENCODING h",
            "HSET h z 1",
            "OBJECT ENCODING h",
            "HSET raised a 123456789012",
            "OBJECT ENCODING raised",
            "HSCAN raised 0",
            DEFAULT_ENCODINGS,
        ])
        .differs(D::UnorderedPairs, &["HGETALL h", "HGETALL empty"]);
    vec![config, transitions]
}

/// Blocking pops: served at once, served later by pushes from another connection (first
/// come, first served, per key), timing out, refused, inside `MULTI`, and their events.
fn blocking_pops() -> Vec<Script> {
    vec![
        Script::new("blocking pops: at once and errors").run(&[
            "RPUSH l a b",
            "BLPOP l 0",
            "BRPOP nol l 0",
            "RPUSH l c",
            "BLMOVE l d LEFT RIGHT 0",
            "BRPOPLPUSH d l 0",
            "LRANGE l 0 -1",
            "BLPOP l x",
            "BLPOP l -1",
            "BLPOP l ''",
            "BLPOP l 1e400",
            "BLPOP l",
            "BRPOP",
            "BLMOVE l d UP LEFT 0",
            "BLMOVE l d LEFT LEFT x",
            "BLMOVE l d LEFT LEFT",
            "BRPOPLPUSH l d",
            "SET str v",
            "BLPOP nol str 0",
            "BLPOP l str 0",
            "BLMOVE str d LEFT LEFT 0",
            "RPUSH l c2",
            "BLMOVE l str LEFT LEFT 0",
            "BRPOPLPUSH str l 0",
            "COMMAND INFO blpop brpop blmove brpoplpush",
        ]),
        Script::new("blocking pops: BLMPOP")
            .run(&[
                "RPUSH m a b c",
                "BLMPOP 0 2 nol m RIGHT COUNT 2",
                "BLMPOP x 1 m LEFT",
                "BLMPOP -1 1 m LEFT",
                "BLMPOP 0 0 m LEFT",
                "BLMPOP 0 1 m UP",
                "BLMPOP 0.1 1 m LEFT COUNT 0",
            ])
            .send_on(1, &["BLMPOP 0 2 w1 w2 LEFT COUNT 5"], 0)
            .sleep(50)
            .run(&["RPUSH w2 x y"])
            .on(1, &[], 1)
            .send_on(1, &["BLMPOP 0.1 1 w3 RIGHT"], 0)
            .sleep(400)
            .on(1, &[], 1),
        Script::new("blocking pops: inside MULTI nothing waits")
            .run(&[
                "MULTI",
                "BLPOP nol 0",
                "BRPOP nol 1",
                "BLMOVE nol d LEFT LEFT 0",
                "BLMPOP 0 1 nol LEFT",
            ])
            .run(&["BRPOPLPUSH nol d 0", "EXEC"]),
        Script::new("blocking pops: served by a push, first come first served")
            .send_on(1, &["BLPOP q 0"], 0)
            .send_on(2, &["BLPOP q2 q 0"], 0)
            .sleep(50)
            .run(&["RPUSH q x y z", "LRANGE q 0 -1"])
            .on(1, &[], 1)
            .on(2, &[], 1)
            // Served: the connections run commands again.
            .on(1, &["PING"], 0)
            .on(2, &["PING"], 0)
            .send_on(1, &["BRPOP a b 0"], 0)
            .sleep(50)
            .run(&["LPUSH b v", "EXISTS b"])
            .on(1, &[], 1)
            // A waiting client's pipelined commands wait their turn.
            .send_on(
                2,
                &["BLMOVE src dst LEFT RIGHT 0", "GET str", "LLEN dst"],
                0,
            )
            .sleep(50)
            .run(&["RPUSH src s1 s2"])
            .on(2, &[], 3)
            // A list renamed or copied onto a key clients wait on serves them.
            .send_on(1, &["BLPOP renamed 0"], 0)
            .sleep(50)
            .run(&["RPUSH from r1 r2", "RENAME from renamed"])
            .on(1, &[], 1)
            .send_on(1, &["BLPOP copied 0"], 0)
            .sleep(50)
            .run(&["COPY renamed copied", "LRANGE renamed 0 -1"])
            .on(1, &[], 1)
            .send_on(1, &["BRPOPLPUSH src2 dst 0"], 0)
            .sleep(50)
            .run(&["SET src2 string", "DEL src2", "RPUSH src2 e"])
            .on(1, &[], 1)
            .run(&["LRANGE dst 0 -1"]),
        Script::new("blocking pops: timeouts")
            .send_on(1, &["BLPOP t 0.1"], 0)
            .send_on(2, &["BLMOVE t d LEFT LEFT 0.1"], 0)
            .sleep(400)
            .on(1, &[], 1)
            .on(2, &[], 1)
            .on(1, &["BRPOPLPUSH t d 0.05", "PING"], 0)
            .run(&["RPUSH t late", "LLEN t"]),
        Script::new("blocking pops: keyspace events")
            .run(&["CONFIG SET notify-keyspace-events KEAmn"])
            .on(3, &["PSUBSCRIBE __key*__:*"], 0)
            .send_on(1, &["BLPOP ev 0"], 0)
            .sleep(50)
            .run(&["RPUSH ev a b"])
            .on(1, &[], 1)
            .messages(3)
            .send_on(1, &["BLMOVE ev2 evd RIGHT LEFT 0"], 0)
            .sleep(50)
            .run(&["LPUSH ev2 x"])
            .on(1, &[], 1)
            .messages(3)
            .run(&["CONFIG SET notify-keyspace-events ''"]),
    ]
}

/// `CLIENT REPLY`: replies dropped (`OFF`, `SKIP`) are not sent, yet the commands run; each
/// silenced run is followed by a `PING`, so a reply that should not have come shows.
fn client_reply() -> Vec<Script> {
    vec![
        Script::new("client reply")
            .run(&[
                "CLIENT REPLY",
                "CLIENT REPLY maybe",
                "CLIENT REPLY ON",
                "CLIENT REPLY ON x",
                "CLIENT INFO x",
                "COMMAND INFO client|reply client|info",
            ])
            .quiet(
                &[
                    "CLIENT REPLY OFF",
                    "SET a 1",
                    "GET a",
                    "NOSUCH",
                    "GET",
                    "CLIENT REPLY ON",
                    "GET a",
                ],
                2,
            )
            .run(&["PING"])
            .quiet(&["CLIENT REPLY SKIP", "INCR a", "INCR a"], 1)
            .run(&["PING"])
            .quiet(
                &["CLIENT REPLY SKIP", "CLIENT REPLY SKIP", "GET a", "GET a"],
                1,
            )
            .run(&["PING"])
            .quiet(
                &[
                    "CLIENT REPLY OFF",
                    "CLIENT REPLY SKIP",
                    "GET a",
                    "CLIENT REPLY ON",
                    "GET a",
                ],
                2,
            )
            .run(&["PING"])
            .quiet(&["CLIENT REPLY SKIP", "CLIENT REPLY ON", "GET a"], 2)
            .run(&["PING"])
            .quiet(&["CLIENT REPLY SKIP", "GET", "CLIENT REPLY maybe"], 1)
            .run(&["PING", "GET a"]),
        // Pub/sub confirmations and messages are pushes, sent whatever the mode; other
        // replies on the subscribed connection stay dropped.
        Script::new("client reply and pub/sub")
            .on(1, &["CLIENT REPLY OFF", "SUBSCRIBE a b"], 0)
            .on(1, &["PSUBSCRIBE c*"], 0)
            .run(&["PUBLISH a x", "PUBLISH cc y"])
            .on(1, &[], 2)
            .on(1, &["UNSUBSCRIBE a b"], 1)
            .on(1, &["PUNSUBSCRIBE", "CLIENT REPLY ON", "PING"], 0),
    ]
}

/// `MONITOR` on connection 1 sees what connection 0 runs (admin commands and refused ones
/// left out, passwords redacted, words quoted as Redis quotes them), line for line.
fn monitor() -> Vec<Script> {
    vec![Script::new("monitor")
        .on(1, &["MONITOR"], 0)
        .run(&[
            r#"SET k "a\x01\xff\"\\ b\r\n\t""#,
            "GET k",
            "AUTH foo",
            "AUTH user foo",
            "CONFIG GET maxmemory",
            "NOSUCH",
            "GET",
        ])
        .differs(D::Handshake, &["HELLO 2 AUTH default x SETNAME n1"])
        .run(&[
            "MULTI",
            "SET m 1",
            "EXEC",
            "EXEC",
            "PUBLISH ch x",
            "CLIENT SETNAME n2",
            "COMMAND INFO monitor",
        ])
        .monitored(1, 12)
        // A monitor is a replica to Redis: it may not touch keys (and that is not fed).
        .on(1, &["GET k", "PING"], 0)
        .monitored(1, 1)
        .on(2, &["MULTI", "MONITOR", "EXEC"], 0)
        .monitored(1, 2)]
}

fn transactions() -> Vec<Script> {
    vec![
        Script::new("multi exec discard").run(&[
            "EXEC",
            "DISCARD",
            "MULTI",
            "MULTI",
            "SET a 1",
            "INCR a",
            "GETRANGE a 0 -1",
            "INCR nosuchint",
            "SET b x",
            "INCR b",
            "EXEC",
            "GET a",
            "MULTI",
            "SET c 1",
            "DISCARD",
            "DISCARD",
            "EXISTS c",
            "MULTI",
            "EXEC",
            "MULTI",
            "PING",
            "ECHO hi",
            "MGET a b c",
            "DEL a b",
            "EXEC",
            "DBSIZE",
        ]),
        Script::new("multi with errors while queueing").run(&[
            "MULTI",
            "SET a 1",
            "NOSUCH x",
            "GET",
            "SET b 2",
            "EXEC",
            "EXISTS a b",
            "MULTI",
            "WATCH a",
            "SET a 1",
            "EXEC",
            "GET a",
            "MULTI",
            "MULTI",
            "SET z 1",
            "EXEC",
            "GET z",
        ]),
        Script::new("watch").run(&[
            "SET w 1",
            "WATCH w",
            "SET w 2",
            "MULTI",
            "GET w",
            "EXEC",
            "WATCH w",
            "MULTI",
            "INCR w",
            "EXEC",
            "WATCH w nosuch",
            "UNWATCH",
            "SET w 3",
            "MULTI",
            "GET w",
            "EXEC",
            "WATCH nosuch",
            "SET nosuch 1",
            "MULTI",
            "GET nosuch",
            "EXEC",
            "WATCH w",
            "EXPIRE w 100",
            "MULTI",
            "TTL w",
            "EXEC",
            "WATCH w",
            "DEL w",
            "MULTI",
            "PING",
            "EXEC",
            "WATCH",
            "UNWATCH x",
        ]),
        Script::new("watch and expiry")
            .run(&["SET e 1 PX 100", "WATCH e"])
            .sleep(300)
            .run(&["MULTI", "PING", "EXEC", "SET f 1", "WATCH f"])
            .sleep(300)
            .run(&["MULTI", "GET f", "EXEC"]),
        Script::new("pipelined transaction").pipeline(&[
            "MULTI",
            "SET p 1",
            "INCRBY p 41",
            "GET p",
            "EXEC",
            "GET p",
        ]),
    ]
}

/// A seeded random mix of the commands above over a few keys.
/// Pub/sub across three connections: 0 publishes, 1 and 2 subscribe. In RESP2 a subscriber may
/// only (un)subscribe, PING and QUIT; in RESP3 it may run anything, and messages are pushes.
fn pubsub() -> Vec<Script> {
    vec![
        Script::new("subscribe and publish")
            .on(1, &["SUBSCRIBE a b"], 1)
            .run(&["PUBLISH a hello", "PUBLISH nobody x"])
            .on(1, &[], 1)
            .on(1, &["PING", "PING x", "GET k", "ECHO e", "SUBSCRIBE a"], 0)
            .on(2, &["PSUBSCRIBE h* a*"], 1)
            .run(&["PUBLISH hello x"])
            .on(2, &[], 1)
            // Channel subscribers first, then pattern subscribers.
            .run(&["PUBLISH a y"])
            .on(1, &[], 1)
            .on(2, &[], 1)
            .run(&[
                "PUBSUB NUMSUB a b c",
                "PUBSUB NUMSUB",
                "PUBSUB NUMPAT",
                "PUBSUB CHANNELS a*",
                "PUBSUB CHANNELS zz*",
            ])
            .differs(D::Unordered, &["PUBSUB CHANNELS", "PUBSUB CHANNELS *"])
            .on(1, &["UNSUBSCRIBE a", "UNSUBSCRIBE a", "UNSUBSCRIBE b"], 0)
            .on(1, &["UNSUBSCRIBE", "PUNSUBSCRIBE", "GET k", "PING"], 0)
            .on(
                2,
                &["PUNSUBSCRIBE a*", "PUNSUBSCRIBE h*", "PUNSUBSCRIBE"],
                0,
            )
            .run(&["PUBLISH a gone", "PUBSUB NUMPAT"])
            .differs(D::Unordered, &["PUBSUB CHANNELS"]),
        Script::new("pubsub errors").run(&[
            "SUBSCRIBE",
            "PSUBSCRIBE",
            "PUBLISH a",
            "PUBLISH a b c",
            "PUBSUB",
            "PUBSUB FOO",
            "PUBSUB CHANNELS a b",
            "PUBSUB NUMPAT x",
        ]),
        Script::new("keyspace events")
            .run(&[
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events KEA",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events g$lshzxetdmn",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events AKEm",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events nx",
                "CONFIG GET notify-keyspace-events",
                "CONFIG SET notify-keyspace-events Q",
                "CONFIG SET notify-keyspace-events ''",
                "CONFIG GET notify-keyspace-events",
            ])
            .on(1, &["SUBSCRIBE __keyevent@0__:expired"], 0)
            .on(2, &["PSUBSCRIBE __keyspace@0__:*"], 0)
            .run(&[
                "CONFIG SET notify-keyspace-events KEx",
                "SET soon v PX 30",
                "SET later v PX 60000",
            ])
            .sleep(300)
            .on(1, &[], 1)
            .on(2, &[], 1)
            .run(&["EXISTS soon", "DEL later"])
            // Only the expired class is on: a DEL publishes nothing, as in Redis.
            .on(1, &["PING"], 0)
            .run(&["CONFIG SET notify-keyspace-events ''"]),
    ]
}

/// Keyspace events: connection 1 listens on every keyspace and keyevent channel, and after
/// each command of connection 0 the messages it got are compared, all of them, in order.
fn keyspace_events() -> Vec<Script> {
    let watched = |name: &str, classes: &str, commands: &[&str]| {
        let mut script = Script::new(name)
            .run(&[&format!("CONFIG SET notify-keyspace-events {classes}")])
            .on(1, &["PSUBSCRIBE __key*__:*"], 0);
        for command in commands {
            script = script.run(&[command]).messages(1);
        }
        script.run(&["CONFIG SET notify-keyspace-events ''"])
    };
    let strings = [
        "SET a 1",
        "SET a 2 EX 100",
        "SET a 3 GET",
        "SET b 1 GET",
        "SET b 2 NX",
        "SET b 2 XX GET",
        "SET c 1 XX",
        "SET c 1 KEEPTTL",
        "SET a 1 KEEPTTL",
        "GET zz",
        "GET a",
        "GETSET c 1",
        "SETNX c 2",
        "SETNX d 2",
        "MSET e 1 f 2",
        "MSETNX g 1 e 2",
        "MSETNX g 1 h 2",
        "MGET zz e yy",
        "GETDEL a",
        "GETDEL a",
        "GETEX c EX 100",
        "GETEX c PERSIST",
        "GETEX c PERSIST",
        "GETEX zz",
        "GETEX c",
        "SETEX s 100 1",
        "PSETEX s 100000 1",
        "SETEX s 0 1",
        "INCR n",
        "INCRBY n 2",
        "DECR n",
        "DECRBY n 3",
        "INCR e",
        "SET t abc",
        "INCR t",
        "INCRBYFLOAT fl 1.5",
        "INCRBYFLOAT fl 0",
        "INCRBYFLOAT t 1",
        "APPEND ap x",
        "APPEND ap y",
        "APPEND ap ''",
        "APPEND ap2 ''",
        "SETRANGE sr 2 x",
        "SETRANGE sr 0 ''",
        "SETRANGE sr9 0 ''",
        "SETRANGE sr 0 y",
        "STRLEN zz",
        "STRLEN sr",
        "GETRANGE zz 0 1",
        "SUBSTR zz 0 1",
        "LCS zz yy",
        "LCS sr ap",
    ];
    let bits = [
        "SETBIT sb 3 1",
        "SETBIT sb 3 1",
        "SETBIT sb 3 0",
        "SETBIT sb 3 0",
        "SETBIT sb 100 0",
        "GETBIT zz 1",
        "GETBIT sb 1",
        "BITCOUNT zz",
        "BITPOS zz 1",
        "BITOP AND bo sb zz",
        "BITOP OR bo zz yy",
        "BITOP OR bo2 zz yy",
        "BITOP NOT sb sb",
    ];
    let keys = [
        "SET e 1",
        "SET f 1",
        "EXISTS zz e zz",
        "TOUCH zz e",
        "TYPE zz",
        "TYPE e",
        "TTL zz",
        "PTTL zz",
        "EXPIRETIME zz",
        "PEXPIRETIME zz",
        "OBJECT ENCODING zz",
        "EXPIRE e 100",
        "EXPIRE e 100 NX",
        "PEXPIRE e 1000 GT",
        "EXPIRE e 200 GT",
        "EXPIRE e -1",
        "EXPIRE zz 10",
        "PERSIST f",
        "EXPIRE f 100",
        "PERSIST f",
        "PEXPIREAT f 1",
        "SET f 1",
        "EXPIREAT f 1 GT",
        "RENAME f f",
        "RENAME f f2",
        "SET f3 x",
        "RENAME f2 f3",
        "RENAMENX f3 f4",
        "SET f5 x",
        "RENAMENX f4 f5",
        "RENAME zz zz2",
        "COPY f4 f5",
        "COPY f4 f5 REPLACE",
        "COPY f4 f6",
        "COPY zz q",
        "COPY f4 f4",
        "DEL f4 f5 zz f6",
        "UNLINK f3 f5",
        "SET x 1 EX 100 NX",
        "SET x 1 PX 100000 XX",
        "FLUSHALL",
        "SET q 1",
        "FLUSHDB",
        "RANDOMKEY",
        "DBSIZE",
    ];
    vec![
        watched("keyspace events: strings", "KEAmn", &strings),
        watched("keyspace events: bitmaps", "KEAmn", &bits),
        watched("keyspace events: keys", "KEAmn", &keys),
        // Only some classes on, and only one of K and E.
        watched("keyspace events: only $", "K$", &strings[..20]),
        watched("keyspace events: only g and n", "Egn", &keys),
        watched("keyspace events: only m", "Km", &strings[..20]),
        watched(
            "keyspace events: classes but neither K nor E",
            "Amn",
            &strings[..10],
        ),
        // A key past its deadline: `expired` when its time runs out, or when a command
        // finds it first, before the command's own events.
        Script::new("keyspace events: expired")
            .run(&["CONFIG SET notify-keyspace-events KEAmn"])
            .on(1, &["PSUBSCRIBE __key*__:*"], 0)
            .run(&["SET soon v PX 20", "SET later v PX 60000"])
            .messages(1)
            .sleep(300)
            .messages(1)
            .run(&["GET soon", "SET later v2 KEEPTTL", "DEL later"])
            .messages(1)
            // A time already past: Redis keeps the key until it next looks; here it is gone
            // at once. Either way `expired` follows `new`, `set` and `expire`.
            .run(&["SET past v PXAT 1"])
            .sleep(300)
            .messages(1)
            .run(&["MULTI", "SET m 1", "INCR m", "DEL m", "EXEC"])
            .messages(1)
            .run(&["CONFIG SET notify-keyspace-events ''"]),
    ]
}

/// A random script of `steps` commands over five keys, pipelined in random runs.
/// Cluster commands on a server with cluster mode off (as both are here): Redis' refusal.
fn cluster_disabled() -> Vec<Script> {
    vec![Script::new("cluster mode off").run(&[
        "CLUSTER INFO",
        "CLUSTER KEYSLOT foo",
        "CLUSTER SLOTS",
        "CLUSTER SHARDS",
        "CLUSTER NODES",
        "CLUSTER MYID",
        "CLUSTER COUNTKEYSINSLOT 1",
        "CLUSTER GETKEYSINSLOT 1 1",
        "CLUSTER NOPE",
        "CLUSTER",
        "READONLY",
        "READWRITE",
        "ASKING",
        "SET foo 1",
        "MSET a 1 b 2",
    ])]
}

fn random_mix(rng: &mut Draw<'_>, steps: usize) -> Script {
    let keys = ["k0", "k1", "k2", "k3", "k4"];
    let numbers = [
        "0", "1", "-1", "7", "100", I64_MAX, I64_MIN, "x", "01", "3.5",
    ];
    let mut script = Script::new("random mix");
    let mut pipeline = Vec::new();
    for _ in 0..steps {
        let k = keys[rng.random_range(0..keys.len())];
        let k2 = keys[rng.random_range(0..keys.len())];
        let n = numbers[rng.random_range(0..numbers.len())];
        let secs = rng.random_range(100..10_000);
        let small = rng.random_range(-12..12);
        let offset = rng.random_range(0..40);
        let bit = rng.random_range(0..64);
        let line = match rng.random_range(0..50) {
            45 => format!("HSET {k} f{} {n}", bit % 4),
            46 => format!("HGET {k} f{}", bit % 4),
            47 => format!("HDEL {k} f{} f{}", bit % 4, offset % 4),
            48 => format!("HINCRBY {k} f{} {n}", bit % 4),
            49 => format!("HGETALL {k}"),
            38 => format!("LPUSH {k} {n} {k2}"),
            39 => format!("RPUSH {k} {n}"),
            40 => format!("LPOP {k}{}", ["", " 2", " 0"][rng.random_range(0..3)]),
            41 => format!("RPOP {k}"),
            42 => format!("LRANGE {k} {small} {offset}"),
            43 => format!("LMOVE {k} {k2} LEFT RIGHT"),
            44 => format!("LREM {k} {small} {n}"),
            37 => format!(
                "LCS {k} {k2}{}",
                ["", " LEN", " IDX", " IDX WITHMATCHLEN"][rng.random_range(0..4)]
            ),
            32 => format!("SETBIT {k} {bit} {}", bit % 2),
            33 => format!("GETBIT {k} {bit}"),
            34 => format!("BITCOUNT {k} {small} {offset}"),
            35 => format!("BITPOS {k} {} {small}", bit % 2),
            36 => {
                let ops = ["AND", "OR", "XOR"];
                format!("BITOP {} {k} {k2} {k}", ops[rng.random_range(0..3)])
            }
            18 => format!("MGET {k} {k2} {k}"),
            19 => format!("MSET {k} {n} {k2} {n}"),
            20 => format!("MSETNX {k} {n} {k2} v"),
            21 => format!("SETNX {k} {n}"),
            22 => format!("GETSET {k} {n}"),
            23 => format!("APPEND {k} {n}"),
            24 => format!("STRLEN {k}"),
            25 => format!("GETRANGE {k} {small} {}", small + offset - 20),
            26 => format!("SETRANGE {k} {offset} {n}"),
            27 => format!("TYPE {k}"),
            28 => format!("RENAME {k} {k2}"),
            29 => format!("RENAMENX {k} {k2}"),
            30 => format!(
                "COPY {k} {k2}{}",
                if rng.random_bool(0.5) { " REPLACE" } else { "" }
            ),
            31 => format!("TOUCH {k} {k2}"),
            0 => format!("SET {k} {n}"),
            1 => {
                let options = ["", "NX", "XX", "GET", "KEEPTTL", "NX GET", "XX GET"];
                let option = options[rng.random_range(0..options.len())];
                let expiry = if rng.random_bool(0.5) {
                    format!("EX {secs}")
                } else {
                    String::new()
                };
                format!("SET {k} {n} {option} {expiry}")
            }
            2 => format!("GET {k}"),
            3 => format!("DEL {k} {k2}"),
            4 => format!("EXISTS {k} {k2} {k}"),
            5 => format!("INCR {k}"),
            6 => format!("DECR {k}"),
            7 => format!("INCRBY {k} {n}"),
            8 => format!("DECRBY {k} {n}"),
            9 => format!("GETDEL {k}"),
            10 => format!("GETEX {k} EX {secs}"),
            11 => format!("GETEX {k} PERSIST"),
            12 => format!("EXPIRE {k} {secs}"),
            13 => format!("EXPIRE {k} {n}"),
            14 => format!("TTL {k}"),
            15 => format!("PERSIST {k}"),
            16 => "DBSIZE".to_string(),
            _ => format!("SETEX {k} {secs} {n}"),
        };
        pipeline.push(Request {
            args: words(&line),
            differs: None,
        });
        if rng.random_range(0..4) == 0 {
            script
                .steps
                .push(Step::Pipeline(std::mem::take(&mut pipeline)));
        }
    }
    if !pipeline.is_empty() {
        script.steps.push(Step::Pipeline(pipeline));
    }
    script
}

#[test]
#[ignore = "needs redis-server"]
fn net_shell_answers_as_redis_does() {
    if !have("redis-server") {
        missing("redis-server is not installed");
    }
    let started = Instant::now();
    let redis = RedisServer::start().expect("redis-server");
    let mut buffers = ServerBuffers::default();
    let mut shell = Shell::start(&mut buffers);
    let mut scripts = Vec::new();
    scripts.extend(strings());
    scripts.extend(more_strings());
    scripts.extend(bitmaps_and_floats());
    scripts.extend(keys());
    scripts.extend(server());
    scripts.extend(pipelines());
    scripts.extend(transactions());
    scripts.extend(client_list_and_kill());
    scripts.extend(client_reply());
    scripts.extend(monitor());
    scripts.extend(lists());
    scripts.extend(blocking_pops());
    scripts.extend(hashes());
    scripts.extend(encodings());
    scripts.extend(pubsub());
    scripts.extend(keyspace_events());
    scripts.extend(cluster_disabled());
    // Every script in RESP2, then again with both connections switched to RESP3.
    let mut tally = run_scripts(&redis, &mut shell, &scripts, false).expect("both servers answer");
    let resp3 = run_scripts(&redis, &mut shell, &scripts, true).expect("both servers answer");
    tally.exact += resp3.exact;
    tally.intended += resp3.intended;
    tally.mismatches.extend(resp3.mismatches);
    for m in &tally.mismatches {
        eprintln!(
            "MISMATCH {}: {}\n  redis:     {}\n  net-shell: {}\n  ({})",
            m.at, m.request, m.redis, m.shell, m.why
        );
    }
    // Random mixes on the property runner: a mismatch is shrunk to its shortest script.
    let shell = std::cell::RefCell::new(&mut shell);
    let mixes = property::check(
        "net_shell_answers_as_redis_does (random mix)",
        Cases {
            count: 3,
            words: 400 * 12,
        },
        |rng| random_mix(rng, 400),
        |script| {
            let mut shell = shell.borrow_mut();
            let mut mix = Tally::default();
            for resp3 in [false, true] {
                let one = run_scripts(&redis, &mut shell, std::slice::from_ref(script), resp3)
                    .expect("both servers answer");
                mix.exact += one.exact;
                mix.intended += one.intended;
                mix.mismatches.extend(one.mismatches);
            }
            let first = mix.mismatches.first().map(|m| {
                format!(
                    "{}: {}, redis {}, net-shell {} ({})",
                    m.at, m.request, m.redis, m.shell, m.why
                )
            });
            assert!(first.is_none(), "a mismatch: {}", first.unwrap_or_default());
            mix
        },
    );
    let mix_count = mixes.len();
    for mix in mixes {
        tally.exact += mix.exact;
        tally.intended += mix.intended;
    }
    eprintln!(
        "{} scripts and {mix_count} random mixes, in RESP2 and RESP3: {} replies equal byte for byte, {} intended differences checked, {} mismatches, in {:.1} s",
        scripts.len(),
        tally.exact,
        tally.intended,
        tally.mismatches.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        tally.mismatches.is_empty(),
        "{} mismatches",
        tally.mismatches.len()
    );
}
