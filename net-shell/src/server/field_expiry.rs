//! Hash fields whose deadline has passed: each hash with field deadlines has one timer, which
//! fires the tick after the earliest; then every field of it past its deadline is removed, with
//! one `hexpired` event for the hash (and `del` when it was emptied), as Redis' active expiry
//! publishes per hash, and the timer is armed at the next deadline. At most the expiry budget
//! of hashes per sweep, as keys are.

use timer_core::Tick;

use super::Server;
use crate::resp::ReplyWriter;

impl Server<'_> {
    /// Removes the fields whose deadlines have passed, of the hashes whose timers fired by
    /// `now`.
    pub(super) fn expire_fields(&mut self, now: Tick) {
        let mut budget = self.expire_budget;
        while budget > 0 {
            let Some(fired) = self.field_timers.pop_expired(now) else {
                break;
            };
            budget -= 1;
            let key = self.field_timers.key(&fired);
            // A packed hash is written anew through the reply buffer, free between commands.
            #[cfg(feature = "alloc")]
            let mut scratch = ReplyWriter::growable(&mut self.reply_vec);
            #[cfg(not(feature = "alloc"))]
            let mut scratch = ReplyWriter::new(&mut self.reply);
            let swept = crate::command::expire_fields(&mut self.store, key, now, &mut scratch);
            #[cfg(feature = "pubsub")]
            if let Some(swept) = &swept {
                if swept.expired > 0 {
                    use crate::pubsub::KeyspaceEvents as E;
                    let events = self.settings.keyspace_events;
                    self.pubsub.notify(events, E::HASH, "hexpired", key);
                    if swept.gone {
                        self.pubsub.notify(events, E::GENERIC, "del", key);
                    }
                }
            }
            // No longer a hash: its timer is given back.
            let next = swept.and_then(|swept| swept.next_deadline);
            self.field_timers.rearm(fired, next);
        }
        self.more_keys_due |= self
            .field_timers
            .next_deadline()
            .is_some_and(|at| at <= now);
        #[cfg(feature = "pubsub")]
        self.deliver_messages(now);
    }

    /// When the next field timer is due.
    pub(super) fn next_field_deadline(&self) -> Option<Tick> {
        self.field_timers.next_deadline()
    }
}
