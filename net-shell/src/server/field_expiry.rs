//! Hash fields whose deadline has passed: each field's timer fires the tick after its deadline,
//! and the field is removed then, with its `hexpired` event (and `del` when it was the hash's
//! last field), at most the expiry budget of them per sweep, as keys are.

use timer_core::Tick;

use super::Server;

impl Server<'_> {
    /// Removes the fields whose timers have fired by `now`.
    pub(super) fn expire_fields(&mut self, now: Tick) {
        let mut budget = self.expire_budget;
        while budget > 0 {
            let Some(expired) = self.field_timers.pop_expired(now) else {
                return;
            };
            budget -= 1;
            let (key, field) = (expired.value.key, expired.value.field);
            // The deadline it was filed for: one tick before the timer's.
            let deadline = expired.deadline.saturating_sub(1);
            let Some(gone) =
                crate::command::expire_field(&mut self.store, &key, &field, deadline, now)
            else {
                continue; // changed or deleted since
            };
            #[cfg(feature = "pubsub")]
            {
                use crate::pubsub::KeyspaceEvents as E;
                let events = self.settings.keyspace_events;
                self.pubsub.notify(events, E::HASH, "hexpired", &key);
                if gone {
                    self.pubsub.notify(events, E::GENERIC, "del", &key);
                }
            }
            #[cfg(not(feature = "pubsub"))]
            let _ = gone;
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
