//! The command table: one row per command, as Redis' `struct redisCommand` (`server.h`) and
//! `commands/*.json`, and the `COMMAND` listings generated from it.
//!
//! A row holds the name, the arity (positive: exactly that many words with the name; negative:
//! at least that many), the flags and ACL categories Redis gives the command, its key positions
//! (the legacy first/last/step and the key specs), its tips, its subcommands, and its handler.
//! Flags, categories, tips and key specs were taken from redis-server 7.0.15's `COMMAND INFO`,
//! so `COMMAND INFO get` answers what Redis answers; the differential test checks it.

#[cfg(feature = "extended-commands")]
use super::bits;
#[cfg(all(feature = "alloc", feature = "extended-commands"))]
use super::clients;
use super::{
    config, keys, server, strings, After, Context, Continuation, Reply, ReplyWriter, WriteFull,
};
#[cfg(feature = "alloc")]
use super::{pubsub, transaction};

/// A command's handler: `argv[0]` is the command's name (`argv[1]` a subcommand's), and the
/// arity is already checked.
pub(crate) type Handler = fn(&mut Context<'_, '_>, &[&[u8]], &mut ReplyWriter<'_>) -> Reply;

/// Command flags: those of Redis' flags that commands here carry, in the order `COMMAND INFO`
/// lists them (Redis' `addReplyCommandFlags`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flags(u16);

impl Flags {
    pub(crate) const NONE: Self = Self(0);
    pub(crate) const WRITE: Self = Self(1 << 0);
    pub(crate) const READONLY: Self = Self(1 << 1);
    pub(crate) const DENYOOM: Self = Self(1 << 2);
    pub(crate) const ADMIN: Self = Self(1 << 3);
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    pub(crate) const PUBSUB: Self = Self(1 << 4);
    pub(crate) const NOSCRIPT: Self = Self(1 << 5);
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    pub(crate) const BLOCKING: Self = Self(1 << 6);
    pub(crate) const LOADING: Self = Self(1 << 7);
    pub(crate) const STALE: Self = Self(1 << 8);
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) const SKIP_SLOWLOG: Self = Self(1 << 9);
    pub(crate) const FAST: Self = Self(1 << 10);
    /// Served before the client authenticates (`AUTH`, `HELLO`, `QUIT`).
    pub(crate) const NO_AUTH: Self = Self(1 << 11);
    pub(crate) const ALLOW_BUSY: Self = Self(1 << 13);

    const NAMES: [&'static str; 14] = [
        "write",
        "readonly",
        "denyoom",
        "admin",
        "pubsub",
        "noscript",
        "blocking",
        "loading",
        "stale",
        "skip_slowlog",
        "fast",
        "no_auth",
        "no_multi",
        "allow_busy",
    ];

    pub(crate) const fn has(self, flag: Self) -> bool {
        self.0 & flag.0 == flag.0
    }
}

/// ACL categories, in the order Redis lists them (`ACLCommandCategories` in `acl.c`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Categories(u32);

#[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
impl Categories {
    const READ: u32 = 1 << 1;
    const WRITE: u32 = 1 << 2;
    const PUBSUB: u32 = 1 << 12;
    const ADMIN: u32 = 1 << 13;
    const FAST: u32 = 1 << 14;
    const SLOW: u32 = 1 << 15;
    const BLOCKING: u32 = 1 << 16;
    const DANGEROUS: u32 = 1 << 17;

    const NAMES: [&'static str; 20] = [
        "@keyspace",
        "@read",
        "@write",
        "@set",
        "@sortedset",
        "@list",
        "@hash",
        "@string",
        "@bitmap",
        "@hyperloglog",
        "@geo",
        "@stream",
        "@pubsub",
        "@admin",
        "@fast",
        "@slow",
        "@blocking",
        "@dangerous",
        "@connection",
        "@transaction",
    ];
}

/// The ACL categories Redis' JSON names for a command; the rest follow from its flags, as
/// Redis' `setImplicitACLCategories` derives them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Acl(u8);

impl Acl {
    pub(crate) const NONE: Self = Self(0);
    pub(crate) const KEYSPACE: Self = Self(1 << 0);
    pub(crate) const STRING: Self = Self(1 << 1);
    #[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
    pub(crate) const BITMAP: Self = Self(1 << 2);
    pub(crate) const DANGEROUS: Self = Self(1 << 3);
    pub(crate) const CONNECTION: Self = Self(1 << 4);
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) const TRANSACTION: Self = Self(1 << 5);

    /// Each bit's place in [`Categories`].
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    const PLACES: [u32; 6] = [0, 7, 8, 17, 18, 19];

    /// These categories and those Redis derives from `flags`.
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    fn with_implicit(self, flags: Flags) -> Categories {
        let mut bits = 0;
        for (bit, place) in Self::PLACES.iter().enumerate() {
            if self.0 & (1 << bit) != 0 {
                bits |= 1 << place;
            }
        }
        let implied = [
            (Flags::WRITE, Categories::WRITE),
            (Flags::READONLY, Categories::READ),
            (Flags::ADMIN, Categories::ADMIN | Categories::DANGEROUS),
            (Flags::PUBSUB, Categories::PUBSUB),
            (Flags::FAST, Categories::FAST),
            (Flags::BLOCKING, Categories::BLOCKING),
        ];
        for (flag, categories) in implied {
            if flags.has(flag) {
                bits |= categories;
            }
        }
        if bits & Categories::FAST == 0 {
            bits |= Categories::SLOW;
        }
        Categories(bits)
    }
}

/// Key-spec flags, in the order `COMMAND INFO` lists them (Redis' `addReplyFlagsForKeyArgs`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyFlags(u16);

impl KeyFlags {
    pub(crate) const RO: Self = Self(1 << 0);
    pub(crate) const RW: Self = Self(1 << 1);
    pub(crate) const OW: Self = Self(1 << 2);
    pub(crate) const RM: Self = Self(1 << 3);
    pub(crate) const ACCESS: Self = Self(1 << 4);
    pub(crate) const UPDATE: Self = Self(1 << 5);
    #[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
    pub(crate) const INSERT: Self = Self(1 << 6);
    pub(crate) const DELETE: Self = Self(1 << 7);
    pub(crate) const VARIABLE_FLAGS: Self = Self(1 << 10);

    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    const NAMES: [&'static str; 11] = [
        "RO",
        "RW",
        "OW",
        "RM",
        "access",
        "update",
        "insert",
        "delete",
        "not_key",
        "incomplete",
        "variable_flags",
    ];
}

/// Where a command's keys are (Redis 7 key specs): from argument `index`, a range up to
/// `last` (negative: from the end) in steps of `step`. Every command here finds its keys by
/// index and range.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
pub(crate) struct KeySpec {
    notes: &'static str,
    flags: KeyFlags,
    index: u8,
    last: i8,
    step: u8,
}

impl KeySpec {
    pub(crate) const fn new(flags: KeyFlags, index: u8, last: i8, step: u8) -> Self {
        Self {
            notes: "",
            flags,
            index,
            last,
            step,
        }
    }

    pub(crate) const fn notes(mut self, notes: &'static str) -> Self {
        self.notes = notes;
        self
    }
}

/// The documentation group (`COMMAND DOCS`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    Generic,
    String,
    #[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
    Bitmap,
    Connection,
    Server,
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    Transactions,
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    Pubsub,
}

impl Group {
    const fn name(self) -> &'static str {
        match self {
            Self::Generic => "generic",
            Self::String => "string",
            Self::Bitmap => "bitmap",
            Self::Connection => "connection",
            Self::Server => "server",
            Self::Transactions => "transactions",
            Self::Pubsub => "pubsub",
        }
    }
}

/// One row of the table.
pub(crate) struct Command {
    /// The full name in lower case: `get`, or `config|get` for a subcommand.
    pub(crate) name: &'static str,
    /// Words with the name (and subcommand): exactly this many if positive, at least `-arity`
    /// if negative.
    pub(crate) arity: i8,
    pub(crate) flags: Flags,
    /// ACL categories (listed with the `command-docs` feature).
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    acl: Acl,
    group: Group,
    /// Legacy key positions: first, last (negative: from the end), step. `0, 0, 0`: none.
    keys: [i8; 3],
    /// Redis' command tips (kept with the `command-docs` feature).
    #[cfg(feature = "command-docs")]
    tips: &'static [&'static str],
    /// Redis 7 key specs (kept with the `command-docs` feature).
    #[cfg(feature = "command-docs")]
    specs: &'static [KeySpec],
    subcommands: &'static [Command],
    pub(crate) handler: Handler,
}

/// A row with no keys, tips or subcommands.
const fn row(
    name: &'static str,
    arity: i8,
    flags: Flags,
    acl: Acl,
    group: Group,
    handler: Handler,
) -> Command {
    Command {
        name,
        arity,
        flags,
        acl,
        group,
        keys: [0; 3],
        #[cfg(feature = "command-docs")]
        tips: &[],
        #[cfg(feature = "command-docs")]
        specs: &[],
        subcommands: &[],
        handler,
    }
}

impl Command {
    const fn keys(mut self, first: i8, last: i8, step: i8) -> Self {
        self.keys = [first, last, step];
        self
    }

    /// Sets the tips; without the `command-docs` feature they are not kept.
    #[cfg_attr(not(feature = "command-docs"), allow(unused_mut, unused_variables))]
    const fn tips(mut self, tips: &'static [&'static str]) -> Self {
        #[cfg(feature = "command-docs")]
        {
            self.tips = tips;
        }
        self
    }

    /// Sets the key specs; without the `command-docs` feature they are not kept.
    #[cfg_attr(not(feature = "command-docs"), allow(unused_mut, unused_variables))]
    const fn specs(mut self, specs: &'static [KeySpec]) -> Self {
        #[cfg(feature = "command-docs")]
        {
            self.specs = specs;
        }
        self
    }

    const fn subcommands(mut self, subcommands: &'static [Self]) -> Self {
        self.subcommands = subcommands;
        self
    }

    /// Whether `words` words (name included) suit the arity (Redis' `commandCheckArity`).
    pub(crate) fn arity_allows(&self, words: usize) -> bool {
        let arity = isize::from(self.arity);
        let words = words as isize;
        if arity >= 0 {
            words == arity
        } else {
            words >= -arity
        }
    }

    /// The name a subcommand is looked up by (`get` of `config|get`).
    fn short_name(&self) -> &'static str {
        match self.name.split_once('|') {
            Some((_, sub)) => sub,
            None => self.name,
        }
    }
}

use Acl as A;
use Flags as F;
use Group as G;
use KeyFlags as KF;

/// Key specs of commands whose one key is their first argument.
#[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
const KEY_RO: &[KeySpec] = &[KeySpec::new(KF::RO, 1, 0, 1)];
const KEY_RO_ACCESS: &[KeySpec] = &[KeySpec::new(KF::RO.or(KF::ACCESS), 1, 0, 1)];
const KEY_RW_UPDATE: &[KeySpec] = &[KeySpec::new(KF::RW.or(KF::UPDATE), 1, 0, 1)];
const KEY_RW_ACCESS_UPDATE: &[KeySpec] =
    &[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::UPDATE), 1, 0, 1)];
const KEY_OW_UPDATE: &[KeySpec] = &[KeySpec::new(KF::OW.or(KF::UPDATE), 1, 0, 1)];
#[cfg_attr(not(feature = "extended-commands"), allow(dead_code))]
const KEY_2_RO: &[KeySpec] = &[KeySpec::new(KF::RO, 2, 0, 1)];
const KEY_RW_ACCESS_DELETE: &[KeySpec] =
    &[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::DELETE), 1, 0, 1)];

/// The table: every command, in the order `COMMAND` lists them.
// One row per line, as a table reads.
#[rustfmt::skip]
pub(crate) static ROWS: &[Command] = &[
    // Strings.
    row("get", 2, READ_FAST, A::STRING, G::String, strings::get).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    row("set", -3, WRITE_DENYOOM, A::STRING, G::String, strings::set).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::UPDATE).or(KF::VARIABLE_FLAGS), 1, 0, 1)
            .notes("RW and ACCESS due to the optional `GET` argument")]),
    row("setex", 4, WRITE_DENYOOM, A::STRING, G::String, strings::setex).keys(1, 1, 1).specs(KEY_OW_UPDATE),
    row("psetex", 4, WRITE_DENYOOM, A::STRING, G::String, strings::psetex).keys(1, 1, 1).specs(KEY_OW_UPDATE),
    row("getdel", 2, WRITE_FAST, A::STRING, G::String, strings::getdel).keys(1, 1, 1).specs(KEY_RW_ACCESS_DELETE),
    row("getex", -2, WRITE_FAST, A::STRING, G::String, strings::getex).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::UPDATE), 1, 0, 1)
            .notes("RW and UPDATE because it changes the TTL")]),
    row("incr", 2, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incr).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("decr", 2, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::decr).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("incrby", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incrby).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    row("decrby", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::decrby).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("mget", -2, READ_FAST, A::STRING, G::String, strings::mget).keys(1, -1, 1).tips(&["request_policy:multi_shard"])
        .specs(&[KeySpec::new(KF::RO.or(KF::ACCESS), 1, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("mset", -3, WRITE_DENYOOM, A::STRING, G::String, strings::mset).keys(1, -1, 2)
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
        .specs(&[KeySpec::new(KF::OW.or(KF::UPDATE), 1, -1, 2)]),
    #[cfg(feature = "extended-commands")]
    row("msetnx", -3, WRITE_DENYOOM, A::STRING, G::String, strings::msetnx).keys(1, -1, 2)
        .tips(&["request_policy:multi_shard", "response_policy:agg_min"])
        .specs(&[KeySpec::new(KF::OW.or(KF::INSERT), 1, -1, 2)]),
    #[cfg(feature = "extended-commands")]
    row("setnx", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::setnx).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::OW.or(KF::INSERT), 1, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("getset", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::getset).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("strlen", 2, READ_FAST, A::STRING, G::String, strings::strlen).keys(1, 1, 1).specs(KEY_RO),
    #[cfg(feature = "extended-commands")]
    row("append", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::append).keys(1, 1, 1)
        .specs(&[KeySpec::new(KF::RW.or(KF::INSERT), 1, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("setrange", 4, WRITE_DENYOOM, A::STRING, G::String, strings::setrange).keys(1, 1, 1).specs(KEY_RW_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("getrange", 4, F::READONLY, A::STRING, G::String, strings::getrange).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    #[cfg(feature = "extended-commands")]
    row("incrbyfloat", 3, WRITE_DENYOOM_FAST, A::STRING, G::String, strings::incrbyfloat).keys(1, 1, 1).specs(KEY_RW_ACCESS_UPDATE),
    #[cfg(feature = "extended-commands")]
    row("lcs", -3, F::READONLY, A::STRING, G::String, strings::lcs).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RO.or(KF::ACCESS), 1, 1, 1)]),
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
        .specs(&[KeySpec::new(KF::OW.or(KF::UPDATE), 2, 0, 1), KeySpec::new(KF::RO.or(KF::ACCESS), 3, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("substr", 4, F::READONLY, A::STRING, G::String, strings::getrange).keys(1, 1, 1).specs(KEY_RO_ACCESS),
    // Keys.
    row("del", -2, F::WRITE, A::KEYSPACE, G::Generic, keys::del).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RM.or(KF::DELETE), 1, -1, 1)]),
    row("unlink", -2, WRITE_FAST, A::KEYSPACE, G::Generic, keys::del).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RM.or(KF::DELETE), 1, -1, 1)]),
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
        .specs(&[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::DELETE), 1, 0, 1), KeySpec::new(KF::OW.or(KF::UPDATE), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("renamenx", 3, WRITE_FAST, A::KEYSPACE, G::Generic, keys::renamenx).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RW.or(KF::ACCESS).or(KF::DELETE), 1, 0, 1), KeySpec::new(KF::OW.or(KF::INSERT), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("copy", -3, WRITE_DENYOOM, A::KEYSPACE, G::Generic, keys::copy).keys(1, 2, 1)
        .specs(&[KeySpec::new(KF::RO.or(KF::ACCESS), 1, 0, 1), KeySpec::new(KF::OW.or(KF::UPDATE), 2, 0, 1)]),
    #[cfg(feature = "extended-commands")]
    row("touch", -2, READ_FAST, A::KEYSPACE, G::Generic, keys::touch).keys(1, -1, 1).tips(MULTI_SHARD_SUM)
        .specs(&[KeySpec::new(KF::RO, 1, -1, 1)]),
    #[cfg(feature = "extended-commands")]
    row("keys", 2, F::READONLY, A::KEYSPACE.or(A::DANGEROUS), G::Generic, keys::keys)
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"]),
    #[cfg(feature = "extended-commands")]
    row("scan", -2, F::READONLY, A::KEYSPACE, G::Generic, keys::scan).tips(&["nondeterministic_output", "request_policy:special"]),
    #[cfg(feature = "extended-commands")]
    row("randomkey", 1, F::READONLY, A::KEYSPACE, G::Generic, keys::randomkey)
        .tips(&["request_policy:all_shards", "nondeterministic_output"]),
    #[cfg(feature = "extended-commands")]
    row("object", -2, F::NONE, A::NONE, G::Generic, container).subcommands(OBJECT),
    // Server.
    row("dbsize", 1, READ_FAST, A::KEYSPACE, G::Server, server::dbsize).tips(ALL_SHARDS_SUM),
    row("flushall", -1, F::WRITE, A::KEYSPACE.or(A::DANGEROUS), G::Server, server::flush).tips(ALL_SHARDS_SUCCEEDED),
    row("flushdb", -1, F::WRITE, A::KEYSPACE.or(A::DANGEROUS), G::Server, server::flush).tips(ALL_SHARDS_SUCCEEDED),
    row("info", -1, LOADING_STALE, A::DANGEROUS, G::Server, server::info)
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    row("config", -2, F::NONE, A::NONE, G::Server, container).subcommands(CONFIG),
    row("command", -1, LOADING_STALE, A::CONNECTION, G::Server, command_list).tips(NONDETERMINISTIC_ORDER)
        .subcommands(COMMAND),
    // Connection.
    row("select", 2, LOADING_STALE.or(F::FAST), A::CONNECTION, G::Connection, server::select),
    row("client", -2, F::NONE, A::NONE, G::Connection, container).subcommands(CLIENT),
    row("auth", -2, NO_AUTH, A::CONNECTION, G::Connection, server::auth),
    row("hello", -1, NO_AUTH, A::CONNECTION, G::Connection, server::hello),
    row("ping", -1, F::FAST, A::CONNECTION, G::Connection, server::ping).tips(ALL_SHARDS_SUCCEEDED),
    row("echo", 2, LOADING_STALE.or(F::FAST), A::CONNECTION, G::Connection, server::echo),
    row("quit", -1, NO_AUTH, A::CONNECTION, G::Connection, server::quit),
    row("time", 1, LOADING_STALE.or(F::FAST), A::NONE, G::Server, server::time).tips(NONDETERMINISTIC),
    // Transactions (queued commands take memory: the host).
    #[cfg(feature = "alloc")]
    row("multi", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::multi),
    #[cfg(feature = "alloc")]
    row("exec", 1, F::NOSCRIPT.or(LOADING_STALE).or(F::SKIP_SLOWLOG), A::TRANSACTION, G::Transactions, transaction::exec),
    #[cfg(feature = "alloc")]
    row("discard", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::discard),
    #[cfg(feature = "alloc")]
    row("watch", -2, TX_FAST, A::TRANSACTION, G::Transactions, transaction::watch).keys(1, -1, 1)
        .specs(&[KeySpec::new(KF::RO, 1, -1, 1)]),
    #[cfg(feature = "alloc")]
    row("unwatch", 1, TX_FAST, A::TRANSACTION, G::Transactions, transaction::unwatch),
    // Pub/sub (channels and messages take memory: the host).
    #[cfg(feature = "alloc")]
    row("subscribe", -2, SUBSCRIBING, A::NONE, G::Pubsub, pubsub::subscribe),
    #[cfg(feature = "alloc")]
    row("unsubscribe", -1, SUBSCRIBING, A::NONE, G::Pubsub, pubsub::unsubscribe),
    #[cfg(feature = "alloc")]
    row("psubscribe", -2, SUBSCRIBING, A::NONE, G::Pubsub, pubsub::psubscribe),
    #[cfg(feature = "alloc")]
    row("punsubscribe", -1, SUBSCRIBING, A::NONE, G::Pubsub, pubsub::punsubscribe),
    #[cfg(feature = "alloc")]
    row("publish", 3, F::PUBSUB.or(LOADING_STALE).or(F::FAST), A::NONE, G::Pubsub, pubsub::publish),
    #[cfg(feature = "alloc")]
    row("pubsub", -2, F::NONE, A::NONE, G::Pubsub, container).subcommands(PUBSUB),
];

/// The flags of `SUBSCRIBE`, `UNSUBSCRIBE`, `PSUBSCRIBE` and `PUNSUBSCRIBE`.
#[cfg(feature = "alloc")]
const SUBSCRIBING: Flags = F::PUBSUB.or(F::NOSCRIPT).or(LOADING_STALE);

#[cfg(feature = "alloc")]
#[rustfmt::skip]
static PUBSUB: &[Command] = &[
    row("pubsub|numsub", -2, F::PUBSUB.or(LOADING_STALE), A::NONE, G::Pubsub, pubsub::numsub),
    row("pubsub|numpat", 2, F::PUBSUB.or(LOADING_STALE), A::NONE, G::Pubsub, pubsub::numpat),
    row("pubsub|channels", -2, F::PUBSUB.or(LOADING_STALE), A::NONE, G::Pubsub, pubsub::channels),
    #[cfg(feature = "command-docs")]
    row("pubsub|help", 2, LOADING_STALE, A::NONE, G::Pubsub, help),
];

/// The flags of `MULTI`, `DISCARD`, `WATCH` and `UNWATCH`.
#[cfg(feature = "alloc")]
const TX_FAST: Flags = F::NOSCRIPT.or(LOADING_STALE).or(F::FAST).or(F::ALLOW_BUSY);

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

#[rustfmt::skip]
static CONFIG: &[Command] = &[
    #[cfg(feature = "command-docs")]
    row("config|help", 2, LOADING_STALE, A::NONE, G::Server, help),
    row("config|rewrite", 2, ADMIN_CONFIG, A::NONE, G::Server, config::rewrite),
    row("config|resetstat", 2, ADMIN_CONFIG, A::NONE, G::Server, config::resetstat),
    row("config|get", -3, ADMIN_CONFIG, A::NONE, G::Server, config::get),
    row("config|set", -4, ADMIN_CONFIG, A::NONE, G::Server, config::set)
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
    #[cfg(all(feature = "alloc", feature = "extended-commands"))]
    row("client|list", -2, ADMIN_CLIENT, A::CONNECTION, G::Connection, clients::client_list).tips(NONDETERMINISTIC),
    #[cfg(all(feature = "alloc", feature = "extended-commands"))]
    row("client|kill", -3, ADMIN_CLIENT, A::CONNECTION, G::Connection, clients::client_kill),
    #[cfg(feature = "extended-commands")]
    row("client|no-evict", 3, F::ADMIN.or(CLIENT_FLAGS), A::CONNECTION, G::Connection, server::client_no_evict),
    // Redis 7.2's: client libraries send it on connecting.
    row("client|setinfo", -4, CLIENT_FLAGS, A::CONNECTION, G::Connection, server::client_setinfo),
];

const READ_FAST: Flags = F::READONLY.or(F::FAST);
const WRITE_FAST: Flags = F::WRITE.or(F::FAST);
const WRITE_DENYOOM: Flags = F::WRITE.or(F::DENYOOM);
const WRITE_DENYOOM_FAST: Flags = WRITE_DENYOOM.or(F::FAST);
const NONDETERMINISTIC: &[&str] = &["nondeterministic_output"];
const NONDETERMINISTIC_ORDER: &[&str] = &["nondeterministic_output_order"];
const ALL_SHARDS_SUM: &[&str] = &["request_policy:all_shards", "response_policy:agg_sum"];
const LOADING_STALE: Flags = F::LOADING.or(F::STALE);
const ADMIN_CONFIG: Flags = F::ADMIN.or(F::NOSCRIPT).or(LOADING_STALE);
const CLIENT_FLAGS: Flags = F::NOSCRIPT.or(LOADING_STALE);
#[cfg(all(feature = "alloc", feature = "extended-commands"))]
const ADMIN_CLIENT: Flags = F::ADMIN.or(CLIENT_FLAGS);
const NO_AUTH: Flags = F::NOSCRIPT
    .or(LOADING_STALE)
    .or(F::FAST)
    .or(F::NO_AUTH)
    .or(F::ALLOW_BUSY);
const MULTI_SHARD_SUM: &[&str] = &["request_policy:multi_shard", "response_policy:agg_sum"];
const ALL_SHARDS_SUCCEEDED: &[&str] =
    &["request_policy:all_shards", "response_policy:all_succeeded"];

impl Flags {
    pub(crate) const fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl Acl {
    pub(crate) const fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl KeyFlags {
    pub(crate) const fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// Why a command was not found.
pub(crate) enum Unknown {
    /// No such command.
    Command,
    /// The command has subcommands, and not this one.
    Subcommand,
}

/// The row for `argv`: the command, or its subcommand when it has subcommands and `argv` names
/// one (a container alone, as `CONFIG`, is its own row, whose arity then refuses it).
#[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
pub(crate) fn lookup(argv: &[&[u8]]) -> Result<&'static Command, Unknown> {
    lookup_row(argv).map(|(command, _)| command)
}

/// [`lookup`], with the row's place in the table (commands in order, each followed by its
/// subcommands, as [`id_of`] numbers them): what `INFO commandstats` counts by.
pub(crate) fn lookup_row(argv: &[&[u8]]) -> Result<(&'static Command, usize), Unknown> {
    let name = argv.first().copied().unwrap_or_default();
    let mut row = 0;
    let command = ROWS
        .iter()
        .find(|c| {
            let found = c.short_name().as_bytes().eq_ignore_ascii_case(name);
            if !found {
                row += 1 + c.subcommands.len();
            }
            found
        })
        .ok_or(Unknown::Command)?;
    match argv.get(1) {
        Some(sub) if !command.subcommands.is_empty() => command
            .subcommands
            .iter()
            .position(|s| s.short_name().as_bytes().eq_ignore_ascii_case(sub))
            .map(|at| (&command.subcommands[at], row + 1 + at))
            .ok_or(Unknown::Subcommand),
        _ => Ok((command, row)),
    }
}

/// Every row (commands and subcommands) in table order, as [`lookup_row`] numbers them.
#[cfg(feature = "extended-commands")]
pub(crate) fn all_rows() -> impl Iterator<Item = &'static Command> {
    ROWS.iter()
        .flat_map(|command| core::iter::once(command).chain(command.subcommands))
}

/// The most command names one `COMMAND INFO` or `COMMAND DOCS` takes: all a request can
/// carry.
const MAX_NAMES: usize = super::MAX_ARGS - 2;

/// A name that is no command (`COMMAND INFO` answers nil for it).
const UNKNOWN: u8 = u8::MAX;

/// A listing that may be longer than the reply buffer, and where it goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct ListingMore {
    listing: Listing,
    /// The next entry to write.
    next: u8,
    /// The commands named (ids, see [`by_id`]), `count` of them; none: every command.
    named: [u8; MAX_NAMES],
    count: u8,
}

/// What a long listing lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Listing {
    /// `COMMAND`, `COMMAND INFO`: each command's details.
    Info,
    /// `COMMAND DOCS`: each command's name and documentation.
    Docs,
    /// `COMMAND LIST`: names, with subcommands.
    #[cfg(feature = "command-docs")]
    Names,
}

impl ListingMore {
    /// Every command in the table.
    const fn all(listing: Listing) -> Self {
        Self {
            listing,
            next: 0,
            named: [0; MAX_NAMES],
            count: 0,
        }
    }

    /// The commands `names` name (full names, as `config|get`).
    fn named(listing: Listing, names: &[&[u8]]) -> Self {
        let mut more = Self::all(listing);
        for name in names.iter().take(MAX_NAMES) {
            let id = id_of(name);
            // DOCS leaves unknown names out; INFO answers nil for them.
            if id != UNKNOWN || listing == Listing::Info {
                more.named[usize::from(more.count)] = id;
                more.count += 1;
            }
        }
        more
    }

    /// How many entries the listing has.
    fn len(&self) -> usize {
        match self.count {
            0 => ROWS.len(),
            named => usize::from(named),
        }
    }

    /// Writes the header and as many entries as fit.
    fn start(self, out: &mut ReplyWriter<'_>) -> Reply {
        match self.listing {
            #[cfg(feature = "command-docs")]
            Listing::Names => {
                out.array_header(ROWS.iter().map(|c| 1 + c.subcommands.len()).sum())?
            }
            Listing::Docs => out.map_header(self.len())?,
            Listing::Info => out.array_header(self.len())?,
        }
        self.write(out)
    }

    /// Writes entries from `next` while they fit; the rest waits for [`resume`].
    fn write(mut self, out: &mut ReplyWriter<'_>) -> Reply {
        let first = self.next;
        while usize::from(self.next) < self.len() {
            let at = usize::from(self.next);
            let command = if self.count > 0 {
                by_id(self.named[at])
            } else {
                ROWS.get(at)
            };
            let mark = out.len();
            let written = match (self.listing, command) {
                (Listing::Info, Some(command)) => write_info(command, out),
                (Listing::Info, None) => out.null(),
                (Listing::Docs, Some(command)) => write_docs(command, out),
                #[cfg(feature = "command-docs")]
                (Listing::Names, Some(command)) => write_names(command, out),
                (_, None) => Ok(()),
            };
            if written.is_err() {
                out.truncate(mark);
                if self.next == first && mark == 0 {
                    return Err(WriteFull); // one entry larger than the whole buffer
                }
                return Ok(After::More(Continuation::listing(self)));
            }
            self.next += 1;
        }
        Ok(After::Continue)
    }
}

/// A command's id: its place in the table, each command followed by its subcommands.
fn id_of(name: &[u8]) -> u8 {
    let mut id = 0;
    for command in ROWS {
        for row in core::iter::once(command).chain(command.subcommands) {
            if row.name.as_bytes().eq_ignore_ascii_case(name) {
                return id;
            }
            id += 1;
        }
    }
    UNKNOWN
}

/// The command with this id (see [`id_of`]).
fn by_id(id: u8) -> Option<&'static Command> {
    ROWS.iter()
        .flat_map(|command| core::iter::once(command).chain(command.subcommands))
        .nth(usize::from(id))
        .filter(|_| id != UNKNOWN)
}

/// Goes on with a listing.
pub(crate) fn resume(more: ListingMore, out: &mut ReplyWriter<'_>) -> Reply {
    more.write(out)
}

/// `COMMAND`: every command's details.
fn command_list(_: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ListingMore::all(Listing::Info).start(out)
}

/// `COMMAND COUNT`: the table's rows.
fn command_count(_: &mut Context<'_, '_>, _: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    super::integer(out, ROWS.len() as i64)
}

/// `COMMAND LIST`: every name, with subcommands (`config|get`). Redis' `FILTERBY` is not
/// taken.
#[cfg(feature = "command-docs")]
fn command_list_names(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() > 2 {
        return super::error(out, super::SYNTAX);
    }
    ListingMore::all(Listing::Names).start(out)
}

/// `COMMAND INFO [name …]`: the named commands' details (nil for unknown names), or every
/// command's.
fn command_info(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    match &argv[2..] {
        [] => ListingMore::all(Listing::Info).start(out),
        names => ListingMore::named(Listing::Info, names).start(out),
    }
}

/// `COMMAND DOCS [name …]`: a map of the named (known) commands to their documentation, or
/// every command's.
fn command_docs(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let listing = match &argv[2..] {
        [] => ListingMore::all(Listing::Docs),
        names => ListingMore::named(Listing::Docs, names),
    };
    if listing.count == 0 && argv.len() > 2 {
        out.map_header(0)?;
        return Ok(After::Continue);
    }
    listing.start(out)
}

/// The handler of a command with subcommands and arity -2, which its arity never lets run:
/// with a word after it, a subcommand runs (or the client hears it is unknown).
fn container(_: &mut Context<'_, '_>, _: &[&[u8]], _: &mut ReplyWriter<'_>) -> Reply {
    Ok(After::Continue)
}

/// `<COMMAND> HELP`: the subcommands, from the table (with the `command-docs` feature).
#[cfg(feature = "command-docs")]
fn help(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Ok(command) = lookup(&argv[..1]) else {
        return Ok(After::Continue);
    };
    out.array_header(1 + command.subcommands.len())?;
    let mut line: heapless::String<64> = heapless::String::new();
    let _ = core::fmt::write(
        &mut line,
        format_args!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            super::Upper(command.name.as_bytes())
        ),
    );
    out.simple(&line)?;
    for sub in command.subcommands {
        line.clear();
        let _ = core::fmt::write(
            &mut line,
            format_args!("{}", super::Upper(sub.short_name().as_bytes())),
        );
        out.simple(&line)?;
    }
    Ok(After::Continue)
}

/// Writes the names of set bits as a set of simple strings, in bit order.
fn write_bit_names(bits: u32, names: &[&str], out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.set_header(bits.count_ones() as usize)?;
    for (bit, name) in names.iter().enumerate() {
        if bits & (1 << bit) != 0 {
            out.simple(name)?;
        }
    }
    Ok(())
}

/// One command's `COMMAND INFO` entry, as Redis 7's `addReplyCommandInfo`.
fn write_info(command: &Command, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.array_header(10)?;
    out.bulk(command.name.as_bytes())?;
    out.integer(i64::from(command.arity))?;
    write_bit_names(u32::from(command.flags.0), &Flags::NAMES, out)?;
    for position in command.keys {
        out.integer(i64::from(position))?;
    }
    #[cfg(feature = "command-docs")]
    {
        let categories = command.acl.with_implicit(command.flags);
        write_bit_names(categories.0, &Categories::NAMES, out)?;
        write_docs_info(command, out)?;
    }
    #[cfg(not(feature = "command-docs"))]
    {
        out.set_header(0)?; // ACL categories
        out.set_header(0)?; // tips
        out.set_header(0)?; // key specs
    }
    // As Redis 7.0's `addReplyCommandSubCommands`: none is an empty set, some an array.
    if command.subcommands.is_empty() {
        out.set_header(0)?;
    } else {
        out.array_header(command.subcommands.len())?;
    }
    for sub in command.subcommands {
        write_info(sub, out)?;
    }
    Ok(())
}

/// A command's tips and key specs, as Redis 7's `addReplyCommandInfo` lists them.
#[cfg(feature = "command-docs")]
fn write_docs_info(command: &Command, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.set_header(command.tips.len())?;
    for tip in command.tips {
        out.bulk(tip.as_bytes())?;
    }
    out.set_header(command.specs.len())?;
    for spec in command.specs {
        let notes = !spec.notes.is_empty();
        out.map_header(if notes { 4 } else { 3 })?;
        if notes {
            out.bulk(b"notes")?;
            out.bulk(spec.notes.as_bytes())?;
        }
        out.bulk(b"flags")?;
        write_bit_names(u32::from(spec.flags.0), &KeyFlags::NAMES, out)?;
        out.bulk(b"begin_search")?;
        out.map_header(2)?;
        out.bulk(b"type")?;
        out.bulk(b"index")?;
        out.bulk(b"spec")?;
        out.map_header(1)?;
        out.bulk(b"index")?;
        out.integer(i64::from(spec.index))?;
        out.bulk(b"find_keys")?;
        out.map_header(2)?;
        out.bulk(b"type")?;
        out.bulk(b"range")?;
        out.bulk(b"spec")?;
        out.map_header(3)?;
        out.bulk(b"lastkey")?;
        out.integer(i64::from(spec.last))?;
        out.bulk(b"keystep")?;
        out.integer(i64::from(spec.step))?;
        out.bulk(b"limit")?;
        out.integer(0)?;
    }
    Ok(())
}

/// One command's `COMMAND DOCS` entry: its name and a map of what this server documents (the
/// group; summaries and argument lists are not kept, to save flash).
fn write_docs(command: &Command, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.bulk(command.name.as_bytes())?;
    let subs = !command.subcommands.is_empty();
    out.map_header(if subs { 2 } else { 1 })?;
    out.bulk(b"group")?;
    out.bulk(command.group.name().as_bytes())?;
    if subs {
        out.bulk(b"subcommands")?;
        out.map_header(command.subcommands.len())?;
        for sub in command.subcommands {
            write_docs(sub, out)?;
        }
    }
    Ok(())
}

/// A command's name and its subcommands' (`COMMAND LIST`).
#[cfg(feature = "command-docs")]
fn write_names(command: &Command, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.bulk(command.name.as_bytes())?;
    for sub in command.subcommands {
        out.bulk(sub.name.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_row_numbers_rows_as_the_table_lists_them() {
        let mut count = 0;
        for command in ROWS {
            for row in core::iter::once(command).chain(command.subcommands) {
                let words: heapless::Vec<&[u8], 2> =
                    row.name.split('|').map(str::as_bytes).collect();
                let (found, at) = lookup_row(&words).ok().expect(row.name);
                assert_eq!((found.name, at), (row.name, count));
                assert_eq!(usize::from(id_of(row.name.as_bytes())), count);
                count += 1;
            }
        }
        #[cfg(feature = "extended-commands")]
        assert!(count <= crate::CommandStats::ROWS, "{count} rows");
    }

    #[test]
    fn names_are_unique_lowercase_and_subcommands_prefixed() {
        let rows = ROWS;
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.name, row.name.to_ascii_lowercase());
            assert!(!row.name.contains('|'), "{}", row.name);
            assert!(
                rows[i + 1..].iter().all(|other| other.name != row.name),
                "{} twice",
                row.name
            );
            for sub in row.subcommands {
                assert_eq!(sub.name.split_once('|').map(|(p, _)| p), Some(row.name));
            }
        }
    }

    #[test]
    fn arity_follows_redis_sign_convention() {
        let get = by_id(id_of(b"get")).unwrap();
        assert!(!get.arity_allows(1) && get.arity_allows(2) && !get.arity_allows(3));
        let set = by_id(id_of(b"set")).unwrap();
        assert!(!set.arity_allows(2) && set.arity_allows(3) && set.arity_allows(9));
    }

    #[test]
    fn implicit_acl_categories_follow_flags() {
        let get = by_id(id_of(b"get")).unwrap();
        let acl = get.acl.with_implicit(get.flags);
        assert_eq!(acl.0, Categories::READ | (1 << 7) | Categories::FAST);
        let info = by_id(id_of(b"config|get")).unwrap();
        let acl = info.acl.with_implicit(info.flags);
        assert_eq!(
            acl.0,
            Categories::ADMIN | Categories::SLOW | Categories::DANGEROUS
        );
    }
}
