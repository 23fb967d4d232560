//! The rows: every command, in the order `COMMAND` lists them, with its subcommands.

#[cfg(feature = "extended-commands")]
use super::super::bits;
#[cfg(feature = "blocking-lists")]
use super::super::blocking;
#[cfg(feature = "pubsub")]
use super::super::channels;
#[cfg(feature = "client-list")]
use super::super::clients;
#[cfg(feature = "cluster")]
use super::super::cluster;
#[cfg(feature = "hashes")]
use super::super::hash_ttl;
#[cfg(feature = "hashes")]
use super::super::hashes;
#[cfg(feature = "lists")]
use super::super::lists;
#[cfg(feature = "extended-commands")]
use super::super::memory;
#[cfg(feature = "pubsub")]
use super::super::monitor;
#[cfg(feature = "extended-commands")]
use super::super::reply_mode;
#[cfg(feature = "transactions")]
use super::super::transaction;
use super::super::{config, keys, server, strings};
use super::flags::{Acl, Flags, Group, KeyFlags, KeySpec};
#[cfg(feature = "command-docs")]
use super::introspection::command_list_names;
#[cfg(feature = "command-docs")]
use super::introspection::help;
use super::introspection::{command_count, command_docs, command_info, command_list};
use super::{container, row, Command};

use Acl as A;
use Flags as F;
use Group as G;
use KeyFlags as KF;

/// Key specs of commands whose one key is their first argument.
#[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
const KEY_RO: &[KeySpec] = &[KeySpec::new(KF::RO, 1, 0, 1)];
const KEY_RO_ACCESS: &[KeySpec] = &[KeySpec::new(KF::RO.union(KF::ACCESS), 1, 0, 1)];
const KEY_RW_UPDATE: &[KeySpec] = &[KeySpec::new(KF::RW.union(KF::UPDATE), 1, 0, 1)];
const KEY_RW_ACCESS_UPDATE: &[KeySpec] = &[KeySpec::new(
    KF::RW.union(KF::ACCESS).union(KF::UPDATE),
    1,
    0,
    1,
)];
const KEY_OW_UPDATE: &[KeySpec] = &[KeySpec::new(KF::OW.union(KF::UPDATE), 1, 0, 1)];
#[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
const KEY_2_RO: &[KeySpec] = &[KeySpec::new(KF::RO, 2, 0, 1)];
#[cfg(feature = "lists")]
const KEY_RW_INSERT: &[KeySpec] = &[KeySpec::new(KF::RW.union(KF::INSERT), 1, 0, 1)];
#[cfg(feature = "lists")]
const KEY_RW_DELETE: &[KeySpec] = &[KeySpec::new(KF::RW.union(KF::DELETE), 1, 0, 1)];
/// The flags of `BLPOP` and `BRPOP` (with `denyoom`, of `BLMOVE` and `BRPOPLPUSH`).
#[cfg(feature = "blocking-lists")]
const BLOCKING: Flags = F::WRITE.union(F::NOSCRIPT).union(F::BLOCKING);
/// `BLPOP`, `BRPOP`: every key but the last argument, popped.
#[cfg(feature = "blocking-lists")]
const BLOCKING_POP: &[KeySpec] = &[KeySpec::new(
    KF::RW.union(KF::ACCESS).union(KF::DELETE),
    1,
    -2,
    1,
)];
/// `LMOVE`, `RPOPLPUSH`: a source popped, a destination pushed.
#[cfg(feature = "lists")]
const MOVE: &[KeySpec] = &[
    KeySpec::new(KF::RW.union(KF::ACCESS).union(KF::DELETE), 1, 0, 1),
    KeySpec::new(KF::RW.union(KF::INSERT), 2, 0, 1),
];
const KEY_RW_ACCESS_DELETE: &[KeySpec] = &[KeySpec::new(
    KF::RW.union(KF::ACCESS).union(KF::DELETE),
    1,
    0,
    1,
)];

/// The table: every command, in the order `COMMAND` lists them.
// One row per line, as a table reads.
#[rustfmt::skip]
pub(crate) static ROWS: &[Command] = &[
    // Strings.
    row("get", 2, READ_FAST, A::STRING, G::String, strings::get).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    row("set", -3, WRITE_DENYOOM, A::STRING, G::String, strings::set).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.union(KF::ACCESS).union(KF::UPDATE).union(KF::VARIABLE_FLAGS), 1, 0, 1)
            .notes("RW and ACCESS due to the optional `GET` argument")]),
    row("setex", 4, WRITE_DENYOOM, A::STRING, G::String, strings::setex).keys(1, 1, 1).specs(KEY_OW_UPDATE),
    row("psetex", 4, WRITE_DENYOOM, A::STRING, G::String, strings::psetex).keys(1, 1, 1).specs(KEY_OW_UPDATE),
    row("getdel", 2, WRITE_FAST, A::STRING, G::String, strings::getdel).keys(1, 1, 1).specs(KEY_RW_ACCESS_DELETE),
    row("getex", -2, WRITE_FAST, A::STRING, G::String, strings::getex).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.union(KF::ACCESS).union(KF::UPDATE), 1, 0, 1)
            .notes("RW and UPDATE because it changes the TTL")]),
    row("incr", 2, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incr).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("decr", 2, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::decr).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("incrby", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incrby).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("decrby", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::decrby).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("mget", -2, READ_FAST, A::STRING, G::String, strings::mget).keys(1, -1, 1).tips(&["request_policy:multi_shard"])
        .specs(&[KeySpec::new(KF::RO.union(KF::ACCESS), 1, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("mset", -3, WRITE_DENYOOM, A::STRING, G::String, strings::mset).keys(1, -1, 2)
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
        .specs(&[KeySpec::new(KF::OW.union(KF::UPDATE), 1, -1, 2)]),
    #[cfg(feature = "extended-commands")]
    row("msetnx", -3, WRITE_DENYOOM, A::STRING, G::String, strings::msetnx).keys(1, -1, 2)
        .tips(&["request_policy:multi_shard", "response_policy:agg_min"])
        .specs(&[KeySpec::new(KF::OW.union(KF::INSERT), 1, -1, 2)]),
    #[cfg(feature = "extended-commands")]
    row("setnx", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::setnx).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::OW.union(KF::INSERT), 1, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("getset", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::getset).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("strlen", 2, READ_FAST, A::STRING, G::String, strings::strlen).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "extended-commands")]
    row("append", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::append).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.union(KF::INSERT), 1, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("setrange", 4, WRITE_DENYOOM, A::STRING, G::String, strings::setrange).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("getrange", 4, F::READONLY, A::STRING, G::String, strings::getrange).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "extended-commands")]
    row("incrbyfloat", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incrbyfloat).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("lcs", -3, F::READONLY, A::STRING, G::String, strings::lcs).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RO.union(KF::ACCESS), 1, 1, 1)]),
    // Bitmaps.
    #[cfg(feature = "extended-commands")]
    row("setbit", 4, WRITE_DENYOOM, A::BITMAP, G::Bitmap, bits::setbit).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("getbit", 3, READ_FAST, A::BITMAP, G::Bitmap, bits::getbit).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "extended-commands")]
    row("bitcount", -2, F::READONLY, A::BITMAP, G::Bitmap, bits::bitcount).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "extended-commands")]
    row("bitpos", -3, F::READONLY, A::BITMAP, G::Bitmap, bits::bitpos).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "extended-commands")]
    row("bitop", -4, WRITE_DENYOOM, A::BITMAP, G::Bitmap, bits::bitop).keys(2, -1, 1)
        .specs(&[KeySpec::new(KF::OW.union(KF::UPDATE), 2, 0, 1), KeySpec::new(KF::RO.union(KF::ACCESS), 3, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("substr", 4, F::READONLY, A::STRING, G::String, strings::getrange).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    // Lists.
    #[cfg(feature = "lists")]
    row("lpush", -3, WRITE_DENYOOM_FAST, A::LIST, G::List, lists::lpush).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "lists")]
    row("rpush", -3, WRITE_DENYOOM_FAST, A::LIST, G::List, lists::rpush).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "lists")]
    row("lpushx", -3, WRITE_DENYOOM_FAST, A::LIST, G::List, lists::lpushx).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "lists")]
    row("rpushx", -3, WRITE_DENYOOM_FAST, A::LIST, G::List, lists::rpushx).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "lists")]
    row("lpop", -2, WRITE_FAST, A::LIST, G::List, lists::lpop).keys(1, 1, 1).specs(KEY_RW_ACCESS_DELETE),
    #[cfg(feature = "lists")]
    row("rpop", -2, WRITE_FAST, A::LIST, G::List, lists::rpop).keys(1, 1, 1).specs(KEY_RW_ACCESS_DELETE),
    #[cfg(feature = "lists")]
    row("llen", 2, READ_FAST, A::LIST, G::List, lists::llen).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "lists")]
    row("lrange", 4, F::READONLY, A::LIST, G::List, lists::lrange).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "lists")]
    row("lindex", 3, F::READONLY, A::LIST, G::List, lists::lindex).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "lists")]
    row("lset", 4, WRITE_DENYOOM, A::LIST, G::List, lists::lset).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "lists")]
    row("linsert", 5, WRITE_DENYOOM, A::LIST, G::List, lists::linsert).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "lists")]
    row("lrem", 4, F::WRITE, A::LIST, G::List, lists::lrem).keys(1, 1, 1).specs(KEY_RW_DELETE),
    #[cfg(feature = "lists")]
    row("ltrim", 4, F::WRITE, A::LIST, G::List, lists::ltrim).keys(1, 1, 1).specs(KEY_RW_DELETE),
    #[cfg(feature = "lists")]
    row("lpos", -3, F::READONLY, A::LIST, G::List, lists::lpos).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "lists")]
    row("lmove", 5, WRITE_DENYOOM, A::LIST, G::List, lists::lmove).keys(1, 2, 1).specs(MOVE),
    #[cfg(feature = "lists")]
    row("rpoplpush", 3, WRITE_DENYOOM, A::LIST, G::List, lists::rpoplpush).keys(1, 2, 1).specs(MOVE),
    #[cfg(feature = "lists")]
    row("lmpop", -4, F::WRITE.union(F::MOVABLEKEYS), A::LIST, G::List, lists::lmpop)
        .keys_counted(1)
        .specs(&[KeySpec::keynum(KF::RW.union(KF::ACCESS).union(KF::DELETE), 1, 0, 1, 1)]),
    #[cfg(feature = "blocking-lists")]
    row("blmpop", -5, F::WRITE.union(F::BLOCKING).union(F::MOVABLEKEYS), A::LIST, G::List, blocking::blmpop)
        .keys_counted(2)
        .specs(&[KeySpec::keynum(KF::RW.union(KF::ACCESS).union(KF::DELETE), 2, 0, 1, 1)]),
    #[cfg(feature = "blocking-lists")]
    row("blpop", -3, BLOCKING, A::LIST, G::List, blocking::blpop).keys(1, -2, 1).specs(BLOCKING_POP),
    #[cfg(feature = "blocking-lists")]
    row("brpop", -3, BLOCKING, A::LIST, G::List, blocking::brpop).keys(1, -2, 1).specs(BLOCKING_POP),
    #[cfg(feature = "blocking-lists")]
    row("blmove", 6, BLOCKING.union(F::DENYOOM), A::LIST, G::List, blocking::blmove).keys(1, 2, 1).specs(MOVE),
    #[cfg(feature = "blocking-lists")]
    row("brpoplpush", 4, BLOCKING.union(F::DENYOOM), A::LIST, G::List, blocking::brpoplpush).keys(1, 2, 1).specs(MOVE),
    // Hashes.
    #[cfg(feature = "hashes")]
    row("hset", -4, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hashes::hset).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hsetnx", 4, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hashes::hsetnx).keys(1, 1, 1).specs(KEY_RW_INSERT),
    #[cfg(feature = "hashes")]
    row("hget", 3, READ_FAST, A::HASH, G::Hash, hashes::hget).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hmget", -3, READ_FAST, A::HASH, G::Hash, hashes::hmget).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hmset", -4, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hashes::hmset).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hdel", -3, WRITE_FAST, A::HASH, G::Hash, hashes::hdel).keys(1, 1, 1).specs(KEY_RW_DELETE),
    #[cfg(feature = "hashes")]
    row("hlen", 2, READ_FAST, A::HASH, G::Hash, hashes::hlen).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "hashes")]
    row("hstrlen", 3, READ_FAST, A::HASH, G::Hash, hashes::hstrlen).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "hashes")]
    row("hexists", 3, READ_FAST, A::HASH, G::Hash, hashes::hexists).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "hashes")]
    row("hkeys", 2, F::READONLY, A::HASH, G::Hash, hashes::hkeys).keys(1, 1, 1).tips(NONDETERMINISTIC_ORDER).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hvals", 2, F::READONLY, A::HASH, G::Hash, hashes::hvals).keys(1, 1, 1).tips(NONDETERMINISTIC_ORDER).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hgetall", 2, F::READONLY, A::HASH, G::Hash, hashes::hgetall).keys(1, 1, 1).tips(NONDETERMINISTIC_ORDER).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hincrby", 4, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hashes::hincrby).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "hashes")]
    row("hscan", -3, F::READONLY, A::HASH, G::Hash, hashes::hscan).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hrandfield", -2, F::READONLY, A::HASH, G::Hash, hashes::hrandfield).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hincrbyfloat", 4, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hashes::hincrbyfloat).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    // Per-field time to live (Redis 7.4).
    #[cfg(feature = "hashes")]
    row("hexpire", -6, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hash_ttl::hexpire).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hpexpire", -6, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hash_ttl::hpexpire).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hexpireat", -6, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hash_ttl::hexpireat).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hpexpireat", -6, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hash_ttl::hpexpireat).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("httl", -5, READ_FAST, A::HASH, G::Hash, hash_ttl::httl).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hpttl", -5, READ_FAST, A::HASH, G::Hash, hash_ttl::hpttl).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hexpiretime", -5, READ_FAST, A::HASH, G::Hash, hash_ttl::hexpiretime).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hpexpiretime", -5, READ_FAST, A::HASH, G::Hash, hash_ttl::hpexpiretime).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "hashes")]
    row("hgetdel", -5, WRITE_FAST, A::HASH, G::Hash, hash_ttl::hgetdel).keys(1, 1, 1).specs(KEY_RW_ACCESS_DELETE),
    #[cfg(feature = "hashes")]
    row("hgetex", -5, WRITE_FAST, A::HASH, G::Hash, hash_ttl::hgetex).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "hashes")]
    row("hsetex", -6, WRITE_DENYOOM_FAST, A::HASH, G::Hash, hash_ttl::hsetex).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "hashes")]
    row("hpersist", -5, WRITE_FAST, A::HASH, G::Hash, hash_ttl::hpersist).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    // Keys.
    row("del", -2, F::WRITE, A::KEYSPACE, G::Generic, keys::del).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RM.union(KF::DELETE), 1, -1, 1)]),
    row("unlink", -2, WRITE_FAST, A::KEYSPACE, G::Generic, keys::del).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RM.union(KF::DELETE), 1, -1, 1)]),
    row("exists", -2, READ_FAST, A::KEYSPACE, G::Generic, keys::exists).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RO, 1, -1, 1)]),
    row("expire", -3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::expire).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    row("pexpire", -3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::pexpire).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    row("expireat", -3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::expireat).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    row("pexpireat", -3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::pexpireat).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    row("ttl", 2, READ_FAST, A::KEYSPACE, G::Generic, keys::ttl).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    row("pttl", 2, READ_FAST, A::KEYSPACE, G::Generic, keys::pttl).keys(1, 1, 1).tips(NONDETERMINISTIC).specs(KEY_RO_ACCESS),
    row("expiretime", 2, READ_FAST, A::KEYSPACE, G::Generic, keys::expiretime).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    row("pexpiretime", 2, READ_FAST, A::KEYSPACE, G::Generic, keys::pexpiretime).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    row("persist", 2, WRITE_FAST, A::KEYSPACE, G::Generic, keys::persist).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("type", 2, READ_FAST, A::KEYSPACE, G::Generic, keys::type_of).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "extended-commands")]
    row("rename", 3, F::WRITE, A::KEYSPACE, G::Generic, keys::rename).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RW.union(KF::ACCESS).union(KF::DELETE), 1, 0, 1), KeySpec::new(KF::OW.union(KF::UPDATE), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("renamenx", 3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::renamenx).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RW.union(KF::ACCESS).union(KF::DELETE), 1, 0, 1), KeySpec::new(KF::OW.union(KF::INSERT), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("copy", -3, WRITE_DENYOOM, A::KEYSPACE, G::Generic, keys::copy).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RO.union(KF::ACCESS), 1, 0, 1), KeySpec::new(KF::OW.union(KF::UPDATE), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("touch", -2, READ_FAST, A::KEYSPACE, G::Generic, keys::touch).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RO, 1, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("keys", 2, F::READONLY, A::KEYSPACE.union(A::DANGEROUS), G::Generic, keys::keys)
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"]),
    #[cfg(feature = "extended-commands")]
    row("scan", -2, F::READONLY, A::KEYSPACE, G::Generic, keys::scan).tips(&["nondeterministic_output", "request_policy:special"]),
    #[cfg(feature = "extended-commands")]
    row("randomkey", 1, F::READONLY, A::KEYSPACE, G::Generic, keys::randomkey)
        .tips(&["request_policy:all_shards", "nondeterministic_output"]),
    #[cfg(feature = "extended-commands")]
    row("object", -2, F::empty(), A::empty(), G::Generic, container).subcommands(OBJECT),
    // Server.
    row("dbsize", 1, READ_FAST, A::KEYSPACE, G::Server, server::dbsize).tips(ALL_SHARDS_SUM),
    row("flushall", -1, F::WRITE, A::KEYSPACE.union(A::DANGEROUS), G::Server, server::flush).tips(ALL_SHARDS_SUCCEEDED),
    row("flushdb", -1, F::WRITE, A::KEYSPACE.union(A::DANGEROUS), G::Server, server::flush).tips(ALL_SHARDS_SUCCEEDED),
    row("info", -1, LOADING_STALE, A::DANGEROUS, G::Server, server::info)
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    row("config", -2, F::empty(), A::empty(), G::Server, container).subcommands(CONFIG),
    #[cfg(feature = "extended-commands")]
    row("memory", -2, F::empty(), A::empty(), G::Server, container).subcommands(MEMORY),
    #[cfg(feature = "pubsub")]
    row("monitor", 1, ADMIN_CONFIG, A::empty(), G::Server, monitor::monitor),
    row("command", -1, LOADING_STALE, A::CONNECTION, G::Server, command_list).tips(NONDETERMINISTIC_ORDER)
        .subcommands(COMMAND),
    // Connection.
    row("select", 2, LOADING_STALE.union(F::FAST), A::CONNECTION, G::Connection, server::select),
    row("client", -2, F::empty(), A::empty(), G::Connection, container).subcommands(CLIENT),
    row("auth", -2, NO_AUTH, A::CONNECTION, G::Connection, server::auth),
    row("hello", -1, NO_AUTH, A::CONNECTION, G::Connection, server::hello),
    row("ping", -1, F::FAST, A::CONNECTION, G::Connection, server::ping).tips(ALL_SHARDS_SUCCEEDED),
    row("echo", 2, LOADING_STALE.union(F::FAST), A::CONNECTION, G::Connection, server::echo),
    row("quit", -1, NO_AUTH, A::CONNECTION, G::Connection, server::quit),
    row("time", 1, LOADING_STALE.union(F::FAST), A::empty(), G::Server, server::time).tips(NONDETERMINISTIC),
    // Transactions (`transactions` feature: queued commands take memory).
    #[cfg(feature = "transactions")]
    row("multi", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::multi),
    #[cfg(feature = "transactions")]
    row("exec", 1, F::NOSCRIPT.union(LOADING_STALE).union(F::SKIP_SLOWLOG), A::TRANSACTION, G::Transactions, transaction::exec),
    #[cfg(feature = "transactions")]
    row("discard", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::discard),
    #[cfg(feature = "transactions")]
    row("watch", -2, TX_FAST, A::TRANSACTION, G::Transactions, transaction::watch).keys(1, -1, 1)
        .specs(&[KeySpec::new(KF::RO, 1, -1, 1)]),
    #[cfg(feature = "transactions")]
    row("unwatch", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::unwatch),
    // Pub/sub (`pubsub` feature: channels and messages take memory).
    #[cfg(feature = "pubsub")]
    row("subscribe", -2, SUBSCRIBING, A::empty(), G::Pubsub, channels::subscribe),
    #[cfg(feature = "pubsub")]
    row("unsubscribe", -1, SUBSCRIBING, A::empty(), G::Pubsub, channels::unsubscribe),
    #[cfg(feature = "pubsub")]
    row("psubscribe", -2, SUBSCRIBING, A::empty(), G::Pubsub, channels::psubscribe),
    #[cfg(feature = "pubsub")]
    row("punsubscribe", -1, SUBSCRIBING, A::empty(), G::Pubsub, channels::punsubscribe),
    #[cfg(feature = "pubsub")]
    row("publish", 3, F::PUBSUB.union(LOADING_STALE).union(F::FAST), A::empty(), G::Pubsub, channels::publish),
    #[cfg(feature = "pubsub")]
    row("pubsub", -2, F::empty(), A::empty(), G::Pubsub, container).subcommands(PUBSUB),
    // Cluster mode (`cluster` feature; answered only with it enabled).
    #[cfg(feature = "cluster")]
    row("cluster", -2, F::empty(), A::empty(), G::Cluster, container).subcommands(CLUSTER),
    #[cfg(feature = "cluster")]
    row("readonly", 1, LOADING_STALE.union(F::FAST), A::CONNECTION, G::Cluster, cluster::read_mode),
    #[cfg(feature = "cluster")]
    row("readwrite", 1, LOADING_STALE.union(F::FAST), A::CONNECTION, G::Cluster, cluster::read_mode),
    #[cfg(feature = "cluster")]
    row("asking", 1, F::FAST, A::CONNECTION, G::Cluster, cluster::asking),
    // Kvrocks' command for the controller that pushes the topology.
    #[cfg(feature = "cluster")]
    row("clusterx", -2, F::empty(), A::empty(), G::Cluster, container).subcommands(CLUSTERX),
];

#[cfg(feature = "cluster")]
#[rustfmt::skip]
static CLUSTER: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("cluster|help", 2, LOADING_STALE, A::empty(), G::Cluster, help),
    row("cluster|keyslot", 3, F::STALE, A::empty(), G::Cluster, cluster::keyslot),
    row("cluster|shards", 2, F::STALE, A::empty(), G::Cluster, cluster::shards).tips(NONDETERMINISTIC),
    row("cluster|slots", 2, F::STALE, A::empty(), G::Cluster, cluster::slots).tips(NONDETERMINISTIC),
    row("cluster|nodes", 2, F::STALE, A::empty(), G::Cluster, cluster::nodes).tips(NONDETERMINISTIC),
    row("cluster|myid", 2, F::STALE, A::empty(), G::Cluster, cluster::myid),
    row("cluster|info", 2, F::STALE, A::empty(), G::Cluster, cluster::info).tips(NONDETERMINISTIC),
    row("cluster|countkeysinslot", 3, F::STALE, A::empty(), G::Cluster, cluster::countkeysinslot),
    row("cluster|getkeysinslot", 4, F::STALE, A::empty(), G::Cluster, cluster::getkeysinslot).tips(NONDETERMINISTIC),
    // Kvrocks': the node moving slots here announces them.
    row("cluster|import", 4, F::ADMIN.union(F::STALE), A::DANGEROUS, G::Cluster, cluster::import),
];

/// Kvrocks' `CLUSTERX`: the controller's commands (admin, as `CONFIG`).
#[cfg(feature = "cluster")]
#[rustfmt::skip]
static CLUSTERX: &[Command] = &[
    row("clusterx|setnodeid", 3, F::ADMIN.union(F::NOSCRIPT), A::DANGEROUS, G::Cluster, cluster::setnodeid),
    row("clusterx|setnodes", -4, F::ADMIN.union(F::NOSCRIPT), A::DANGEROUS, G::Cluster, cluster::setnodes),
    row("clusterx|version", 2, F::STALE, A::empty(), G::Cluster, cluster::version),
    #[cfg(feature = "alloc")]
    row("clusterx|migrate", 4, F::ADMIN.union(F::NOSCRIPT), A::DANGEROUS, G::Cluster, cluster::migrate),
];

/// The flags of `SUBSCRIBE`, `UNSUBSCRIBE`, `PSUBSCRIBE` and `PUNSUBSCRIBE`.
#[cfg(feature = "pubsub")]
const SUBSCRIBING: Flags = F::PUBSUB.union(F::NOSCRIPT).union(LOADING_STALE);

#[cfg(feature = "pubsub")]
#[rustfmt::skip]
static PUBSUB: &[Command] = &[
    row("pubsub|numsub", -2, F::PUBSUB.union(LOADING_STALE), A::empty(), G::Pubsub, channels::numsub),
    row("pubsub|numpat", 2, F::PUBSUB.union(LOADING_STALE), A::empty(), G::Pubsub, channels::numpat),
    row("pubsub|channels", -2, F::PUBSUB.union(LOADING_STALE), A::empty(), G::Pubsub, channels::channels),
    #[cfg(feature = "command-docs")]
    row("pubsub|help", 2, LOADING_STALE, A::empty(), G::Pubsub, help),
];

/// The flags of `MULTI`, `DISCARD`, `WATCH` and `UNWATCH`.
#[cfg(feature = "transactions")]
const TX_FAST: Flags = F::NOSCRIPT
    .union(LOADING_STALE)
    .union(F::FAST)
    .union(F::ALLOW_BUSY);

#[cfg(feature = "extended-commands")]
#[rustfmt::skip]
static OBJECT: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("object|help", 2, LOADING_STALE, A::KEYSPACE, G::Generic, help),
    row("object|idletime", 3, F::READONLY, A::KEYSPACE, G::Generic, keys::object).keys(2, 2, 1).tips(NONDETERMINISTIC).specs(KEY_2_RO),
    row("object|freq", 3, F::READONLY, A::KEYSPACE, G::Generic, keys::object).keys(2, 2, 1).tips(NONDETERMINISTIC).specs(KEY_2_RO),
    row("object|encoding", 3, F::READONLY, A::KEYSPACE, G::Generic, keys::object).keys(2, 2, 1).tips(NONDETERMINISTIC).specs(KEY_2_RO),
    row("object|refcount", 3, F::READONLY, A::KEYSPACE, G::Generic, keys::object).keys(2, 2, 1).tips(NONDETERMINISTIC).specs(KEY_2_RO),
];

#[cfg(feature = "extended-commands")]
#[rustfmt::skip]
static MEMORY: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("memory|help", 2, LOADING_STALE, A::empty(), G::Server, help),
    row("memory|usage", -3, F::READONLY, A::empty(), G::Server, memory::usage).keys(2, 2, 1).specs(KEY_2_RO),
    row("memory|purge", 2, F::empty(), A::empty(), G::Server, memory::purge).tips(ALL_SHARDS_SUCCEEDED),
];

#[rustfmt::skip]
static CONFIG: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("config|help", 2, LOADING_STALE, A::empty(), G::Server, help),
    row("config|rewrite", 2, ADMIN_CONFIG, A::empty(), G::Server, config::rewrite),
    row("config|resetstat", 2, ADMIN_CONFIG, A::empty(), G::Server, config::resetstat),
    row("config|get", -3, ADMIN_CONFIG, A::empty(), G::Server, config::get),
    row("config|set", -4, ADMIN_CONFIG, A::empty(), G::Server, config::set)
        .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
];

#[rustfmt::skip]
static COMMAND: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("command|list", -2, LOADING_STALE, A::CONNECTION, G::Server, command_list_names).tips(NONDETERMINISTIC_ORDER),
    row("command|info", -2, LOADING_STALE, A::CONNECTION, G::Server, command_info).tips(NONDETERMINISTIC_ORDER),
    row("command|count", 2, LOADING_STALE, A::CONNECTION, G::Server, command_count),
    #[cfg(feature = "command-docs")]
    row("command|help", 2, LOADING_STALE, A::CONNECTION, G::Server, help),
    row("command|docs", -2, LOADING_STALE, A::CONNECTION, G::Server, command_docs).tips(NONDETERMINISTIC_ORDER),
];

#[rustfmt::skip]
static CLIENT: &[Command] = &[
    row("client|setname", 3, CLIENT_FLAGS, A::CONNECTION, G::Connection, server::client_setname),
    row("client|getname", 2, CLIENT_FLAGS, A::CONNECTION, G::Connection, server::client_getname),
    #[cfg(feature = "command-docs")]
    row("client|help", 2, LOADING_STALE, A::CONNECTION, G::Connection, help),
    row("client|id", 2, CLIENT_FLAGS, A::CONNECTION, G::Connection, server::client_id),
    #[cfg(feature = "client-list")]
    row("client|list", -2, ADMIN_CLIENT, A::CONNECTION, G::Connection, clients::client_list).tips(NONDETERMINISTIC),
    #[cfg(feature = "client-list")]
    row("client|kill", -3, ADMIN_CLIENT, A::CONNECTION, G::Connection, clients::client_kill),
    #[cfg(all(feature = "client-list", feature = "blocking-lists"))]
    row("client|unblock", -3, ADMIN_CLIENT, A::CONNECTION, G::Connection, clients::client_unblock),
    #[cfg(feature = "client-list")]
    row("client|info", 2, CLIENT_FLAGS, A::CONNECTION, G::Connection, clients::client_info).tips(NONDETERMINISTIC),
    #[cfg(feature = "extended-commands")]
    row("client|reply", 3, CLIENT_FLAGS, A::CONNECTION, G::Connection, reply_mode::client_reply),
    #[cfg(feature = "extended-commands")]
    row("client|no-evict", 3, F::ADMIN.union(CLIENT_FLAGS), A::CONNECTION, G::Connection, server::client_no_evict),
    // Redis 7.2's: client libraries send it on connecting.
    row("client|setinfo", -4, CLIENT_FLAGS, A::CONNECTION, G::Connection, server::client_setinfo),
];

const READ_FAST: Flags = F::READONLY.union(F::FAST);
const WRITE_FAST: Flags = F::WRITE.union(F::FAST);
const WRITE_DENYOOM: Flags = F::WRITE.union(F::DENYOOM);
const WRITE_DENYOOM_FAST: Flags = WRITE_DENYOOM.union(F::FAST);
const NONDETERMINISTIC: &[&str] = &["nondeterministic_output"];
const NONDETERMINISTIC_ORDER: &[&str] = &["nondeterministic_output_order"];
const ALL_SHARDS_SUM: &[&str] = &["request_policy:all_shards", "response_policy:agg_sum"];
const LOADING_STALE: Flags = F::LOADING.union(F::STALE);
const ADMIN_CONFIG: Flags = F::ADMIN.union(F::NOSCRIPT).union(LOADING_STALE);
const CLIENT_FLAGS: Flags = F::NOSCRIPT.union(LOADING_STALE);
#[cfg(feature = "client-list")]
const ADMIN_CLIENT: Flags = F::ADMIN.union(CLIENT_FLAGS);
const NO_AUTH: Flags = F::NOSCRIPT
    .union(LOADING_STALE)
    .union(F::FAST)
    .union(F::NO_AUTH)
    .union(F::ALLOW_BUSY);
const MULTI_SHARD_SUM: &[&str] = &["request_policy:multi_shard", "response_policy:agg_sum"];
const ALL_SHARDS_SUCCEEDED: &[&str] =
    &["request_policy:all_shards", "response_policy:all_succeeded"];
