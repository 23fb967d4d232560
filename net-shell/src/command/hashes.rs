//! The hash commands (Redis 7.0's `t_hash.c`) over hashes kept as one value each in the
//! store. A small hash is packed ([`crate::store::packed`]: fields, values and deadlines
//! alternating, in the order fields were added, as Redis' listpack keeps them), and a change
//! rewrites it through the reply buffer's spare room. Past Redis' thresholds
//! ([`HashPacking`](crate::HashPacking): by default more than 512 fields, or a field or value
//! over 64 bytes) it is written for good with an index ([`crate::store::fields`]), as Redis
//! converts to a hash table, and changed in place: a field is found, set or removed in O(1). A
//! hash left empty is deleted.

use super::events::Class;
use super::float::{Decimal as Float, NotDecimal};
use super::types::WrongType;
use super::{error, integer, After, Context, Reply, ReplyWriter, NOT_INTEGER};
use crate::decimal::{parse_i64, Decimal};
use crate::store::fields::{self, is_indexed, FieldHasher, Fields, FieldsMut, FieldsWriter};
use crate::store::packed::{element_len, Packed, PackedWriter};
use crate::store::{StoreError, Ttl, ValueKind};
use timer_core::Tick;

/// A hash value, read in place at a time `now`: each field with its value and its deadline
/// (none, or the last tick it lives through). A field past its deadline is not seen (its timer
/// removes it, with its event).
#[derive(Clone, Copy)]
pub(super) struct Hash<'a> {
    value: &'a [u8],
    now: Tick,
    hasher: FieldHasher,
}

/// A field's deadline from its deadline bytes.
fn deadline_of(meta: &[u8]) -> Option<Tick> {
    <[u8; 8]>::try_from(meta).ok().map(Tick::from_le_bytes)
}

impl<'a> Hash<'a> {
    /// Reads `value` as a hash at `now`, finding fields with `hasher` (the store's
    /// [`field_hasher`](crate::store::Store::field_hasher); any, to only walk the fields).
    pub(super) fn new(value: &'a [u8], now: Tick, hasher: FieldHasher) -> Self {
        Self { value, now, hasher }
    }

    /// Whether it has an index (Redis' `hashtable` encoding).
    pub(super) fn is_indexed(self) -> bool {
        is_indexed(self.value)
    }

    /// Every field, live or past its deadline, with its value and deadline bytes.
    fn raw_entries(self) -> impl Iterator<Item = fields::Entry<'a>> {
        let indexed = self.is_indexed();
        let mut packed = (!indexed).then(|| Packed::new(self.value).iter());
        let mut index = indexed.then(|| Fields::new(self.value).entries());
        core::iter::from_fn(move || match (&mut packed, &mut index) {
            (Some(elements), _) => Some((elements.next()?, elements.next()?, elements.next()?)),
            (None, Some(entries)) => entries.next(),
            (None, None) => None,
        })
    }

    /// Every field, live or past its deadline, with its value and deadline.
    pub(super) fn entries(self) -> impl Iterator<Item = (&'a [u8], &'a [u8], Option<Tick>)> {
        self.raw_entries().map(|(f, v, m)| (f, v, deadline_of(m)))
    }

    /// Each live field with its value, in the order they were added.
    pub(super) fn pairs(self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        let now = self.now;
        self.entries()
            .filter(move |(_, _, at)| at.is_none_or(|at| at >= now))
            .map(|(f, v, _)| (f, v))
    }

    /// How many live fields: of an indexed hash, its count in O(1) unless a field may be past
    /// its deadline and not yet swept ([`Fields::earliest`] before `now`: only while the field
    /// sweep is behind its budget), then counted.
    pub(super) fn len(self) -> usize {
        let known = self
            .is_indexed()
            .then(|| Fields::new(self.value).live_len(self.now));
        known.flatten().unwrap_or_else(|| self.pairs().count())
    }

    /// Field `field`, live or past its deadline, with its value and deadline.
    fn entry(self, field: &[u8]) -> Option<(&'a [u8], Option<Tick>)> {
        if self.is_indexed() {
            let (_, value, meta) = Fields::new(self.value).find(&self.hasher, field)?;
            return Some((value, deadline_of(meta)));
        }
        self.entries()
            .find(|(f, _, _)| *f == field)
            .map(|(_, v, at)| (v, at))
    }

    /// The value of live `field`.
    pub(super) fn get(self, field: &[u8]) -> Option<&'a [u8]> {
        self.deadline_and_value(field).map(|(_, value)| value)
    }

    /// The deadline of live `field` (`Some(None)`: it has none; `None`: no such field).
    pub(super) fn deadline(self, field: &[u8]) -> Option<Option<Tick>> {
        self.deadline_and_value(field).map(|(at, _)| at)
    }

    /// The deadline and value of live `field`.
    pub(super) fn deadline_and_value(self, field: &[u8]) -> Option<(Option<Tick>, &'a [u8])> {
        let now = self.now;
        let (value, at) = self.entry(field)?;
        at.is_none_or(|at| at >= now).then_some((at, value))
    }
}

/// The hash at `key` (`None`: no such key), or the `WRONGTYPE` reply returned.
macro_rules! hash_or_return {
    ($ctx:expr, $key:expr, $out:expr) => {
        match $ctx.hash($key) {
            Ok(hash) => hash,
            Err(wrong) => return wrong.reply($out),
        }
    };
}
pub(super) use hash_or_return;

impl Context<'_, '_> {
    /// The hash at `key` (`None`: no such key), or [`WrongType`].
    pub(super) fn hash(&mut self, key: &[u8]) -> Result<Option<Hash<'_>>, WrongType> {
        let now = self.clock.now;
        let hasher = self.store.field_hasher();
        Ok(self
            .value_of(key, ValueKind::Hash)?
            .map(|value| Hash::new(value, now, hasher)))
    }
}

/// Fields a command names: each of its words, or the field of each field-value pair.
#[derive(Clone, Copy)]
pub(super) struct Named<'v> {
    words: &'v [&'v [u8]],
    /// 1: each word; 2: every other word, from the first.
    step: usize,
}

impl<'v> Named<'v> {
    /// No field.
    pub(super) const NONE: Self = Self {
        words: &[],
        step: 1,
    };

    /// Each of `words`.
    pub(super) fn each(words: &'v [&'v [u8]]) -> Self {
        Self { words, step: 1 }
    }

    /// The fields of `words`, field-value pairs.
    pub(super) fn fields_of_pairs(words: &'v [&'v [u8]]) -> Self {
        Self { words, step: 2 }
    }

    pub(super) fn iter(self) -> impl Iterator<Item = &'v [u8]> {
        self.words.iter().step_by(self.step).copied()
    }

    fn contains(self, field: &[u8]) -> bool {
        self.iter().any(|f| f == field)
    }

    fn len(self) -> usize {
        self.words.len().div_ceil(self.step)
    }
}

impl Default for Named<'_> {
    fn default() -> Self {
        Self::NONE
    }
}

/// What a command does to a live field it names, given the field's deadline: the same rule
/// for each field, so a field named twice ends as it would named once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum FieldChange {
    /// Removed.
    Delete,
    /// Given this deadline (`None`: none).
    Deadline(Option<Tick>),
}

/// The rule of a command that changes fields: a field with deadline `current` (`None`: none)
/// changes so, or stays (`None`).
pub(super) type ChangeRule<'v> = &'v dyn Fn(Option<Tick>) -> Option<FieldChange>;

/// A change to a hash's fields.
#[derive(Default)]
pub(super) struct Edit<'v> {
    /// Fields set to values, as field-value pairs (`field value field value …`, as the
    /// command's words are); a field set loses its deadline unless `keep_ttl` (the last value
    /// given for a field wins, as HSET's in Redis).
    pub(super) set: &'v [&'v [u8]],
    pub(super) keep_ttl: bool,
    /// Fields removed.
    pub(super) delete: Named<'v>,
    /// Live fields changed by `change`.
    pub(super) changed: Named<'v>,
    pub(super) change: Option<ChangeRule<'v>>,
}

impl<'v> Edit<'v> {
    /// Each field set with its value.
    fn pairs(&self) -> impl DoubleEndedIterator<Item = (&'v [u8], &'v [u8])> {
        self.set.chunks_exact(2).map(|pair| (pair[0], pair[1]))
    }

    /// How live `field` with deadline `at` changes.
    fn change_of(&self, field: &[u8], at: Option<Tick>) -> Option<FieldChange> {
        let change = self.change?;
        if self.changed.contains(field) {
            change(at)
        } else {
            None
        }
    }
}

/// Writes `old` (a hash's value) with `edit` applied into `writer`, leaving out the fields
/// past their deadline if `drop_expired`; the fields added (not live before) and the fields
/// written.
fn apply(
    old: &[u8],
    now: Tick,
    (edit, drop_expired): (&Edit<'_>, bool),
    writer: &mut PackedWriter<'_>,
) -> (usize, usize) {
    let hash = Hash::new(old, now, FieldHasher::default()); // packed: no index
    let given = |field: &[u8]| {
        edit.pairs()
            .rev()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v)
    };
    let mut written = 0;
    let mut push = |writer: &mut PackedWriter<'_>, field: &[u8], value: &[u8], at: Option<Tick>| {
        writer.push(field);
        writer.push(value);
        match at {
            Some(at) => writer.push(&at.to_le_bytes()),
            None => writer.push(b""),
        }
        written += 1;
    };
    for (field, value, at) in hash.entries() {
        let live = at.is_none_or(|at| at >= now);
        if edit.delete.contains(field) || (drop_expired && !live) {
            continue;
        }
        match given(field) {
            // Set: a field past its deadline is made anew, without one.
            Some(value) => {
                let at = if edit.keep_ttl && live { at } else { None };
                push(writer, field, value, at);
            }
            None => match live.then(|| edit.change_of(field, at)).flatten() {
                Some(FieldChange::Delete) => {}
                Some(FieldChange::Deadline(new)) => push(writer, field, value, new),
                None => push(writer, field, value, at),
            },
        }
    }
    let mut added = 0;
    for (i, (field, value)) in edit.pairs().enumerate() {
        if edit.pairs().take(i).any(|(f, _)| f == field) {
            continue;
        }
        if hash.get(field).is_none() {
            added += 1;
        }
        if hash.entries().all(|(f, _, _)| f != field) {
            push(writer, field, given(field).unwrap_or(value), None);
        }
    }
    (added, written)
}

/// The bytes `edit` may add to a hash.
fn edit_room(edit: &Edit<'_>) -> usize {
    let set: usize = edit
        .pairs()
        .map(|(f, v)| element_len(f.len()) + element_len(v.len()) + element_len(8))
        .sum();
    set + 9 * edit.changed.len()
}

/// Applies `edit` to hash `key`: a packed hash is written anew through the reply buffer's
/// spare room (and given an index if a field it sets passes the server's
/// [`HashPacking`](crate::HashPacking) thresholds, as Redis 7.0's `hashTypeTryConversion` and
/// `hashTypeSet` convert; an edit that sets nothing keeps it packed), an indexed one is changed
/// in place (written anew first, larger, if the whole edit would not fit: a refusal changes
/// nothing). An empty result deletes the key. `Ok`: the fields added and the fields left (0
/// exactly when no live field is; an indexed hash counts fields past their deadline that its
/// timer has not removed yet).
pub(super) fn rewrite(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    edit: &Edit<'_>,
) -> Result<(usize, usize), Reply> {
    let now = ctx.clock.now;
    let old = ctx.store.get(key, now).unwrap_or_default();
    let packing = ctx.settings.hash_packing;
    let long = |(f, v): (&[u8], &[u8])| !packing.holds_len(f.len()) || !packing.holds_len(v.len());
    let setting = edit.set.len() / 2;
    if !is_indexed(old) {
        if !more_fields_than(edit, packing.max_fields) && !edit.pairs().any(long) {
            let (added, left) = rewrite_packed(ctx, out, key, edit)?;
            if edit.set.is_empty() || packing.holds_fields(left) {
                return Ok((added, left));
            }
            // More fields than a packed hash keeps: indexed from now on (nothing to edit).
            index(ctx, out, key, 0, 0)?;
            return Ok((added, left));
        }
        index(ctx, out, key, setting, indexed_room(edit))?;
    }
    edit_indexed(ctx, out, key, edit)
}

/// Whether `edit` sets more than `most` distinct fields (a field given twice counts once, as
/// HSET sets it twice); it stops counting past `most`.
fn more_fields_than(edit: &Edit<'_>, most: u64) -> bool {
    if (edit.set.len() / 2) as u64 <= most {
        return false;
    }
    let mut distinct = 0u64;
    for (i, (field, _)) in edit.pairs().enumerate() {
        if edit.pairs().take(i).all(|(f, _)| f != field) {
            distinct += 1;
            if distinct > most {
                return true;
            }
        }
    }
    false
}

/// Applies `edit` to packed hash `key` (or none) through the reply buffer's spare room.
fn rewrite_packed(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    edit: &Edit<'_>,
) -> Result<(usize, usize), Reply> {
    let now = ctx.clock.now;
    let old = ctx.store.get(key, now).unwrap_or_default();
    let Some(room) = out.spare_for(4 + old.len() + edit_room(edit)) else {
        return Err(super::store_error(ctx, out, StoreError::ValueTooLarge));
    };
    let mut writer = PackedWriter::new(room);
    let (added, fields) = apply(old, now, (edit, false), &mut writer);
    let len = writer.finish();
    if fields == 0 {
        ctx.store.delete(key, now);
        return Ok((added, 0));
    }
    match ctx
        .store
        .set_kind(key, &out.spare()[..len], ValueKind::Hash, Ttl::Keep, now)
    {
        Ok(()) => {
            let left = Hash::new(&out.spare()[..len], now, FieldHasher::default()).len();
            Ok((added, left))
        }
        Err(e) => Err(super::store_error(ctx, out, e)),
    }
}

/// The entry bytes `edit` may append to an indexed hash: each field set (deadlines change in
/// place).
fn indexed_room(edit: &Edit<'_>) -> usize {
    edit.pairs().map(|(f, v)| fields::entry_len(f, v)).sum()
}

/// Writes hash `key` (or none) anew with an index, with room for `more` more fields and
/// `bytes` more bytes of entries, through the reply buffer's spare room.
fn index(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    more: usize,
    bytes: usize,
) -> Result<(), Reply> {
    let now = ctx.clock.now;
    let hasher = ctx.store.field_hasher();
    let old = ctx.store.get(key, now).unwrap_or_default();
    let hash = Hash::new(old, now, hasher);
    let (count, used) = hash.raw_entries().fold((0, 0), |(n, b), (f, v, _)| {
        (n + 1, b + fields::entry_len(f, v))
    });
    let (slots, len) = fields::capacity_for(count + more, used + bytes);
    let Some(room) = out.spare_for(len) else {
        return Err(super::store_error(ctx, out, StoreError::ValueTooLarge));
    };
    let mut writer = FieldsWriter::new(room, slots);
    for (field, value, meta) in hash.raw_entries() {
        writer.push(&hasher, field, value, meta);
    }
    writer.finish();
    ctx.store
        .set_kind(key, &out.spare()[..len], ValueKind::Hash, Ttl::Keep, now)
        .map_err(|e| super::store_error(ctx, out, e))
}

/// Applies `edit` to indexed hash `key` in place, as [`apply`] does to a packed one.
fn edit_indexed(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    edit: &Edit<'_>,
) -> Result<(usize, usize), Reply> {
    let now = ctx.clock.now;
    let hasher = ctx.store.field_hasher();
    let value = ctx.store.get(key, now).unwrap_or_default();
    let (more, bytes) = (edit.set.len() / 2, indexed_room(edit));
    if !Fields::new(value).has_room(more, bytes) {
        index(ctx, out, key, more, bytes)?;
    }
    let Some(value) = ctx.store.value_mut(key, now) else {
        return Ok((0, 0));
    };
    let mut fields = FieldsMut::new(value);
    for field in edit.delete.iter() {
        fields.remove(&hasher, field);
    }
    let mut added = 0;
    for (field, value) in edit.pairs() {
        // Set: a field past its deadline is made anew, without one.
        let mut meta = [0u8; 8];
        let kept = match fields.find(&hasher, field) {
            Some((_, _, at)) if deadline_of(at).is_none_or(|at| at >= now) => {
                if edit.keep_ttl && at.len() == 8 {
                    meta.copy_from_slice(at);
                    8
                } else {
                    0
                }
            }
            _ => {
                added += 1;
                0
            }
        };
        let _ = fields.set(&hasher, field, value, &meta[..kept]);
    }
    // Each naming sees what the one before did; the rule makes the second a no-op.
    for field in edit.changed.iter() {
        if edit.pairs().any(|(f, _)| f == field) {
            continue;
        }
        let current = match fields.find(&hasher, field) {
            Some((_, _, at)) => deadline_of(at),
            None => continue,
        };
        if current.is_some_and(|at| at < now) {
            continue; // past its deadline: not live
        }
        // Named here, so the rule applies (no search of the names).
        match edit.change.and_then(|change| change(current)) {
            Some(FieldChange::Delete) => {
                fields.remove(&hasher, field);
            }
            Some(FieldChange::Deadline(at)) => {
                let bytes = at.map(Tick::to_le_bytes);
                fields.set_meta(&hasher, field, bytes.as_ref().map_or(&[][..], |b| &b[..]));
            }
            None => {}
        }
    }
    let count = Fields::new(ctx.store.get(key, now).unwrap_or_default()).len();
    if count == 0 {
        ctx.store.delete(key, now);
        return Ok((added, 0));
    }
    // Whether a live field is left, without counting them: the first one found will do.
    let live = ctx
        .hash(key)
        .ok()
        .flatten()
        .is_some_and(|hash| hash.pairs().next().is_some());
    Ok((added, if live { count } else { 0 }))
}

/// What a sweep of a hash's fields did.
pub(crate) struct FieldSweep {
    /// Fields removed, past their deadlines.
    #[cfg_attr(not(feature = "pubsub"), allow(dead_code))]
    pub(crate) expired: usize,
    /// Whether the hash went with them.
    #[cfg_attr(not(feature = "pubsub"), allow(dead_code))]
    pub(crate) gone: bool,
    /// The earliest deadline of the fields left.
    pub(crate) next_deadline: Option<Tick>,
}

/// Removes every field of hash `key` whose deadline is before `now` (`None`: no hash there).
/// A packed hash is written anew through `scratch`'s spare room (where it fits: a board's
/// reply buffer holds its largest value), an indexed one is changed in place.
pub(crate) fn expire_fields(
    store: &mut crate::store::Store<'_>,
    key: &[u8],
    now: Tick,
    scratch: &mut ReplyWriter<'_>,
) -> Option<FieldSweep> {
    let hasher = store.field_hasher();
    let (kind, value) = store.get_kind(key, now)?;
    if kind != ValueKind::Hash {
        return None;
    }
    let hash = Hash::new(value, now, hasher);
    let due = |at: Option<Tick>| at.is_some_and(|at| at < now);
    let expired = hash.entries().filter(|(_, _, at)| due(*at)).count();
    let next_deadline = hash
        .entries()
        .filter_map(|(_, _, at)| at.filter(|&at| at >= now))
        .min();
    if expired == 0 {
        if hash.is_indexed() && Fields::new(value).earliest() < now {
            // A deadline removed since left the bound low: raised, so HLEN is O(1) again.
            if let Some(value) = store.value_mut_unwritten(key, now) {
                FieldsMut::new(value).note_earliest();
            }
        }
        return Some(FieldSweep {
            expired: 0,
            gone: false,
            next_deadline,
        });
    }
    let fields = if hash.is_indexed() {
        let value = store.value_mut(key, now)?;
        FieldsMut::new(value).remove_where(&hasher, |(_, _, meta)| due(deadline_of(meta)));
        Fields::new(store.get(key, now)?).len()
    } else {
        let Some(room) = scratch.spare_for(4 + value.len()) else {
            // Left as they are, unseen, till the hash is next written.
            return Some(FieldSweep {
                expired: 0,
                gone: false,
                next_deadline,
            });
        };
        let mut writer = PackedWriter::new(room);
        let (_, fields) = apply(value, now, (&Edit::default(), true), &mut writer);
        let len = writer.finish();
        if fields > 0 {
            // Smaller than before: it fits where the old value was.
            let _ = store.set_kind(
                key,
                &scratch.spare()[..len],
                ValueKind::Hash,
                Ttl::Keep,
                now,
            );
        }
        fields
    };
    if fields == 0 {
        store.delete(key, now);
        return Some(FieldSweep {
            expired,
            gone: true,
            next_deadline: None,
        });
    }
    Some(FieldSweep {
        expired,
        gone: false,
        next_deadline,
    })
}

/// Whether hash `key` has a field with a deadline (live or not yet removed): whether it needs
/// its field timer.
pub(crate) fn has_field_deadlines(
    store: &mut crate::store::Store<'_>,
    key: &[u8],
    now: Tick,
) -> bool {
    let hasher = store.field_hasher();
    match store.get_kind(key, now) {
        Some((ValueKind::Hash, value)) if is_indexed(value) => Fields::new(value).volatile() > 0,
        Some((ValueKind::Hash, value)) => Hash::new(value, now, hasher)
            .entries()
            .any(|(_, _, at)| at.is_some()),
        _ => false,
    }
}

/// The live fields of hash value `value` at `now`, each with its value and deadline (a
/// cluster migration sends them with `HSET`, then each deadline with `HPEXPIREAT`).
#[cfg(all(feature = "cluster", feature = "alloc"))]
pub(crate) fn live_entries(
    value: &[u8],
    now: Tick,
) -> impl Iterator<Item = (&[u8], &[u8], Option<Tick>)> {
    // Walked, never searched: any hasher does.
    Hash::new(value, now, FieldHasher::default())
        .entries()
        .filter(move |(_, _, at)| at.is_none_or(|at| at >= now))
}

/// Sets `argv[2..]`'s field-value pairs on hash `argv[1]`; `Ok`: the fields added.
fn set_pairs(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Result<usize, Reply> {
    let key = argv[1];
    let made = match ctx.hash(key) {
        Ok(hash) => hash.is_none(),
        Err(wrong) => return Err(wrong.reply(out)),
    };
    let edit = Edit {
        set: &argv[2..],
        ..Edit::default()
    };
    let (added, _) = rewrite(ctx, out, key, &edit)?;
    ctx.written(made, Class::Hash, "hset", key);
    Ok(added)
}

/// `HSET key field value …`: the fields added.
pub(crate) fn hset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() % 2 == 1 {
        return super::wrong_arity(out, "hset");
    }
    match set_pairs(ctx, argv, out) {
        Ok(added) => integer(out, added as i64),
        Err(reply) => reply,
    }
}

/// `HMSET key field value …`: `+OK`.
pub(crate) fn hmset(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    if argv.len() % 2 == 1 {
        return super::wrong_arity(out, "hmset");
    }
    match set_pairs(ctx, argv, out) {
        Ok(_) => super::ok(out),
        Err(reply) => reply,
    }
}

/// `HSETNX key field value`: 1 if set, 0 if the field exists.
pub(crate) fn hsetnx(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let key = argv[1];
    let exists = match hash_or_return!(ctx, key, out) {
        Some(hash) => hash.get(argv[2]).is_some(),
        None => false,
    };
    if exists {
        return integer(out, 0);
    }
    match set_pairs(ctx, argv, out) {
        Ok(_) => integer(out, 1),
        Err(reply) => reply,
    }
}

/// `HGET key field`.
pub(crate) fn hget(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let value = hash_or_return!(ctx, argv[1], out).and_then(|hash| hash.get(argv[2]));
    super::bulk_or_nil(out, value)
}

/// `HMGET key field …`: each value, or nil.
pub(crate) fn hmget(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    out.array_header(argv.len() - 2)?;
    for field in &argv[2..] {
        super::bulk_or_nil(out, hash.and_then(|hash| hash.get(field)))?;
    }
    Ok(After::Continue)
}

/// `HDEL key field …`: the fields removed.
pub(crate) fn hdel(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let key = argv[1];
    let Some(hash) = hash_or_return!(ctx, key, out) else {
        return integer(out, 0);
    };
    let fields = &argv[2..];
    if !fields.iter().any(|f| hash.get(f).is_some()) {
        return integer(out, 0);
    }
    // Each field named counts once: the live fields before, less those after.
    let before = hash.len();
    let edit = Edit {
        delete: Named::each(fields),
        ..Edit::default()
    };
    match rewrite(ctx, out, key, &edit) {
        Ok((_, left)) => {
            let after = match ctx.hash(key) {
                Ok(Some(hash)) if left > 0 => hash.len(),
                _ => 0,
            };
            ctx.notify(Class::Hash, "hdel", key);
            if left == 0 {
                ctx.notify(Class::Generic, "del", key);
            }
            integer(out, before.saturating_sub(after) as i64)
        }
        Err(reply) => reply,
    }
}

/// `HLEN key`.
pub(crate) fn hlen(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    ctx.read(argv[1]);
    let len = hash_or_return!(ctx, argv[1], out).map_or(0, Hash::len);
    integer(out, len as i64)
}

/// `HSTRLEN key field`.
pub(crate) fn hstrlen(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    let len = hash
        .and_then(|hash| hash.get(argv[2]))
        .map_or(0, <[u8]>::len);
    integer(out, len as i64)
}

/// `HEXISTS key field`.
pub(crate) fn hexists(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    integer(
        out,
        i64::from(hash.and_then(|hash| hash.get(argv[2])).is_some()),
    )
}

/// What `HKEYS`, `HVALS` and `HGETALL` list.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listing {
    Fields,
    Values,
    Both,
}

/// Redis' `genericHgetallCommand`: an array (`HGETALL`: a map in RESP3), empty for no key.
fn listing(
    ctx: &mut Context<'_, '_>,
    key: &[u8],
    out: &mut ReplyWriter<'_>,
    what: Listing,
) -> Reply {
    ctx.read(key);
    let hash = hash_or_return!(ctx, key, out);
    let len = hash.map_or(0, Hash::len);
    if what == Listing::Both {
        out.map_header(len)?;
    } else {
        out.array_header(len)?;
    }
    for (field, value) in hash.into_iter().flat_map(Hash::pairs) {
        if what != Listing::Values {
            out.bulk(field)?;
        }
        if what != Listing::Fields {
            out.bulk(value)?;
        }
    }
    Ok(After::Continue)
}

/// `HKEYS key`.
pub(crate) fn hkeys(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    listing(ctx, argv[1], out, Listing::Fields)
}

/// `HVALS key`.
pub(crate) fn hvals(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    listing(ctx, argv[1], out, Listing::Values)
}

/// `HGETALL key`.
pub(crate) fn hgetall(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    listing(ctx, argv[1], out, Listing::Both)
}

/// Writes `value` at `field` of hash `key`, publishing `event`.
fn store_field(
    ctx: &mut Context<'_, '_>,
    out: &mut ReplyWriter<'_>,
    key: &[u8],
    field: &[u8],
    value: &[u8],
    (made, event): (bool, &str),
) -> Result<(), Reply> {
    // HINCRBY and HINCRBYFLOAT keep the field's deadline; HSET clears it.
    let set = [field, value];
    let edit = Edit {
        set: &set,
        keep_ttl: true,
        ..Edit::default()
    };
    rewrite(ctx, out, key, &edit)?;
    ctx.written(made, Class::Hash, event, key);
    Ok(())
}

/// `HINCRBY key field increment`: the increment is read first, then the key, as in Redis.
pub(crate) fn hincrby(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let Some(by) = parse_i64(argv[3]) else {
        return error(out, NOT_INTEGER);
    };
    let (key, field) = (argv[1], argv[2]);
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let current = match hash.and_then(|hash| hash.get(field)) {
        None => 0,
        Some(value) => match parse_i64(value) {
            Some(n) => n,
            None => return error(out, "ERR hash value is not an integer"),
        },
    };
    let Some(next) = current.checked_add(by) else {
        return error(out, "ERR increment or decrement would overflow");
    };
    let text = Decimal::signed(next);
    match store_field(ctx, out, key, field, text.as_bytes(), (made, "hincrby")) {
        Ok(()) => integer(out, next),
        Err(reply) => reply,
    }
}

/// `HINCRBYFLOAT key field increment`: the sum, exact, printed as Redis prints it.
pub(crate) fn hincrbyfloat(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let by = match Float::parse(argv[3]) {
        Ok(by) => by,
        Err(NotDecimal::Invalid) => return error(out, "ERR value is not a valid float"),
        Err(NotDecimal::Infinite) => return error(out, "ERR value is NaN or Infinity"),
    };
    let (key, field) = (argv[1], argv[2]);
    let hash = hash_or_return!(ctx, key, out);
    let made = hash.is_none();
    let current = match hash.and_then(|hash| hash.get(field)) {
        None => Float::parse(b"0"),
        Some(value) => Float::parse(value),
    };
    let sum = match current {
        Ok(current) => current.checked_add(by),
        Err(_) => return error(out, "ERR hash value is not a float"),
    };
    let Some(sum) = sum else {
        return error(out, "ERR increment would produce NaN or Infinity");
    };
    let mut text = [0; 48];
    let text = sum.format(&mut text);
    match store_field(ctx, out, key, field, text, (made, "hincrbyfloat")) {
        Ok(()) => super::bulk_or_nil(out, Some(text)),
        Err(reply) => reply,
    }
}

/// `HSCAN key cursor [MATCH pattern] [COUNT count]`, the options read as `SCAN` reads them.
/// As Redis 7.0 answers: a packed hash (its listpack) whole with the cursor 0, whatever the
/// cursor and the count; an indexed one (its hash table) a page at a time, at least `count`
/// fields (10 by default) from the cursor on, in Redis' reverse-binary cursor order
/// ([`Fields::scan`]), with the cursor to go on from.
pub(crate) fn hscan(ctx: &mut Context<'_, '_>, argv: &[&[u8]], out: &mut ReplyWriter<'_>) -> Reply {
    let cursor_ok = core::str::from_utf8(argv[2])
        .ok()
        .filter(|text| !text.starts_with(|c: char| c.is_ascii_whitespace()))
        .is_some_and(|text| {
            let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 20
        });
    if !cursor_ok {
        return error(out, "ERR invalid cursor");
    }
    ctx.read(argv[1]);
    let Some(hash) = hash_or_return!(ctx, argv[1], out) else {
        out.array_header(2)?;
        out.bulk(b"0")?;
        out.array_header(0)?;
        return Ok(After::Continue);
    };
    let mut pattern: Option<&[u8]> = None;
    let mut count = 10;
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if super::is(argv[i], "count") && more {
            match parse_i64(argv[i + 1]) {
                Some(n) if n >= 1 => count = usize::try_from(n).unwrap_or(usize::MAX),
                Some(_) => return error(out, super::SYNTAX),
                None => return error(out, NOT_INTEGER),
            }
        } else if super::is(argv[i], "match") && more {
            pattern = Some(argv[i + 1]).filter(|p| *p != b"*");
        } else {
            return error(out, super::SYNTAX);
        }
        i += 2;
    }
    let wanted = |field: &[u8]| pattern.is_none_or(|p| super::glob::matches(p, field, false));
    if hash.is_indexed() {
        return scan_page(hash, argv[2], count, wanted, out);
    }
    let found = hash.pairs().filter(|(f, _)| wanted(f)).count();
    out.array_header(2)?;
    out.bulk(b"0")?;
    out.array_header(2 * found)?;
    for (field, value) in hash.pairs().filter(|(f, _)| wanted(f)) {
        out.bulk(field)?;
        out.bulk(value)?;
    }
    Ok(After::Continue)
}

/// One page of `HSCAN` over indexed `hash` from `cursor` (checked digits, maybe signed: read
/// as Redis' `strtoul` reads them, a negative one wrapping).
fn scan_page(
    hash: Hash<'_>,
    cursor: &[u8],
    count: usize,
    wanted: impl Fn(&[u8]) -> bool,
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let digits = cursor.strip_prefix(b"+").unwrap_or(cursor);
    let (negative, digits) = match digits.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    let magnitude = digits.iter().fold(0u64, |n, &d| {
        n.wrapping_mul(10).wrapping_add(u64::from(d - b'0'))
    });
    let cursor = if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    let now = hash.now;
    let fields = Fields::new(hash.value);
    let shown =
        |(f, _, m): fields::Entry<'_>| deadline_of(m).is_none_or(|at| at >= now) && wanted(f);
    // Two walks of the same page: the first counts it, the second writes it.
    let mut found = 0;
    let next = fields.scan(&hash.hasher, cursor, count, |entry| {
        found += usize::from(shown(entry));
    });
    out.array_header(2)?;
    out.bulk(Decimal::new(next).as_bytes())?;
    out.array_header(2 * found)?;
    let mut written = Ok(());
    fields.scan(&hash.hasher, cursor, count, |entry @ (field, value, _)| {
        if shown(entry) && written.is_ok() {
            written = out.bulk(field).and_then(|()| out.bulk(value));
        }
    });
    written?;
    Ok(After::Continue)
}

/// The most fields `HRANDFIELD` draws with repeats in one reply.
const MAX_DRAWS: usize = 1 << 20;

/// `HRANDFIELD key [count [WITHVALUES]]`, as Redis 7.0's `hrandfieldCommand`: one field (nil
/// for no key); with a count, that many distinct fields (all of them, in order, when the count
/// is at least the hash's size), or with a negative count that many drawn with repeats; with
/// values, pairs (each a two-element array in RESP3).
pub(crate) fn hrandfield(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let count = match argv.get(2).map(|word| parse_i64(word)) {
        None => None,
        Some(Some(n)) => Some(n),
        Some(None) => return error(out, NOT_INTEGER),
    };
    // Redis reads the count as a C long in -LONG_MAX..=LONG_MAX, before the other words.
    if count == Some(i64::MIN) {
        return error(
            out,
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        );
    }
    let with_values = match argv.get(3) {
        None => false,
        Some(word) if argv.len() == 4 && super::is(word, "withvalues") => true,
        Some(_) => return error(out, super::SYNTAX),
    };
    if with_values && count.is_some_and(|n| !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n)) {
        return error(out, "ERR value is out of range");
    }
    // Any start will do: a mix of the time and the command count picks one.
    let mut rng = crate::xorshift::Xorshift::new(
        (ctx.clock.now ^ ctx.stats.total_commands_processed.rotate_left(17))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            | 1,
    );
    let mut draw = |below: usize| rng.below(below as u64) as usize;
    ctx.read(argv[1]);
    let hash = hash_or_return!(ctx, argv[1], out);
    let Some(count) = count else {
        let field = hash.and_then(|hash| {
            let at = draw(hash.len());
            hash.pairs().nth(at).map(|(f, _)| f)
        });
        return super::bulk_or_nil(out, field);
    };
    let Some(hash) = hash else {
        out.array_header(0)?;
        return Ok(After::Continue);
    };
    let len = hash.len();
    let resp3 = out.protocol() == crate::resp::Protocol::Resp3;
    let write_pair = |out: &mut ReplyWriter<'_>, (field, value): (&[u8], &[u8])| {
        if with_values && resp3 {
            out.array_header(2)?;
        }
        out.bulk(field)?;
        if with_values {
            out.bulk(value)?;
        }
        Ok::<(), crate::resp::WriteFull>(())
    };
    let per = if with_values && !resp3 { 2 } else { 1 };
    if count >= 0 {
        // Distinct fields: all of them in order when the count reaches the size, else a
        // random choice of `count` kept in the hash's order.
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(len);
        out.array_header(n * per)?;
        let mut left_to_skip = len - n;
        for (i, pair) in hash.pairs().enumerate() {
            let remaining = len - i;
            if left_to_skip > 0 && draw(remaining) < left_to_skip {
                left_to_skip -= 1;
                continue;
            }
            write_pair(out, pair)?;
        }
    } else {
        let n = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        if n > MAX_DRAWS {
            // Redis would write them until the client's output limit: "reply too large" here.
            return Err(crate::resp::WriteFull);
        }
        out.array_header(n * per)?;
        // Gathered once where memory grows: each draw is then O(1), not a walk of the hash
        // (a board's hashes are small).
        #[cfg(feature = "alloc")]
        let pairs: alloc::vec::Vec<(&[u8], &[u8])> = hash.pairs().collect();
        #[cfg(feature = "alloc")]
        let pair_at = |at: usize| pairs.get(at).copied();
        #[cfg(not(feature = "alloc"))]
        let pair_at = |at: usize| hash.pairs().nth(at);
        for _ in 0..n {
            if let Some(pair) = pair_at(draw(len)) {
                write_pair(out, pair)?;
            }
        }
    }
    Ok(After::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::vec::Vec;

    /// The hash value of `fields` fields (names `field:N`, values `v`), each with deadline
    /// `at` or none.
    fn value_of(fields: usize, at: Option<Tick>) -> Vec<u8> {
        let names: Vec<Vec<u8>> = (0..fields)
            .map(|i| std::format!("field:{i}").into_bytes())
            .collect();
        let words: Vec<&[u8]> = names.iter().flat_map(|n| [&n[..], b"v"]).collect();
        let set = Edit {
            set: &words,
            ..Edit::default()
        };
        let mut bytes = std::vec![0; 4 + edit_room(&set)];
        let mut writer = PackedWriter::new(&mut bytes);
        apply(&[], 0, (&set, false), &mut writer);
        let len = writer.finish();
        let first = bytes[..len].to_vec();
        let rule = move |_: Option<Tick>| Some(FieldChange::Deadline(at));
        let edit = Edit {
            changed: Named::fields_of_pairs(&words),
            change: Some(&rule),
            ..Edit::default()
        };
        let mut bytes = std::vec![0; 4 + first.len() + edit_room(&edit)];
        let mut writer = PackedWriter::new(&mut bytes);
        apply(&first, 0, (&edit, false), &mut writer);
        let len = writer.finish();
        bytes.truncate(len);
        bytes
    }

    #[test]
    fn more_fields_than_counts_a_field_given_twice_once() {
        let twice: [&[u8]; 8] = [b"a", b"1", b"b", b"2", b"a", b"3", b"b", b"4"];
        let setting = |set| Edit {
            set,
            ..Edit::default()
        };
        assert!(!more_fields_than(&setting(&twice), 2));
        assert!(more_fields_than(&setting(&twice), 1));
        assert!(more_fields_than(&setting(&twice), 0));
        assert!(!more_fields_than(&setting(&[]), 0));
        assert!(!more_fields_than(&setting(&twice[..2]), 1));
    }

    /// A deadline costs its field 8 bytes in the hash's value (the tick, where a field without
    /// one has an empty element), and nothing else per field: the hash's one timer is apart.
    #[test]
    fn a_deadline_costs_its_field_8_bytes_in_the_value() {
        let fields = 1_000;
        let without = value_of(fields, None).len();
        let with = value_of(fields, Some(3_600_000)).len();
        assert_eq!(with - without, 8 * fields);
    }
}
