//! Moving a slot range's keys to another node, each with its absolute deadline.
//!
//! Sans-IO: [`Migration`] turns the store's keys of the moving slots into requests for the new
//! owner, batch by batch (`ASKING`, then `SET key value PXAT <Unix ms>`, or no `PXAT` for a key
//! without one; a list or hash as `DEL`, `RPUSH` or `HSET`, each field's deadline with
//! `HPEXPIREAT`, and `PEXPIREAT`), and takes the replies: once every request of a batch is acknowledged, the
//! batch's keys are deleted here. A key is only ever in one place as far as clients can tell:
//! here until its batch is acknowledged (a write to it meanwhile gets `-TRYAGAIN`), there after
//! (a request for it gets `-ASK`). A key whose deadline passes during the move expires on
//! whichever side holds it: its deadline goes with it, in Unix milliseconds.
//!
//! The connection opens as Kvrocks' does: `AUTH` with this shell's own password when it has one
//! (the nodes of a cluster share one), then `CLUSTER IMPORT <slots> 0`. When every key is
//! there, `CLUSTER IMPORT <slots> 1` tells the new owner to serve the slots to every client
//! until the controller's push; if the move fails before any key went, `CLUSTER IMPORT <slots>
//! 2` tells it that nothing is coming.
//!
//! The server (`server/migration.rs`) owns the TCP connection and moves the bytes.

use alloc::vec::Vec;

use timer_core::Tick;

use super::key_slot::key_slot;
use crate::command::Clock;
use crate::store::Store;

/// Keys per batch: the requests of one batch are in flight at once.
const BATCH: usize = 256;

/// Where a migration is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationState {
    /// Keys are being sent.
    Running,
    /// Every key was moved and the new owner took `CLUSTER IMPORT <slots> 1`: requests for
    /// the slots get `-MOVED` to it (as Kvrocks answers for a migrated slot) until the
    /// controller pushes the topology that makes it their owner.
    Done,
    /// The new owner refused a request or the connection failed: the keys not yet moved stay
    /// here, and the slots stay this node's. Keys already moved stay there, and requests for
    /// them still get `-ASK` (see [`Migration::moved`]).
    Failed,
}

impl MigrationState {
    /// Kvrocks' word for it in `CLUSTER INFO` (`migrating_state`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Running => "start",
            Self::Done => "success",
            Self::Failed => "fail",
        }
    }
}

/// A slot range on its way to another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The first slot moving.
    pub start: u16,
    /// The last slot moving (inclusive).
    pub end: u16,
    /// The new owner's index in the topology.
    pub node: usize,
    state: MigrationState,
    /// Keys sent and not yet acknowledged.
    in_flight: Vec<Vec<u8>>,
    /// Replies still due for the batch in flight.
    replies_due: usize,
    /// `CLUSTER IMPORT <slots> 1` is sent: its acknowledgement makes the migration done.
    finishing: bool,
    /// `CLUSTER IMPORT <slots> 2` was handed out (it goes once).
    told_failure: bool,
    /// Reply bytes not yet a whole line.
    partial: Vec<u8>,
    /// Keys moved so far.
    moved: usize,
    /// Where in the key table the next batch looks first: each batch goes on from the last,
    /// and the migration is done only when a walk from the start finds no key left (one the
    /// table moved behind the cursor is found then).
    cursor: usize,
    started: Tick,
    finished: Option<Tick>,
}

impl Migration {
    /// Starts moving slots `start..=end` to node `node`, at `now`.
    pub fn new(start: u16, end: u16, node: usize, now: Tick) -> Self {
        Self {
            start,
            end,
            node,
            state: MigrationState::Running,
            in_flight: Vec::new(),
            replies_due: 0,
            finishing: false,
            told_failure: false,
            partial: Vec::new(),
            moved: 0,
            cursor: 0,
            started: now,
            finished: None,
        }
    }

    /// Where it is.
    pub const fn state(&self) -> MigrationState {
        self.state
    }

    /// Whether `slot` is one of the moving slots.
    pub const fn covers(&self, slot: u16) -> bool {
        self.start <= slot && slot <= self.end
    }

    /// Whether `key` has been sent and not yet acknowledged.
    pub fn in_flight(&self, key: &[u8]) -> bool {
        self.in_flight.iter().any(|k| k == key)
    }

    /// Keys moved so far.
    pub const fn moved(&self) -> usize {
        self.moved
    }

    /// Milliseconds from start to the last acknowledgement, once done.
    pub fn took_ms(&self) -> Option<Tick> {
        Some(self.finished?.saturating_sub(self.started))
    }

    /// Marks it failed (the connection broke).
    pub fn fail(&mut self) {
        if self.state == MigrationState::Running {
            self.state = MigrationState::Failed;
        }
    }

    /// What opens the connection: `AUTH <password>` when this shell has a password (a new
    /// owner with the cluster's `requirepass` refuses anything else), then `CLUSTER IMPORT
    /// <slots> 0`, which tells the new owner the slots are coming, so that it serves them to
    /// clients sent there with `-ASK`. Their replies are awaited before the first batch.
    pub fn announce(&mut self, password: Option<&[u8]>) -> Vec<u8> {
        let mut request = Vec::new();
        if let Some(password) = password {
            push_command(&mut request, &[b"AUTH", password]);
            self.replies_due += 1;
        }
        self.push_import(&mut request, b"0");
        request
    }

    /// `CLUSTER IMPORT <slots> <state>` (Kvrocks' states: 0 coming, 1 came, 2 failed).
    fn push_import(&mut self, request: &mut Vec<u8>, state: &[u8]) {
        push_command(
            request,
            &[b"CLUSTER", b"IMPORT", self.range().as_bytes(), state],
        );
        self.replies_due += 1;
    }

    /// Once the migration failed before any key went, `CLUSTER IMPORT <slots> 2`, once: the
    /// new owner stops serving the slots after `ASKING`, as nothing of them is there. After
    /// a key went it says nothing: the keys moved are there, and clients are still sent to
    /// them with `-ASK`.
    pub fn failure_notice(&mut self) -> Option<Vec<u8>> {
        if self.state != MigrationState::Failed || self.moved > 0 || self.told_failure {
            return None;
        }
        self.told_failure = true;
        let mut request = Vec::new();
        push_command(
            &mut request,
            &[b"CLUSTER", b"IMPORT", self.range().as_bytes(), b"2"],
        );
        Some(request)
    }

    /// The slots as `start-end`.
    fn range(&self) -> heapless::String<12> {
        let mut range = heapless::String::new();
        let _ = core::fmt::write(&mut range, format_args!("{}-{}", self.start, self.end));
        range
    }

    /// The requests of the next batch, if no batch is in flight: up to 256 live keys of
    /// the moving slots. With none left, `CLUSTER IMPORT <slots> 1`, whose acknowledgement
    /// makes the migration done; after it, `None`.
    ///
    /// Deadlines go as Unix milliseconds (`PXAT`), so `clock` must have the Unix time; a key
    /// due by now is left to expire here.
    pub fn next_batch(&mut self, store: &mut Store<'_>, clock: Clock) -> Option<Vec<u8>> {
        if self.state != MigrationState::Running || self.replies_due > 0 || self.finishing {
            return None;
        }
        let unix_now = clock.unix_ms?;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        loop {
            let from = self.cursor;
            while keys.len() < BATCH {
                let Some((index, key)) = store.key_at_or_after(self.cursor, clock.now) else {
                    self.cursor = usize::MAX;
                    break;
                };
                if self.covers(key_slot(key)) {
                    keys.push(key.to_vec());
                }
                self.cursor = index + 1;
            }
            if !keys.is_empty() {
                break;
            }
            if from == 0 {
                self.finishing = true;
                let mut request = Vec::new();
                self.push_import(&mut request, b"1");
                return Some(request);
            }
            // The end of the table: once more from the start.
            self.cursor = 0;
        }
        let mut requests = Vec::new();
        for key in keys {
            // `None`: gone meanwhile; `Some(None)`: no deadline.
            let Some(deadline) = store.deadline(&key, clock.now) else {
                continue;
            };
            let Some((kind, value)) = store.get_kind(&key, clock.now) else {
                continue;
            };
            #[cfg(feature = "lists")]
            if kind != crate::store::ValueKind::String {
                let push: &[u8] = match kind {
                    crate::store::ValueKind::Hash => b"HSET",
                    _ => b"RPUSH",
                };
                let made = (push, deadline, unix_now, clock);
                self.replies_due += push_list(&mut requests, &key, value, made);
                self.in_flight.push(key);
                continue;
            }
            let _ = kind;
            push_command(&mut requests, &[b"ASKING"]);
            match deadline {
                Some(at) => {
                    let unix = unix_now.saturating_add(at.saturating_sub(clock.now));
                    let unix = crate::decimal::Decimal::new(unix);
                    push_command(
                        &mut requests,
                        &[b"SET", &key, value, b"PXAT", unix.as_bytes()],
                    );
                }
                None => push_command(&mut requests, &[b"SET", &key, value]),
            }
            self.in_flight.push(key);
            self.replies_due += 2;
        }
        Some(requests)
    }

    /// Takes reply bytes from the new owner. When the batch in flight is all acknowledged
    /// (`+OK` to each request), its keys are deleted from `store`, each handed to `moved`
    /// (for its `del` keyspace event, as Redis' `MIGRATE` publishes); any other reply fails
    /// the migration, and the keys stay.
    pub fn take_replies(
        &mut self,
        bytes: &[u8],
        store: &mut Store<'_>,
        now: Tick,
        mut moved: impl FnMut(&[u8]),
    ) {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.windows(2).position(|w| w == b"\r\n") {
            let line: Vec<u8> = self.partial.drain(..end + 2).collect();
            // `+OK`, the count a list's `DEL`, `RPUSH` or `PEXPIREAT` answers, or the array of
            // one `HPEXPIREAT … FIELDS 1` answers (its header, then its count).
            let done = line == b"+OK\r\n" || line.starts_with(b":") || line == b"*1\r\n";
            if self.replies_due == 0 || !done {
                self.state = MigrationState::Failed;
                self.in_flight.clear();
                self.replies_due = 0;
                return;
            }
            self.replies_due -= 1;
            if self.replies_due == 0 {
                for key in self.in_flight.drain(..) {
                    if store.delete(&key, now) {
                        moved(&key);
                    }
                    self.moved += 1;
                }
                if self.finishing {
                    self.state = MigrationState::Done;
                    self.finished = Some(now);
                }
            }
        }
    }
}

/// Appends the requests that make list or hash `key` on the new owner, each after `ASKING`:
/// `DEL` (a stale copy there), `push` (`RPUSH` or `HSET`) of every element (a hash's fields and
/// values alternate), `HPEXPIREAT … FIELDS 1 field` for each field with a deadline, and
/// `PEXPIREAT` for the key's. How many reply lines they bring (`HPEXPIREAT`'s is an array of
/// one integer: two lines).
#[cfg(feature = "lists")]
fn push_list(
    requests: &mut Vec<u8>,
    key: &[u8],
    value: &[u8],
    (push, deadline, unix_now, clock): (&[u8], Option<Tick>, u64, Clock),
) -> usize {
    let unix_of = |at: Tick| {
        crate::decimal::Decimal::new(unix_now.saturating_add(at.saturating_sub(clock.now)))
    };
    let mut rpush: Vec<&[u8]> = alloc::vec![push, key];
    #[cfg_attr(not(feature = "hashes"), allow(unused_mut))]
    let mut field_deadlines = Vec::new();
    if push == b"HSET" {
        #[cfg(feature = "hashes")]
        for (field, value, at) in crate::command::live_entries(value, clock.now) {
            rpush.extend([field, value]);
            if let Some(at) = at {
                field_deadlines.push((field, at));
            }
        }
    } else {
        rpush.extend(crate::store::list::List::new(value).iter());
    }
    push_command(requests, &[b"ASKING"]);
    push_command(requests, &[b"DEL", key]);
    push_command(requests, &[b"ASKING"]);
    push_command(requests, &rpush);
    let mut replies = 4;
    for (field, at) in field_deadlines {
        push_command(requests, &[b"ASKING"]);
        let unix = unix_of(at);
        let hpexpireat: [&[u8]; 6] = [b"HPEXPIREAT", key, unix.as_bytes(), b"FIELDS", b"1", field];
        push_command(requests, &hpexpireat);
        replies += 3;
    }
    if let Some(at) = deadline {
        push_command(requests, &[b"ASKING"]);
        push_command(requests, &[b"PEXPIREAT", key, unix_of(at).as_bytes()]);
        replies += 2;
    }
    replies
}

/// Appends `args` as one RESP request.
fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    use crate::decimal::Decimal;
    out.push(b'*');
    out.extend_from_slice(Decimal::new(args.len() as u64).as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in args {
        out.push(b'$');
        out.extend_from_slice(Decimal::new(arg.len() as u64).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::{Migration, MigrationState};
    use crate::cluster::key_slot;
    use crate::command::Clock;
    use crate::store::{Store, StoreMemory, Ttl};

    fn store() -> Store<'static> {
        Store::new(StoreMemory::allocate(64, 4096), 64, 64)
    }

    const CLOCK: Clock = Clock {
        now: 1_000,
        unix_ms: Some(1_700_000_000_000),
    };

    #[test]
    fn keys_of_the_slots_go_with_absolute_deadlines_and_are_deleted_once_acknowledged() {
        let mut store = store();
        store.set(b"bar", b"1", Ttl::At(6_000), CLOCK.now).unwrap();
        store.set(b"foo", b"2", Ttl::Persist, CLOCK.now).unwrap();
        let slot = key_slot(b"bar");
        let mut migration = Migration::new(slot, slot, 1, CLOCK.now);
        let batch = migration.next_batch(&mut store, CLOCK).unwrap();
        assert_eq!(
            batch,
            b"*1\r\n$6\r\nASKING\r\n*5\r\n$3\r\nSET\r\n$3\r\nbar\r\n$1\r\n1\r\n$4\r\nPXAT\r\n$13\r\n1700000005000\r\n"
        );
        assert!(migration.in_flight(b"bar"));
        assert_eq!(
            migration.next_batch(&mut store, CLOCK),
            None,
            "one batch at a time"
        );
        let mut deleted = std::vec::Vec::new();
        let mut note = |key: &[u8]| deleted.push(key.to_vec());
        migration.take_replies(b"+OK\r\n+O", &mut store, CLOCK.now, &mut note);
        assert!(store.contains(b"bar", CLOCK.now), "not yet acknowledged");
        migration.take_replies(b"K\r\n", &mut store, CLOCK.now, &mut note);
        assert!(!store.contains(b"bar", CLOCK.now));
        assert_eq!(deleted, [b"bar".to_vec()], "its del event");
        assert!(
            store.contains(b"foo", CLOCK.now),
            "another slot's key stays"
        );
        // Every key went: the new owner is told, and the migration is done once it says OK.
        let range = std::format!("{slot}-{slot}");
        let expected = std::format!(
            "*4\r\n$7\r\nCLUSTER\r\n$6\r\nIMPORT\r\n${}\r\n{range}\r\n$1\r\n1\r\n",
            range.len()
        );
        assert_eq!(
            migration.next_batch(&mut store, CLOCK),
            Some(expected.into_bytes())
        );
        assert_eq!(migration.state(), MigrationState::Running);
        assert_eq!(migration.next_batch(&mut store, CLOCK), None);
        migration.take_replies(b"+OK\r\n", &mut store, CLOCK.now + 5, |_| {});
        assert_eq!(migration.state(), MigrationState::Done);
        assert_eq!(migration.took_ms(), Some(5));
        assert_eq!(migration.next_batch(&mut store, CLOCK), None);
        assert_eq!(migration.moved(), 1);
        assert_eq!(migration.failure_notice(), None, "it did not fail");
    }

    /// A list goes as `DEL`, `RPUSH` of its elements and `PEXPIREAT` (no `SET` could carry
    /// it), and is deleted once all six replies are in.
    #[cfg(feature = "lists")]
    #[test]
    fn a_list_goes_as_its_elements() {
        use crate::store::list::ListWriter;
        use crate::store::ValueKind;
        let mut store = store();
        let mut bytes = [0u8; 32];
        let mut writer = ListWriter::new(&mut bytes);
        writer.push(b"a");
        writer.push(b"bc");
        let len = writer.finish();
        store
            .set_kind(
                b"bar",
                &bytes[..len],
                ValueKind::List,
                Ttl::At(6_000),
                CLOCK.now,
            )
            .unwrap();
        let slot = key_slot(b"bar");
        let mut migration = Migration::new(slot, slot, 1, CLOCK.now);
        let batch = migration.next_batch(&mut store, CLOCK).unwrap();
        let asking = "*1\r\n$6\r\nASKING\r\n";
        let expected = std::format!(
            "{asking}*2\r\n$3\r\nDEL\r\n$3\r\nbar\r\n\
             {asking}*4\r\n$5\r\nRPUSH\r\n$3\r\nbar\r\n$1\r\na\r\n$2\r\nbc\r\n\
             {asking}*3\r\n$9\r\nPEXPIREAT\r\n$3\r\nbar\r\n$13\r\n1700000005000\r\n"
        );
        assert_eq!(batch, expected.as_bytes());
        migration.take_replies(
            b"+OK\r\n:0\r\n+OK\r\n:2\r\n+OK\r\n",
            &mut store,
            CLOCK.now,
            |_| {},
        );
        assert!(store.contains(b"bar", CLOCK.now), "not yet acknowledged");
        migration.take_replies(b":1\r\n", &mut store, CLOCK.now, |_| {});
        assert!(!store.contains(b"bar", CLOCK.now));
        assert_eq!(migration.moved(), 1);
    }

    #[test]
    fn more_keys_than_a_batch_go_in_batches_until_a_walk_from_the_start_finds_none() {
        let mut store = Store::new(StoreMemory::allocate(512, 32_768), 64, 64);
        for n in 0..300u32 {
            let key = std::format!("key:{n}");
            store
                .set(key.as_bytes(), b"v", Ttl::Persist, CLOCK.now)
                .unwrap();
        }
        let mut migration = Migration::new(0, 16383, 1, CLOCK.now);
        let mut batches = 0;
        while let Some(batch) = migration.next_batch(&mut store, CLOCK) {
            // Two replies per key (`ASKING`, `SET`), one for the closing `CLUSTER IMPORT`.
            let requests = batch.windows(6).filter(|w| w == b"ASKING").count();
            let acks: std::vec::Vec<u8> = b"+OK\r\n".repeat((2 * requests).max(1));
            migration.take_replies(&acks, &mut store, CLOCK.now, |_| {});
            batches += 1;
            assert!(batches <= 4, "no end");
        }
        assert_eq!(batches, 3, "two batches of keys, then the import's end");
        assert_eq!(migration.moved(), 300);
        assert_eq!(migration.state(), MigrationState::Done);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn the_announcement_comes_first_and_its_reply_before_any_batch() {
        let mut store = store();
        store.set(b"bar", b"1", Ttl::Persist, CLOCK.now).unwrap();
        let mut migration = Migration::new(100, 5460, 1, CLOCK.now);
        assert_eq!(
            migration.announce(None),
            b"*4\r\n$7\r\nCLUSTER\r\n$6\r\nIMPORT\r\n$8\r\n100-5460\r\n$1\r\n0\r\n"
        );
        assert_eq!(
            migration.next_batch(&mut store, CLOCK),
            None,
            "not before its reply"
        );
        migration.take_replies(b"+OK\r\n", &mut store, CLOCK.now, |_| {});
        assert!(migration.next_batch(&mut store, CLOCK).is_some());
        assert!(store.contains(b"bar", CLOCK.now));
    }

    /// With a password, `AUTH` comes first (a new owner with the cluster's `requirepass`
    /// refuses anything else); a refused `AUTH` fails the migration before any key goes, and
    /// the new owner is then told nothing is coming.
    #[test]
    fn with_a_password_auth_comes_first_and_its_refusal_fails_the_migration() {
        let mut store = store();
        store.set(b"bar", b"1", Ttl::Persist, CLOCK.now).unwrap();
        let mut migration = Migration::new(5061, 5061, 1, CLOCK.now);
        assert_eq!(
            migration.announce(Some(b"s3cret")),
            b"*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n\
              *4\r\n$7\r\nCLUSTER\r\n$6\r\nIMPORT\r\n$9\r\n5061-5061\r\n$1\r\n0\r\n"
        );
        migration.take_replies(b"+OK\r\n", &mut store, CLOCK.now, |_| {});
        assert_eq!(
            migration.next_batch(&mut store, CLOCK),
            None,
            "two replies due"
        );
        migration.take_replies(
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
            &mut store,
            CLOCK.now,
            |_| {},
        );
        assert_eq!(migration.state(), MigrationState::Failed);
        assert!(store.contains(b"bar", CLOCK.now));
        assert_eq!(
            migration.failure_notice(),
            Some(b"*4\r\n$7\r\nCLUSTER\r\n$6\r\nIMPORT\r\n$9\r\n5061-5061\r\n$1\r\n2\r\n".to_vec())
        );
        assert_eq!(migration.failure_notice(), None, "once");
    }

    #[test]
    fn a_refusal_fails_the_migration_and_the_keys_stay() {
        let mut store = store();
        store.set(b"bar", b"1", Ttl::Persist, CLOCK.now).unwrap();
        let slot = key_slot(b"bar");
        let mut migration = Migration::new(slot, slot, 1, CLOCK.now);
        let batch = migration.next_batch(&mut store, CLOCK).unwrap();
        assert!(
            batch.ends_with(b"$3\r\nbar\r\n$1\r\n1\r\n"),
            "no PXAT without a deadline"
        );
        migration.take_replies(b"+OK\r\n-OOM no room\r\n", &mut store, CLOCK.now, |_| {});
        assert_eq!(migration.state(), MigrationState::Failed);
        assert!(store.contains(b"bar", CLOCK.now));
        assert!(migration.failure_notice().is_some(), "nothing went");
    }

    /// After a key went, a failure says nothing to the new owner: the keys moved are there,
    /// and it must go on serving them after `ASKING`.
    #[test]
    fn a_failure_after_a_key_went_tells_the_new_owner_nothing() {
        let mut store = store();
        store.set(b"{a}1", b"1", Ttl::Persist, CLOCK.now).unwrap();
        let slot = key_slot(b"a");
        let mut migration = Migration::new(slot, slot, 1, CLOCK.now);
        migration.next_batch(&mut store, CLOCK).unwrap();
        migration.take_replies(b"+OK\r\n+OK\r\n", &mut store, CLOCK.now, |_| {});
        assert_eq!(migration.moved(), 1);
        migration.fail();
        assert_eq!(migration.state(), MigrationState::Failed);
        assert_eq!(migration.failure_notice(), None);
    }

    #[test]
    fn without_a_wall_clock_nothing_is_sent() {
        let mut store = store();
        store.set(b"bar", b"1", Ttl::Persist, CLOCK.now).unwrap();
        let mut migration = Migration::new(0, 16383, 1, CLOCK.now);
        let clock = Clock {
            unix_ms: None,
            ..CLOCK
        };
        assert_eq!(migration.next_batch(&mut store, clock), None);
        assert_eq!(migration.state(), MigrationState::Running);
    }
}
