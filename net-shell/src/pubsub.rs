//! Publish/subscribe: the channels and patterns each client listens to, the messages published
//! to them, and keyspace notifications (Redis' `pubsub.c` and `notify.c`).
//!
//! Commands change subscriptions and publish; what they publish waits in an outbox until the
//! server hands each message to its receivers' connections (each in the protocol that
//! connection speaks). Clients are named by their slot in the connection table.
//!
//! With the `pubsub` feature only: channel names and messages take memory in proportion to what
//! clients send.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;

use crate::command::glob;

/// Which keyspace events are published (Redis' `notify-keyspace-events`): a class for each
/// kind of change, and where to publish (`K`: `__keyspace@0__:<key>`, `E`:
/// `__keyevent@0__:<event>`).
///
/// # Examples
///
/// ```
/// use net_shell::pubsub::KeyspaceEvents;
///
/// let events = KeyspaceEvents::parse(b"Ex").unwrap();
/// assert!(events.publishes(KeyspaceEvents::EXPIRED));
/// assert_eq!(events.to_string(), "xE");
/// assert_eq!(KeyspaceEvents::parse(b"KEA").unwrap().to_string(), "AKE");
/// assert!(KeyspaceEvents::parse(b"Q").is_none());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct KeyspaceEvents(u16);

impl KeyspaceEvents {
    /// None: Redis' default.
    pub const NONE: Self = Self(0);
    const KEYSPACE: u16 = 1 << 0;
    const KEYEVENT: u16 = 1 << 1;
    /// `g`: generic commands (`DEL`, `EXPIRE`, `RENAME`, `COPY`, …).
    pub const GENERIC: u16 = 1 << 2;
    /// `$`: string commands.
    pub const STRING: u16 = 1 << 3;
    /// `l`: list commands.
    pub const LIST: u16 = 1 << 4;
    /// `h`: hash commands.
    pub const HASH: u16 = 1 << 6;
    /// `x`: a key removed when its time to live ran out.
    pub const EXPIRED: u16 = 1 << 8;
    /// `A`: every class but `m` and `n` (Redis 7.0's `NOTIFY_ALL`).
    const ALL: u16 = 0b11_1111_1111 << 2;
    /// `m`: a read found no key (`keymiss`); not part of `A`.
    pub const KEY_MISS: u16 = 1 << 12;
    /// `n`: a key was created (`new`); not part of `A`.
    pub const NEW: u16 = 1 << 13;
    /// The classes in the order Redis writes them (`keyspaceEventsFlagsToString`).
    const CLASSES: [(u8, u16); 10] = [
        (b'g', Self::GENERIC),
        (b'$', Self::STRING),
        (b'l', Self::LIST),
        (b's', 1 << 5),
        (b'h', Self::HASH),
        (b'z', 1 << 7),
        (b'x', Self::EXPIRED),
        (b'e', 1 << 9),
        (b't', 1 << 10),
        (b'd', 1 << 11),
    ];

    /// Reads Redis' class letters (`Ag$lshzxeKEtmdn`); `None` for any other character.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let mut flags = 0;
        for &c in text {
            flags |= match c {
                b'A' => Self::ALL,
                b'K' => Self::KEYSPACE,
                b'E' => Self::KEYEVENT,
                b'm' => Self::KEY_MISS,
                b'n' => Self::NEW,
                _ => Self::CLASSES.iter().find(|(l, _)| *l == c)?.1,
            };
        }
        Some(Self(flags))
    }

    /// Whether events of `class` go out: the class is on, and `K` or `E` too.
    pub const fn publishes(self, class: u16) -> bool {
        self.0 & class != 0 && self.0 & (Self::KEYSPACE | Self::KEYEVENT) != 0
    }
}

impl core::fmt::Display for KeyspaceEvents {
    /// As Redis 7.0 shows it in `CONFIG GET` (`n` is not shown beside `A`, as there).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut letters: heapless::Vec<u8, 16> = heapless::Vec::new();
        if self.0 & Self::ALL == Self::ALL {
            let _ = letters.push(b'A');
        } else {
            for (letter, bit) in Self::CLASSES {
                if self.0 & bit != 0 {
                    let _ = letters.push(letter);
                }
            }
            if self.0 & Self::NEW != 0 {
                let _ = letters.push(b'n');
            }
        }
        for (letter, bit) in [
            (b'K', Self::KEYSPACE),
            (b'E', Self::KEYEVENT),
            (b'm', Self::KEY_MISS),
        ] {
            if self.0 & bit != 0 {
                let _ = letters.push(letter);
            }
        }
        f.write_str(core::str::from_utf8(&letters).unwrap_or_default())
    }
}

/// A message published, for the clients it goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Publication {
    pub(crate) channel: Vec<u8>,
    pub(crate) payload: Vec<u8>,
    /// Each receiver's slot, with the pattern it matched (`None`: it subscribed to the
    /// channel), in Redis' order: channel subscribers first, then pattern subscribers.
    pub(crate) receivers: Vec<(u16, Option<Vec<u8>>)>,
}

/// A command as `MONITOR` clients see it, waiting to go out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MonitorLine {
    /// The slot of the client that ran it (the server prints its address).
    pub(crate) from: u16,
    /// When it ran, Unix milliseconds (or the uptime, without a wall clock).
    pub(crate) unix_ms: u64,
    /// Its words, each quoted as Redis' `sdscatrepr` quotes them, separated by spaces.
    pub(crate) words: Vec<u8>,
}

/// One client's subscriptions.
#[derive(Default)]
struct Subscriptions {
    channels: BTreeSet<Vec<u8>>,
    patterns: BTreeSet<Vec<u8>>,
}

/// Every subscription on the server, and the messages waiting to go out.
#[derive(Default)]
pub struct PubSub {
    /// Channel: its subscribers, in the order they subscribed.
    channels: BTreeMap<Vec<u8>, Vec<u16>>,
    /// Pattern: its subscribers, in the order they subscribed.
    patterns: BTreeMap<Vec<u8>, Vec<u16>>,
    /// Slot: what that client listens to (only clients with a subscription).
    clients: BTreeMap<u16, Subscriptions>,
    outbox: Vec<Publication>,
    /// Clients in `MONITOR` mode, in the order they asked.
    monitors: Vec<u16>,
    /// Commands run since the last delivery, for the monitors.
    monitor_feed: Vec<MonitorLine>,
}

/// A subscription kind: the two share their bookkeeping.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Channel,
    Pattern,
}

impl PubSub {
    /// No subscriptions.
    pub const fn new() -> Self {
        Self {
            channels: BTreeMap::new(),
            patterns: BTreeMap::new(),
            clients: BTreeMap::new(),
            outbox: Vec::new(),
            monitors: Vec::new(),
            monitor_feed: Vec::new(),
        }
    }

    /// Puts client `slot` in `MONITOR` mode; `false` if it already was.
    pub(crate) fn add_monitor(&mut self, slot: u16) -> bool {
        let new = !self.is_monitor(slot);
        if new {
            self.monitors.push(slot);
        }
        new
    }

    /// Whether client `slot` is in `MONITOR` mode.
    pub(crate) fn is_monitor(&self, slot: u16) -> bool {
        self.monitors.contains(&slot)
    }

    /// Whether any client is in `MONITOR` mode (commands are fed to them only then).
    pub(crate) fn has_monitors(&self) -> bool {
        !self.monitors.is_empty()
    }

    /// Queues a command for the monitors.
    pub(crate) fn feed_monitors(&mut self, line: MonitorLine) {
        self.monitor_feed.push(line);
    }

    /// Takes the commands fed since the last call.
    pub(crate) fn take_monitor_feed(&mut self) -> Vec<MonitorLine> {
        core::mem::take(&mut self.monitor_feed)
    }

    /// The clients in `MONITOR` mode.
    pub(crate) fn monitors(&self) -> &[u16] {
        &self.monitors
    }

    /// Whether client `slot` waits for what others do (subscriptions or `MONITOR`): it has no
    /// idle timeout then, as in Redis.
    pub(crate) fn listens(&self, slot: u16) -> bool {
        self.count(slot) > 0 || self.is_monitor(slot)
    }

    /// Channels and patterns client `slot` listens to (Redis' `clientSubscriptionsCount`).
    pub(crate) fn count(&self, slot: u16) -> usize {
        self.clients
            .get(&slot)
            .map_or(0, |s| s.channels.len() + s.patterns.len())
    }

    /// Subscribes `slot` to `name`; the client's subscriptions after.
    pub(crate) fn subscribe(&mut self, kind: Kind, slot: u16, name: &[u8]) -> usize {
        let client = self.clients.entry(slot).or_default();
        let (mine, all) = match kind {
            Kind::Channel => (&mut client.channels, &mut self.channels),
            Kind::Pattern => (&mut client.patterns, &mut self.patterns),
        };
        if mine.insert(name.to_vec()) {
            all.entry(name.to_vec()).or_default().push(slot);
        }
        self.count(slot)
    }

    /// Unsubscribes `slot` from `name` (if it was); the client's subscriptions after.
    pub(crate) fn unsubscribe(&mut self, kind: Kind, slot: u16, name: &[u8]) -> usize {
        if let Some(client) = self.clients.get_mut(&slot) {
            let (mine, all) = match kind {
                Kind::Channel => (&mut client.channels, &mut self.channels),
                Kind::Pattern => (&mut client.patterns, &mut self.patterns),
            };
            if mine.remove(name) {
                if let Some(subscribers) = all.get_mut(name) {
                    subscribers.retain(|&s| s != slot);
                    if subscribers.is_empty() {
                        all.remove(name);
                    }
                }
            }
            if client.channels.is_empty() && client.patterns.is_empty() {
                self.clients.remove(&slot);
            }
        }
        self.count(slot)
    }

    /// What `slot` listens to of `kind`.
    pub(crate) fn subscriptions(&self, kind: Kind, slot: u16) -> Vec<Vec<u8>> {
        self.clients.get(&slot).map_or_else(Vec::new, |client| {
            let mine = match kind {
                Kind::Channel => &client.channels,
                Kind::Pattern => &client.patterns,
            };
            mine.iter().cloned().collect()
        })
    }

    /// Drops every subscription of `slot`, and its `MONITOR` mode (its connection closed).
    pub(crate) fn forget(&mut self, slot: u16) {
        self.monitors.retain(|&s| s != slot);
        for kind in [Kind::Channel, Kind::Pattern] {
            for name in self.subscriptions(kind, slot) {
                self.unsubscribe(kind, slot, &name);
            }
        }
    }

    /// Publishes `payload` on `channel`; how many clients will receive it.
    pub(crate) fn publish(&mut self, channel: &[u8], payload: &[u8]) -> usize {
        let mut receivers: Vec<(u16, Option<Vec<u8>>)> = self
            .channels
            .get(channel)
            .map(|slots| slots.iter().map(|&s| (s, None)).collect())
            .unwrap_or_default();
        for (pattern, slots) in &self.patterns {
            if glob::matches(pattern, channel, false) {
                receivers.extend(slots.iter().map(|&s| (s, Some(pattern.clone()))));
            }
        }
        let count = receivers.len();
        if count > 0 {
            self.outbox.push(Publication {
                channel: channel.to_vec(),
                payload: payload.to_vec(),
                receivers,
            });
        }
        count
    }

    /// Publishes a keyspace event, as Redis' `notifyKeyspaceEvent`: `event` on
    /// `__keyspace@0__:<key>` (with `K`), then `key` on `__keyevent@0__:<event>` (with `E`).
    pub(crate) fn notify(&mut self, events: KeyspaceEvents, class: u16, event: &str, key: &[u8]) {
        if !events.publishes(class) {
            return;
        }
        if events.0 & KeyspaceEvents::KEYSPACE != 0 {
            let channel = [b"__keyspace@0__:".as_slice(), key].concat();
            self.publish(&channel, event.as_bytes());
        }
        if events.0 & KeyspaceEvents::KEYEVENT != 0 {
            let channel = [b"__keyevent@0__:".as_slice(), event.as_bytes()].concat();
            self.publish(&channel, key);
        }
    }

    /// Takes the messages published since the last call.
    pub(crate) fn take_outbox(&mut self) -> Vec<Publication> {
        core::mem::take(&mut self.outbox)
    }

    /// Whether messages wait to go out.
    pub(crate) fn has_outbox(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Channels with at least one subscriber, those matching `pattern` if given
    /// (`PUBSUB CHANNELS`).
    pub(crate) fn active_channels(&self, pattern: Option<&[u8]>) -> Vec<&[u8]> {
        self.channels
            .keys()
            .filter(|c| pattern.is_none_or(|p| glob::matches(p, c, false)))
            .map(Vec::as_slice)
            .collect()
    }

    /// Subscribers of `channel` (`PUBSUB NUMSUB`).
    pub(crate) fn subscribers(&self, channel: &[u8]) -> usize {
        self.channels.get(channel).map_or(0, Vec::len)
    }

    /// Patterns with at least one subscriber (`PUBSUB NUMPAT`).
    pub(crate) fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Channels with at least one subscriber (`INFO`'s `pubsub_channels`).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn publish_reaches_channel_then_pattern_subscribers_in_order() {
        let mut pubsub = PubSub::new();
        assert_eq!(pubsub.subscribe(Kind::Channel, 3, b"news"), 1);
        assert_eq!(pubsub.subscribe(Kind::Channel, 1, b"news"), 1);
        assert_eq!(pubsub.subscribe(Kind::Pattern, 3, b"n*"), 2);
        assert_eq!(pubsub.publish(b"news", b"hi"), 3);
        assert_eq!(pubsub.publish(b"other", b"hi"), 0);
        let out = pubsub.take_outbox();
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].receivers,
            [(3, None), (1, None), (3, Some(b"n*".to_vec()))]
        );
        assert!(!pubsub.has_outbox());
    }

    #[test]
    fn subscribing_twice_counts_once_and_forget_drops_all() {
        let mut pubsub = PubSub::new();
        pubsub.subscribe(Kind::Channel, 0, b"a");
        assert_eq!(pubsub.subscribe(Kind::Channel, 0, b"a"), 1);
        assert_eq!(pubsub.subscribers(b"a"), 1);
        pubsub.subscribe(Kind::Pattern, 0, b"*");
        pubsub.forget(0);
        assert_eq!(pubsub.count(0), 0);
        assert_eq!(pubsub.channel_count(), 0);
        assert_eq!(pubsub.pattern_count(), 0);
        assert_eq!(pubsub.unsubscribe(Kind::Channel, 0, b"a"), 0);
    }

    #[test]
    fn expired_events_go_to_keyspace_then_keyevent_channels() {
        let mut pubsub = PubSub::new();
        pubsub.subscribe(Kind::Pattern, 0, b"__key*__:*");
        let events = KeyspaceEvents::parse(b"KEx").unwrap();
        pubsub.notify(events, KeyspaceEvents::EXPIRED, "expired", b"k");
        let out = pubsub.take_outbox();
        assert_eq!(out[0].channel, b"__keyspace@0__:k");
        assert_eq!(out[0].payload, b"expired");
        assert_eq!(out[1].channel, b"__keyevent@0__:expired");
        assert_eq!(out[1].payload, b"k");
        // A class without K or E publishes nothing.
        let quiet = KeyspaceEvents::parse(b"x").unwrap();
        pubsub.notify(quiet, KeyspaceEvents::EXPIRED, "expired", b"k");
        assert!(!pubsub.has_outbox());
    }

    #[test]
    fn event_flags_show_as_redis_7_0_does() {
        let shown = |text: &[u8]| KeyspaceEvents::parse(text).unwrap().to_string();
        assert_eq!(shown(b""), "");
        assert_eq!(shown(b"g$lshzxetdmn"), "Am");
        assert_eq!(shown(b"AKEm"), "AKEm");
        assert_eq!(shown(b"nx"), "xn");
    }
}
