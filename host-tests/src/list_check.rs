//! One checker for lists, through the server's list commands on the simulated network, against
//! a `VecDeque` model: shared by the seeded property test (`tests/list_model.rs`) and the
//! `list_ops` fuzz target.
//!
//! A list is one block with room at both ends (`net_shell::store::list`): pushes fill the room,
//! pops and `LTRIM` move its ends, a push that finds no room moves the elements to the middle or
//! writes the list anew larger, and pops that leave it oversized write it anew smaller. The ops
//! reach all of these: pushes of one element or many (`Grow`: hundreds at once), elements from
//! empty through the 127/128-byte change of their length's size to 20 KiB, pops of one or a
//! count at either end until a list is gone, `LMOVE` between two lists and onto one list, and
//! the changes in the middle (`LSET`, `LINSERT`, `LREM`, `LTRIM`) at any index.
//!
//! Every reply must be the model's (Redis' answer for that op), and after every op each list's
//! length must be the model's; every few ops, and at the end, each list reads back whole
//! (`LRANGE 0 -1`) and from its tail (`LINDEX -1`). The store is large enough (8 MiB) that no op is refused.

use std::collections::VecDeque;

use net_shell::store::{Store, StoreMemory};
use net_shell::{ServerBuffers, Timeouts};

use crate::reply::Reply;
use crate::sim::{self, Sim, SizedStore};

/// Keys the ops use.
const KEYS: [&str; 2] = ["la", "lb"];
/// Steps of one input beyond this are ignored (keeps each run fast).
pub const MAX_STEPS: usize = 400;
/// Elements one `Grow` pushes at most.
const MAX_GROW: usize = 600;

/// An element, by the shape of its length: short ones most often, then around the 128-byte
/// change of the length's size, then long ones.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Element {
    /// Shape and length: `len % 16` below 12: up to 15 bytes; 12 to 14: 120 to 135; 15: up
    /// to 20 KiB.
    pub len: u16,
    /// Its bytes' first value (each byte after it one more).
    pub byte: u8,
}

impl Element {
    /// Its bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let len = match self.len % 16 {
            0..=11 => usize::from(self.len >> 4) % 16,
            12..=14 => 120 + usize::from(self.len >> 4) % 16,
            _ => usize::from(self.len >> 4) % (20 << 10),
        };
        (0..len)
            .map(|i| self.byte.wrapping_add(i as u8) % 4 + b'a')
            .collect()
    }
}

/// One list command (keys and indexes are taken modulo what there is).
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum ListOp {
    /// `LPUSH` or `RPUSH` of these elements.
    Push {
        key: u8,
        head: bool,
        elements: Vec<Element>,
    },
    /// `RPUSH` or `LPUSH` of `count % MAX_GROW` elements of up to 15 bytes.
    Grow {
        key: u8,
        head: bool,
        count: u16,
        byte: u8,
    },
    /// `LPOP` or `RPOP`, with a count if given.
    Pop {
        key: u8,
        head: bool,
        count: Option<u16>,
    },
    /// `LINDEX`.
    Index { key: u8, index: i16 },
    /// `LRANGE`.
    Range { key: u8, start: i16, stop: i16 },
    /// `LSET`.
    Set {
        key: u8,
        index: i16,
        element: Element,
    },
    /// `LINSERT` before or after the element at `pivot` (or a missing one).
    Insert {
        key: u8,
        before: bool,
        pivot: i16,
        element: Element,
    },
    /// `LREM` of the element at `pivot`'s value.
    Rem { key: u8, count: i8, pivot: i16 },
    /// `LTRIM`.
    Trim { key: u8, start: i16, stop: i16 },
    /// `LMOVE` (the same key when `from == to`).
    Move {
        from: u8,
        to: u8,
        from_head: bool,
        to_head: bool,
    },
}

/// A fuzz input: ops in order.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ListInput {
    pub ops: Vec<ListOp>,
}

/// What a run went through, for the property test to check it reached the states it is for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Coverage {
    /// The longest list seen (elements).
    pub longest: usize,
    /// Pops that emptied a list.
    pub emptied: usize,
    /// Changes in the middle that were applied (`LSET`, `LINSERT`, `LREM`, `LTRIM`).
    pub middle: usize,
}

impl Coverage {
    /// Adds another run's counts.
    pub fn add(&mut self, other: &Self) {
        self.longest = self.longest.max(other.longest);
        self.emptied += other.emptied;
        self.middle += other.middle;
    }
}

/// Runs `input` against a fresh server.
///
/// # Panics
///
/// When a reply or a list differs from the model's, with the op and the steps before it.
pub fn check_list_ops(input: &ListInput) -> Coverage {
    let mut buffers = ServerBuffers::default();
    let store: SizedStore<16, { 8 << 20 }> =
        SizedStore(Store::new(StoreMemory::allocate(16, 8 << 20), 64, 4 << 20));
    let mut sim: Sim<4, 16, { 8 << 20 }> =
        Sim::with(&mut buffers, sim::config(Timeouts::DEFAULT), store);
    let client = sim.connect_ready();
    let mut model = [VecDeque::new(), VecDeque::new()];
    let mut coverage = Coverage::default();
    for (step, op) in input.ops.iter().take(MAX_STEPS).enumerate() {
        let (args, expected) = expect(op, &mut model, &mut coverage);
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let reply = sim.request_bytes(client, &args);
        let shown = || {
            let ops = &input.ops[step.saturating_sub(5)..step];
            format!("step {step}: {op:?} after {ops:?}")
        };
        assert_eq!(reply, expected, "{}", shown());
        for (key, list) in KEYS.iter().zip(&model) {
            let len = sim.request(client, &["LLEN", key]);
            assert_eq!(len, Reply::Int(list.len() as i64), "{key}: {}", shown());
            coverage.longest = coverage.longest.max(list.len());
            if step % 16 == 15 || step + 1 == input.ops.len().min(MAX_STEPS) {
                let whole = sim.request(client, &["LRANGE", key, "0", "-1"]);
                assert_eq!(whole, bulks(list.iter()), "{key}: {}", shown());
                let last = sim.request(client, &["LINDEX", key, "-1"]);
                assert_eq!(last, bulk(list.back()), "{key}: {}", shown());
            }
        }
    }
    coverage
}

/// The request for `op` and Redis' reply to it, with the model changed as Redis changes the
/// list.
fn expect(
    op: &ListOp,
    model: &mut [VecDeque<Vec<u8>>; 2],
    coverage: &mut Coverage,
) -> (Vec<Vec<u8>>, Reply) {
    let name = |k: u8| KEYS[usize::from(k) % 2].as_bytes().to_vec();
    let word = |text: &str| text.as_bytes().to_vec();
    let number = |n: i64| n.to_string().into_bytes();
    match *op {
        ListOp::Push {
            key,
            head,
            ref elements,
        } => {
            let elements: Vec<Vec<u8>> = elements.iter().take(8).map(Element::bytes).collect();
            let elements = if elements.is_empty() {
                vec![Vec::new()]
            } else {
                elements
            };
            push(model, key, head, name(key), elements)
        }
        ListOp::Grow {
            key,
            head,
            count,
            byte,
        } => {
            let elements = (0..usize::from(count) % MAX_GROW + 1)
                .map(|i| {
                    Element {
                        len: (i as u16 % 12) | (i as u16) << 4,
                        byte: byte.wrapping_add(i as u8),
                    }
                    .bytes()
                })
                .collect();
            push(model, key, head, name(key), elements)
        }
        ListOp::Pop { key, head, count } => {
            let list = &mut model[usize::from(key) % 2];
            let command = word(if head { "LPOP" } else { "RPOP" });
            let take = |list: &mut VecDeque<Vec<u8>>| {
                if head {
                    list.pop_front()
                } else {
                    list.pop_back()
                }
            };
            let (args, reply) = match count {
                None => {
                    let reply = match take(list) {
                        Some(e) => Reply::Bulk(e),
                        None => Reply::Nil,
                    };
                    (vec![command, name(key)], reply)
                }
                Some(n) => {
                    let reply = if list.is_empty() {
                        Reply::NilArray
                    } else {
                        let popped: Vec<Vec<u8>> = (0..n).map_while(|_| take(list)).collect();
                        bulks(popped.iter())
                    };
                    (vec![command, name(key), number(i64::from(n))], reply)
                }
            };
            if list.is_empty() && reply != Reply::Nil && reply != Reply::NilArray {
                coverage.emptied += 1;
            }
            (args, reply)
        }
        ListOp::Index { key, index } => {
            let list = &model[usize::from(key) % 2];
            let at = position(i64::from(index), list.len());
            let args = vec![word("LINDEX"), name(key), number(i64::from(index))];
            (args, bulk(at.and_then(|at| list.get(at))))
        }
        ListOp::Range { key, start, stop } => {
            let list = &model[usize::from(key) % 2];
            let args = vec![
                word("LRANGE"),
                name(key),
                number(i64::from(start)),
                number(i64::from(stop)),
            ];
            let kept = range(i64::from(start), i64::from(stop), list.len());
            let items = kept.map_or(Vec::new(), |(from, to)| {
                list.range(from..=to).cloned().collect()
            });
            (args, bulks(items.iter()))
        }
        ListOp::Set {
            key,
            index,
            element,
        } => {
            let list = &mut model[usize::from(key) % 2];
            let element = element.bytes();
            let args = vec![
                word("LSET"),
                name(key),
                number(i64::from(index)),
                element.clone(),
            ];
            let reply = if list.is_empty() {
                Reply::error("ERR no such key")
            } else if let Some(at) = position(i64::from(index), list.len()) {
                list[at] = element;
                coverage.middle += 1;
                Reply::ok()
            } else {
                Reply::error("ERR index out of range")
            };
            (args, reply)
        }
        ListOp::Insert {
            key,
            before,
            pivot,
            element,
        } => {
            let list = &mut model[usize::from(key) % 2];
            let pivot = pivot_value(list, pivot);
            let element = element.bytes();
            let args = vec![
                word("LINSERT"),
                name(key),
                word(if before { "BEFORE" } else { "AFTER" }),
                pivot.clone(),
                element.clone(),
            ];
            let reply = if list.is_empty() {
                Reply::Int(0)
            } else if let Some(at) = list.iter().position(|e| *e == pivot) {
                list.insert(if before { at } else { at + 1 }, element);
                coverage.middle += 1;
                Reply::Int(list.len() as i64)
            } else {
                Reply::Int(-1)
            };
            (args, reply)
        }
        ListOp::Rem { key, count, pivot } => {
            let list = &mut model[usize::from(key) % 2];
            let value = pivot_value(list, pivot);
            let args = vec![
                word("LREM"),
                name(key),
                number(i64::from(count)),
                value.clone(),
            ];
            let limit = if count == 0 {
                usize::MAX
            } else {
                usize::from(count.unsigned_abs())
            };
            let mut removed = 0;
            let mut kept = VecDeque::new();
            let elements: Vec<Vec<u8>> = list.drain(..).collect();
            let ordered: Box<dyn Iterator<Item = Vec<u8>>> = if count < 0 {
                Box::new(elements.into_iter().rev())
            } else {
                Box::new(elements.into_iter())
            };
            for e in ordered {
                if e == value && removed < limit {
                    removed += 1;
                } else if count < 0 {
                    kept.push_front(e);
                } else {
                    kept.push_back(e);
                }
            }
            *list = kept;
            coverage.middle += usize::from(removed > 0);
            (args, Reply::Int(removed as i64))
        }
        ListOp::Trim { key, start, stop } => {
            let list = &mut model[usize::from(key) % 2];
            let args = vec![
                word("LTRIM"),
                name(key),
                number(i64::from(start)),
                number(i64::from(stop)),
            ];
            match range(i64::from(start), i64::from(stop), list.len()) {
                Some((from, to)) => {
                    list.truncate(to + 1);
                    list.drain(..from);
                }
                None => list.clear(),
            }
            coverage.middle += 1;
            (args, Reply::ok())
        }
        ListOp::Move {
            from,
            to,
            from_head,
            to_head,
        } => {
            let side = |head| word(if head { "LEFT" } else { "RIGHT" });
            let args = vec![
                word("LMOVE"),
                name(from),
                name(to),
                side(from_head),
                side(to_head),
            ];
            let source = &mut model[usize::from(from) % 2];
            let taken = if from_head {
                source.pop_front()
            } else {
                source.pop_back()
            };
            let Some(element) = taken else {
                return (args, Reply::Nil);
            };
            let destination = &mut model[usize::from(to) % 2];
            if to_head {
                destination.push_front(element.clone());
            } else {
                destination.push_back(element.clone());
            }
            (args, Reply::Bulk(element))
        }
    }
}

/// `LPUSH`/`RPUSH` of `elements`, on the model too.
fn push(
    model: &mut [VecDeque<Vec<u8>>; 2],
    key: u8,
    head: bool,
    name: Vec<u8>,
    elements: Vec<Vec<u8>>,
) -> (Vec<Vec<u8>>, Reply) {
    let list = &mut model[usize::from(key) % 2];
    let command = if head { "LPUSH" } else { "RPUSH" };
    let mut args = vec![command.as_bytes().to_vec(), name];
    for element in elements {
        if head {
            list.push_front(element.clone());
        } else {
            list.push_back(element.clone());
        }
        args.push(element);
    }
    (args, Reply::Int(list.len() as i64))
}

/// The value of the element at `pivot` (modulo the length), or one no list holds.
fn pivot_value(list: &VecDeque<Vec<u8>>, pivot: i16) -> Vec<u8> {
    if list.is_empty() || pivot < 0 {
        return b"absent!".to_vec();
    }
    list[usize::from(pivot.unsigned_abs()) % list.len()].clone()
}

/// A Redis list index (negative: from the tail) as a position, if within `len`.
fn position(index: i64, len: usize) -> Option<usize> {
    let at = if index < 0 { len as i64 + index } else { index };
    usize::try_from(at).ok().filter(|&at| at < len)
}

/// Redis' clamping of `start stop` (`LRANGE`, `LTRIM`): `None` when empty.
fn range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

fn bulk(element: Option<&Vec<u8>>) -> Reply {
    element.map_or(Reply::Nil, |e| Reply::Bulk(e.clone()))
}

fn bulks<'e>(elements: impl Iterator<Item = &'e Vec<u8>>) -> Reply {
    Reply::Array(elements.map(|e| Reply::Bulk(e.clone())).collect())
}
