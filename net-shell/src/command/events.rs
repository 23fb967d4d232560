//! Keyspace notifications from commands, where Redis 7.0 calls `notifyKeyspaceEvent`: the
//! same classes, event names and order (`new` when a key is made, then the command's own
//! event; `keymiss` when a read finds no key; `expired` for a key found past its deadline
//! first, as Redis' lookup publishes it).
//!
//! Without the `pubsub` feature (a board) there is no one to tell: every call here is empty,
//! and the lookups made only for an event are skipped.

use super::Context;

/// The class an event belongs to (`notify-keyspace-events` letters).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `g`: `del`, `expire`, `persist`, `rename_from`, `rename_to`, `copy_to`.
    Generic,
    /// `$`: `set`, `incrby`, `append`, `setrange`, `setbit`, …
    String,
    /// `l`: `lpush`, `rpush`, `lpop`, `rpop`, `lset`, `linsert`, `lrem`, `ltrim`.
    #[cfg_attr(not(feature = "lists"), allow(dead_code))]
    List,
    /// `h`: `hset`, `hdel`, `hincrby`, `hincrbyfloat`.
    #[cfg_attr(not(feature = "hashes"), allow(dead_code))]
    Hash,
    /// `x`: `expired`.
    Expired,
    /// `m`: `keymiss`.
    KeyMiss,
    /// `n`: `new`.
    New,
}

#[cfg(feature = "pubsub")]
impl Class {
    const fn bit(self) -> u16 {
        use crate::pubsub::KeyspaceEvents as E;
        match self {
            Self::Generic => E::GENERIC,
            Self::String => E::STRING,
            Self::List => E::LIST,
            Self::Hash => E::HASH,
            Self::Expired => E::EXPIRED,
            Self::KeyMiss => E::KEY_MISS,
            Self::New => E::NEW,
        }
    }
}

impl Context<'_, '_> {
    /// Whether events of `class` are published now: lookups made only for an event are
    /// skipped when not.
    #[cfg(feature = "pubsub")]
    pub(crate) fn wants(&self, class: Class) -> bool {
        self.settings.keyspace_events.publishes(class.bit())
    }

    /// Whether events of `class` are published now: never without `pubsub`.
    #[cfg(not(feature = "pubsub"))]
    pub(crate) fn wants(&self, _: Class) -> bool {
        false
    }

    /// Publishes `event` on `key`, after the `expired` events of keys the command found past
    /// their deadline (Redis publishes those at the lookup, before the command's own).
    #[cfg(feature = "pubsub")]
    pub(crate) fn notify(&mut self, class: Class, event: &str, key: &[u8]) {
        let events = self.settings.keyspace_events;
        if !events.publishes(class.bit()) {
            return;
        }
        use crate::pubsub::KeyspaceEvents;
        for expired in self.store.take_expired_on_access() {
            self.pubsub
                .notify(events, KeyspaceEvents::EXPIRED, "expired", &expired);
        }
        self.pubsub.notify(events, class.bit(), event, key);
    }

    /// Publishes nothing: a build without `pubsub`.
    #[cfg(not(feature = "pubsub"))]
    pub(crate) fn notify(&mut self, _: Class, _: &str, _: &[u8]) {}

    /// A read of `key` (Redis' `lookupKeyRead`): `keymiss` if there is no live key.
    pub(crate) fn read(&mut self, key: &[u8]) {
        if self.wants(Class::KeyMiss) && !self.store.contains(key, self.clock.now) {
            self.notify(Class::KeyMiss, "keymiss", key);
        }
    }

    /// Whether a write to `key` will make it (for the `new` event); `false` whenever `new`
    /// events are off, so the lookup is skipped.
    pub(crate) fn makes(&mut self, key: &[u8]) -> bool {
        self.wants(Class::New) && !self.store.contains(key, self.clock.now)
    }

    /// A write to `key` done: `new` first if it made the key, then `event` of `class`.
    pub(crate) fn written(&mut self, made: bool, class: Class, event: &str, key: &[u8]) {
        if made {
            self.notify(Class::New, "new", key);
        }
        self.notify(class, event, key);
    }
}
