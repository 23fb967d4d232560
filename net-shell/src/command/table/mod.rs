//! The command table: one row per command, as Redis' `struct redisCommand` (`server.h`) and
//! `commands/*.json`, and the `COMMAND` listings generated from it.
//!
//! A row holds the name, the arity (positive: exactly that many words with the name; negative:
//! at least that many), the flags and ACL categories Redis gives the command, its key positions
//! (the legacy first/last/step and the key specs), its tips, its subcommands, and its handler.
//! Flags, categories, tips and key specs were taken from redis-server 7.0.15's `COMMAND INFO`,
//! so `COMMAND INFO get` answers what Redis answers; the differential test checks it.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | a row ([`Command`]), and finding the row for a request |
//! | `flags.rs` | the named bit sets a row carries: flags, ACL categories, key-spec flags |
//! | `rows.rs` | the rows: to add a command, add its row there and its handler beside its kin |
//! | `introspection.rs` | `COMMAND`, `COMMAND INFO`/`DOCS`/`LIST`/`COUNT` and `HELP`, from the rows |

mod flags;
mod introspection;
mod rows;

use super::{After, Context, Reply, ReplyWriter};
pub(crate) use flags::Flags;
use flags::{Acl, Group, KeySpec};
pub(crate) use introspection::{resume, ListingMore};
pub(crate) use rows::ROWS;

/// A command's handler: `argv[0]` is the command's name (`argv[1]` a subcommand's), and the
/// arity is already checked.
pub(crate) type Handler = fn(&mut Context<'_, '_>, &[&[u8]], &mut ReplyWriter<'_>) -> Reply;

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
    /// For a command whose keys are counted (`LMPOP numkeys key …`): the argument that holds
    /// the count, the keys following it. 0: the keys are where [`keys`](Self::keys) says.
    #[cfg(feature = "lists")]
    key_count_at: u8,
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
        #[cfg(feature = "lists")]
        key_count_at: 0,
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

    /// Keys counted by argument `at`, following it (Redis' `lmpopGetKeys`).
    #[cfg(feature = "lists")]
    const fn keys_counted(mut self, at: u8) -> Self {
        self.key_count_at = at;
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

    /// The arguments that are keys: by the legacy first/last/step positions (Redis'
    /// `getKeysUsingLegacyRangeSpec`), or after their count (`LMPOP`); none for a command without
    /// keys, or whose count is not a number from 1 to the arguments that follow it (the command
    /// then answers its own error, as Redis' `genericGetKeys` finds no keys there either).
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn key_args<'v>(&self, argv: &'v [&'v [u8]]) -> impl Iterator<Item = &'v [u8]> {
        let words = argv.len() as isize;
        let [first, last, step] = self.keys.map(isize::from);
        let last = if last < 0 { words + last } else { last };
        let (first, last, step) = if first <= 0 || step <= 0 {
            (1, 0, 1)
        } else {
            (first, last.min(words - 1), step)
        };
        #[cfg(feature = "lists")]
        let (first, last, step) = match self.key_count_at {
            0 => (first, last, step),
            at => {
                let at = isize::from(at);
                let count = argv
                    .get(at as usize)
                    .and_then(|word| core::str::from_utf8(word).ok())
                    .and_then(|word| word.parse::<isize>().ok())
                    .filter(|&count| count >= 1 && count < words - at);
                count.map_or((1, 0, 1), |count| (at + 1, at + count, 1))
            }
        };
        (first..=last)
            .step_by(step as usize)
            .filter_map(|i| argv.get(i as usize).copied())
    }

    /// The name a subcommand is looked up by (`get` of `config|get`).
    fn short_name(&self) -> &'static str {
        match self.name.split_once('|') {
            Some((_, sub)) => sub,
            None => self.name,
        }
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

/// A name that is no command (`COMMAND INFO` answers nil for it).
const UNKNOWN: u8 = u8::MAX;

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

/// The handler of a command with subcommands and arity -2, which its arity never lets run:
/// with a word after it, a subcommand runs (or the client hears it is unknown).
fn container(_: &mut Context<'_, '_>, _: &[&[u8]], _: &mut ReplyWriter<'_>) -> Reply {
    Ok(After::Continue)
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
    fn keys_are_found_by_position_or_after_their_count() {
        let keys = |words: &[&str]| -> heapless::Vec<heapless::String<8>, 8> {
            let argv: heapless::Vec<&[u8], 8> = words.iter().map(|w| w.as_bytes()).collect();
            let command = lookup(&argv).ok().expect(words[0]);
            command
                .key_args(&argv)
                .map(|key| core::str::from_utf8(key).unwrap().try_into().unwrap())
                .collect()
        };
        assert_eq!(keys(&["del", "a", "b"]), ["a", "b"]);
        assert_eq!(keys(&["ping"]), [] as [&str; 0]);
        #[cfg(feature = "lists")]
        {
            assert_eq!(keys(&["lmpop", "2", "a", "b", "left"]), ["a", "b"]);
            assert_eq!(keys(&["lmpop", "1", "a", "left", "count", "2"]), ["a"]);
            // A count out of range or not a number finds no keys: the command answers.
            assert_eq!(keys(&["lmpop", "3", "a", "left"]), [] as [&str; 0]);
            assert_eq!(keys(&["lmpop", "0", "a", "left"]), [] as [&str; 0]);
            assert_eq!(keys(&["lmpop", "-1", "a", "left"]), [] as [&str; 0]);
            assert_eq!(keys(&["lmpop", "x", "a", "left"]), [] as [&str; 0]);
        }
        #[cfg(feature = "blocking-lists")]
        assert_eq!(keys(&["blmpop", "0", "2", "a", "b", "left"]), ["a", "b"]);
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
        use flags::Categories;
        let get = by_id(id_of(b"get")).unwrap();
        let acl = get.acl.with_implicit(get.flags);
        assert_eq!(
            acl,
            Categories::READ | Categories::STRING | Categories::FAST
        );
        let info = by_id(id_of(b"config|get")).unwrap();
        let acl = info.acl.with_implicit(info.flags);
        assert_eq!(
            acl,
            Categories::ADMIN | Categories::SLOW | Categories::DANGEROUS
        );
    }
}
