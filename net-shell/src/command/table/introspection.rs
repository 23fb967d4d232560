//! Introspection generated from the rows: `COMMAND` and its `INFO`, `DOCS`, `LIST` and
//! `COUNT` subcommands, and each container's `HELP`. A listing longer than the reply buffer
//! goes out in parts ([`ListingMore`]).

use super::flags::Listed;
#[cfg(feature = "command-docs")]
use super::lookup;
use super::{by_id, id_of, Command, ROWS, UNKNOWN};
use crate::command::{After, Context, Continuation, Reply, ReplyWriter};
use crate::resp::WriteFull;

/// The most command names one `COMMAND INFO` or `COMMAND DOCS` takes: all a request can
/// carry.
const MAX_NAMES: usize = crate::command::MAX_ARGS - 2;

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

/// Goes on with a listing.
pub(crate) fn resume(more: ListingMore, out: &mut ReplyWriter<'_>) -> Reply {
    more.write(out)
}

/// `COMMAND`: every command's details.
pub(super) fn command_list(
    _: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ListingMore::all(Listing::Info).start(out)
}

/// `COMMAND COUNT`: the table's rows.
pub(super) fn command_count(
    _: &mut Context<'_, '_>,
    _: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    crate::command::integer(out, ROWS.len() as i64)
}

/// `COMMAND LIST`: every name, with subcommands (`config|get`). Redis' `FILTERBY` is not
/// taken.
#[cfg(feature = "command-docs")]
pub(super) fn command_list_names(
    _: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    if argv.len() > 2 {
        return crate::command::error(out, crate::command::SYNTAX);
    }
    ListingMore::all(Listing::Names).start(out)
}

/// `COMMAND INFO [name …]`: the named commands' details (nil for unknown names), or every
/// command's.
pub(super) fn command_info(
    _: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    match &argv[2..] {
        [] => ListingMore::all(Listing::Info).start(out),
        names => ListingMore::named(Listing::Info, names).start(out),
    }
}

/// `COMMAND DOCS [name …]`: a map of the named (known) commands to their documentation, or
/// every command's.
pub(super) fn command_docs(
    _: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
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

/// `<COMMAND> HELP`: the subcommands, from the table (with the `command-docs` feature).
#[cfg(feature = "command-docs")]
pub(super) fn help(_: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let Ok(command) = lookup(&argv[..1]) else {
        return Ok(After::Continue);
    };
    out.array_header(1 + command.subcommands.len())?;
    let mut line: heapless::String<64> = heapless::String::new();
    let _ = core::fmt::write(
        &mut line,
        format_args!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            crate::command::Upper(command.name.as_bytes())
        ),
    );
    out.simple(&line)?;
    for sub in command.subcommands {
        line.clear();
        let _ = core::fmt::write(
            &mut line,
            format_args!("{}", crate::command::Upper(sub.short_name().as_bytes())),
        );
        out.simple(&line)?;
    }
    Ok(After::Continue)
}

/// Writes the names of the flags in `set` as a set of simple strings, in bit order, spelt as
/// Redis spells them.
fn write_set<T: Listed>(set: T, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.set_header(set.iter_names().count())?;
    for (name, _) in set.iter_names() {
        let mut spelt: heapless::String<24> = heapless::String::new();
        let _ = spelt.push_str(T::PREFIX);
        for c in name.chars() {
            let c = if T::capitals(name) {
                c
            } else {
                c.to_ascii_lowercase()
            };
            let _ = spelt.push(c);
        }
        out.simple(&spelt)?;
    }
    Ok(())
}

/// One command's `COMMAND INFO` entry, as Redis 7's `addReplyCommandInfo`.
fn write_info(command: &Command, out: &mut ReplyWriter<'_>) -> Result<(), WriteFull> {
    out.array_header(10)?;
    out.bulk(command.name.as_bytes())?;
    out.integer(i64::from(command.arity))?;
    write_set(command.flags, out)?;
    for position in command.keys {
        out.integer(i64::from(position))?;
    }
    #[cfg(feature = "command-docs")]
    {
        let categories = command.acl.with_implicit(command.flags);
        write_set(categories, out)?;
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
        write_set(spec.flags, out)?;
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
        match spec.keynum {
            None => {
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
            Some(first) => {
                out.bulk(b"keynum")?;
                out.bulk(b"spec")?;
                out.map_header(3)?;
                out.bulk(b"keynumidx")?;
                out.integer(i64::from(spec.last))?;
                out.bulk(b"firstkey")?;
                out.integer(i64::from(first))?;
                out.bulk(b"keystep")?;
                out.integer(i64::from(spec.step))?;
            }
        }
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
