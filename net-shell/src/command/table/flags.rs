//! What a row says about its command besides its name, arity and handler: Redis' command flags,
//! the ACL categories, the key-spec flags and the documentation group, each a set of named bits
//! in the order `COMMAND INFO` lists them (a flag's Redis name is its constant's name, spelt as
//! [`Listed`] says).

bitflags::bitflags! {
    /// Command flags: those of Redis' flags that commands here carry, in the order `COMMAND
    /// INFO` lists them (Redis' `addReplyCommandFlags`).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) struct Flags: u16 {
        const WRITE = 1 << 0;
        const READONLY = 1 << 1;
        const DENYOOM = 1 << 2;
        const ADMIN = 1 << 3;
        const PUBSUB = 1 << 4;
        const NOSCRIPT = 1 << 5;
        const BLOCKING = 1 << 6;
        const LOADING = 1 << 7;
        const STALE = 1 << 8;
        const SKIP_SLOWLOG = 1 << 9;
        const FAST = 1 << 10;
        /// Served before the client authenticates (`AUTH`, `HELLO`, `QUIT`).
        const NO_AUTH = 1 << 11;
        const NO_MULTI = 1 << 12;
        /// Keys are found by reading the command (`LMPOP`'s count of keys).
        const MOVABLEKEYS = 1 << 14;
        const ALLOW_BUSY = 1 << 13;
    }
}

bitflags::bitflags! {
    /// ACL categories, in the order Redis lists them (`ACLCommandCategories` in `acl.c`).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) struct Categories: u32 {
        const KEYSPACE = 1 << 0;
        const READ = 1 << 1;
        const WRITE = 1 << 2;
        const SET = 1 << 3;
        const SORTEDSET = 1 << 4;
        const LIST = 1 << 5;
        const HASH = 1 << 6;
        const STRING = 1 << 7;
        const BITMAP = 1 << 8;
        const HYPERLOGLOG = 1 << 9;
        const GEO = 1 << 10;
        const STREAM = 1 << 11;
        const PUBSUB = 1 << 12;
        const ADMIN = 1 << 13;
        const FAST = 1 << 14;
        const SLOW = 1 << 15;
        const BLOCKING = 1 << 16;
        const DANGEROUS = 1 << 17;
        const CONNECTION = 1 << 18;
        const TRANSACTION = 1 << 19;
    }
}

bitflags::bitflags! {
    /// The ACL categories Redis' JSON names for a command, each named as in [`Categories`]; the
    /// rest follow from its flags, as Redis' `setImplicitACLCategories` derives them. (A byte
    /// per row rather than [`Categories`]' four: the table lives in a board's flash.)
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) struct Acl: u8 {
        const KEYSPACE = 1 << 0;
        const STRING = 1 << 1;
        const BITMAP = 1 << 2;
        const DANGEROUS = 1 << 3;
        const CONNECTION = 1 << 4;
        const TRANSACTION = 1 << 5;
        const LIST = 1 << 6;
        const HASH = 1 << 7;
    }
}

bitflags::bitflags! {
    /// Key-spec flags, in the order `COMMAND INFO` lists them (Redis' `addReplyFlagsForKeyArgs`).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) struct KeyFlags: u16 {
        const RO = 1 << 0;
        const RW = 1 << 1;
        const OW = 1 << 2;
        const RM = 1 << 3;
        const ACCESS = 1 << 4;
        const UPDATE = 1 << 5;
        const INSERT = 1 << 6;
        const DELETE = 1 << 7;
        const NOT_KEY = 1 << 8;
        const INCOMPLETE = 1 << 9;
        const VARIABLE_FLAGS = 1 << 10;
    }
}

/// A set of flags `COMMAND INFO` lists by name: how Redis spells each constant's name.
pub(crate) trait Listed: bitflags::Flags + Copy {
    /// Written before each name (`@` before an ACL category).
    const PREFIX: &'static str = "";

    /// Whether `name` stays in capitals (Redis writes the key-spec access flags `RO`, `RW`,
    /// `OW` and `RM` so); every other name is written in lower case.
    fn capitals(_name: &str) -> bool {
        false
    }
}

impl Listed for Flags {}

impl Listed for Categories {
    const PREFIX: &'static str = "@";
}

impl Listed for KeyFlags {
    fn capitals(name: &str) -> bool {
        name.len() == 2
    }
}

impl Acl {
    /// These categories and those Redis derives from `flags`.
    #[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
    pub(crate) fn with_implicit(self, flags: Flags) -> Categories {
        let mut categories = Categories::empty();
        for (name, _) in self.iter_names() {
            categories |= Categories::from_name(name).unwrap_or(Categories::empty());
        }
        let implied = [
            (Flags::WRITE, Categories::WRITE),
            (Flags::READONLY, Categories::READ),
            (Flags::ADMIN, Categories::ADMIN.union(Categories::DANGEROUS)),
            (Flags::PUBSUB, Categories::PUBSUB),
            (Flags::FAST, Categories::FAST),
            (Flags::BLOCKING, Categories::BLOCKING),
        ];
        for (flag, implied) in implied {
            if flags.contains(flag) {
                categories |= implied;
            }
        }
        if !categories.contains(Categories::FAST) {
            categories |= Categories::SLOW;
        }
        categories
    }
}

/// Where a command's keys are (Redis 7 key specs): from argument `index`, a range up to
/// `last` (negative: from the end) in steps of `step`; or (`keynum`) as many as argument
/// `last` says, from `first` after it, in steps of `step` (`LMPOP`).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "command-docs"), allow(dead_code))]
pub(crate) struct KeySpec {
    pub(super) notes: &'static str,
    pub(super) flags: KeyFlags,
    pub(super) index: u8,
    pub(super) last: i8,
    pub(super) step: u8,
    /// `Some(firstkey)`: found by a count of keys (`keynumidx` is `last`).
    pub(super) keynum: Option<u8>,
}

impl KeySpec {
    pub(crate) const fn new(flags: KeyFlags, index: u8, last: i8, step: u8) -> Self {
        Self {
            notes: "",
            flags,
            index,
            last,
            step,
            keynum: None,
        }
    }

    /// Keys after argument `index`: their count at `keynumidx` (relative), the first
    /// `firstkey` after that, then every `keystep`.
    #[cfg_attr(not(feature = "lists"), allow(dead_code))]
    pub(crate) const fn keynum(
        flags: KeyFlags,
        index: u8,
        keynumidx: i8,
        firstkey: u8,
        keystep: u8,
    ) -> Self {
        Self {
            notes: "",
            flags,
            index,
            last: keynumidx,
            step: keystep,
            keynum: Some(firstkey),
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
    #[cfg_attr(not(feature = "transactions"), allow(dead_code))]
    Transactions,
    #[cfg_attr(not(feature = "pubsub"), allow(dead_code))]
    Pubsub,
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    Cluster,
    #[cfg_attr(not(feature = "lists"), allow(dead_code))]
    List,
    #[cfg_attr(not(feature = "hashes"), allow(dead_code))]
    Hash,
}

impl Group {
    pub(super) const fn name(self) -> &'static str {
        match self {
            Self::Generic => "generic",
            Self::String => "string",
            Self::Bitmap => "bitmap",
            Self::Connection => "connection",
            Self::Server => "server",
            Self::Transactions => "transactions",
            Self::Pubsub => "pubsub",
            Self::Cluster => "cluster",
            Self::List => "list",
            Self::Hash => "hash",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_acl_categories_follow_flags() {
        let get = Acl::STRING.with_implicit(Flags::READONLY.union(Flags::FAST));
        assert_eq!(
            get,
            Categories::READ | Categories::STRING | Categories::FAST
        );
        let config_get = Acl::empty().with_implicit(Flags::ADMIN.union(Flags::NOSCRIPT));
        assert_eq!(
            config_get,
            Categories::ADMIN | Categories::SLOW | Categories::DANGEROUS
        );
    }

    #[test]
    fn every_acl_bit_names_a_category() {
        for (name, _) in Acl::all().iter_names() {
            assert!(Categories::from_name(name).is_some(), "{name}");
        }
    }
}
