//! Connection timers: arming them as [`timer_policy`] says, and acting when they fire.

use smoltcp::socket::tcp;
use timer_core::{Tick, TimerId, TimerQueue};

use super::connection::Phase;
use super::timer_policy::{self, Timeout};
use super::Server;

/// Puts `timer` at `deadline` in `queue`: moved if pending, inserted with `value` if not (or
/// if stale), cancelled for `None`. Returns the timer now pending, if any.
pub(super) fn rearm<T, Q: TimerQueue<T>>(
    queue: &mut Q,
    timer: Option<TimerId>,
    deadline: Option<Tick>,
    value: T,
) -> Option<TimerId> {
    match (timer, deadline) {
        (Some(id), Some(at)) => match queue.reschedule(id, at) {
            Ok(()) => Some(id),
            Err(_) => queue.insert(at, value).ok(),
        },
        (None, Some(at)) => queue.insert(at, value).ok(),
        (Some(id), None) => {
            let _ = queue.cancel(id);
            None
        }
        (None, None) => None,
    }
}

impl Server<'_> {
    /// Puts an open connection's timers where [`timer_policy`] says, touching the timer queues
    /// only when something changed.
    pub(super) fn arm_timers(&mut self, index: usize) {
        let timeouts = self.settings.timeouts;
        let timing = self.conns[index].timing();
        let main = timer_policy::open_timer(&timing, &timeouts);
        let current = self.conns[index].timer.and_then(|id| {
            Some((
                Timeout::of_list(self.conn_timers.list_of(id)?)?,
                self.conn_timers.deadline(id)?,
            ))
        });
        if main != current {
            self.set_timer(index, main);
        }

        let write = timer_policy::write_deadline(&timing, &timeouts);
        let conn = &mut self.conns[index];
        let current = conn
            .write_timer
            .and_then(|id| self.write_timers.deadline(id));
        if write != current {
            conn.write_timer = rearm(
                &mut self.write_timers,
                conn.write_timer,
                write,
                index as u16,
            );
        }
    }

    /// Puts the connection's main timer on `timeout`'s list at its deadline (`None`: no timer).
    pub(super) fn set_timer(&mut self, index: usize, timer: Option<(Timeout, Tick)>) {
        let conn = &mut self.conns[index];
        match (conn.timer, timer) {
            (Some(id), Some((timeout, at))) => {
                if self.conn_timers.move_to(id, timeout.list(), at).is_err() {
                    conn.timer = self
                        .conn_timers
                        .insert_into(timeout.list(), at, index as u16)
                        .ok();
                }
            }
            (None, Some((timeout, at))) => {
                conn.timer = self
                    .conn_timers
                    .insert_into(timeout.list(), at, index as u16)
                    .ok();
            }
            (Some(id), None) => {
                let _ = self.conn_timers.cancel(id);
                conn.timer = None;
            }
            (None, None) => {}
        }
    }

    pub(super) fn expire_connections(&mut self, now: Tick) {
        // One list at a time: the list a timer was on says which timeout it was.
        for timeout in Timeout::ALL {
            while let Some(expired) = self.conn_timers.pop_expired_in(timeout.list(), now) {
                let index = usize::from(expired.value);
                let Some(conn) = self.conns.get_mut(index) else {
                    continue;
                };
                if conn.timer != Some(expired.id) {
                    continue;
                }
                conn.timer = None;
                match (timeout, conn.phase) {
                    (Timeout::Closing, Phase::Closing) => {
                        debug!("slot {}: the peer did not finish closing, aborting", index);
                        self.stats.aborted_closes += 1;
                        self.recycle(index);
                    }
                    (Timeout::Read, Phase::Open) => {
                        debug!("slot {}: read timeout, closing", index);
                        self.stats.read_timeout_closes += 1;
                        self.begin_close(index, now);
                    }
                    (Timeout::Idle, Phase::Open) => {
                        debug!("slot {}: idle timeout, closing", index);
                        self.stats.idle_timeout_closes += 1;
                        let late = now.saturating_sub(expired.deadline);
                        let most = &mut self.stats.idle_close_max_late_ms;
                        *most = (*most).max(late);
                        self.begin_close(index, now);
                    }
                    (Timeout::Handshake, Phase::Listening)
                        if self.sockets.tcp(index, conn.socket).state()
                            == tcp::State::SynReceived =>
                    {
                        debug!("slot {}: handshake timeout, listening again", index);
                        self.stats.handshake_timeouts += 1;
                        self.listen_fresh(index);
                    }
                    _ => {}
                }
            }
        }
        while let Some(expired) = self.write_timers.pop_expired(now) {
            let index = usize::from(expired.value);
            let Some(conn) = self.conns.get_mut(index) else {
                continue;
            };
            if conn.write_timer != Some(expired.id) {
                continue;
            }
            conn.write_timer = None;
            if conn.phase == Phase::Open {
                debug!("slot {}: write timeout, closing", index);
                self.stats.write_timeout_closes += 1;
                self.begin_close(index, now);
            }
        }
    }
}
