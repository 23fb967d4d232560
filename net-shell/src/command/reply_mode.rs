//! `CLIENT REPLY ON|OFF|SKIP`: whether a connection's replies are sent, as Redis 7.0 keeps it
//! in three client flags (`CLIENT_REPLY_OFF`, `CLIENT_REPLY_SKIP_NEXT`, `CLIENT_REPLY_SKIP`).
//! Commands still run, and count, when their replies are dropped. Pub/sub confirmations and
//! messages are pushes, sent whatever the mode (Redis' `CLIENT_PUSHING`).

use super::{error, ok, After, Context, Reply, ReplyWriter, SYNTAX};

/// A connection's reply mode.
///
/// # Examples
///
/// The state moves as Redis' `resetClient` moves it, after each command:
///
/// ```text
/// CLIENT REPLY SKIP   -> no reply (the command writes none)
/// GET k               -> dropped
/// GET k               -> sent
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReplyMode {
    /// `CLIENT REPLY OFF`: every reply is dropped until `ON`.
    off: bool,
    /// `CLIENT REPLY SKIP` ran: the next command's reply is dropped.
    skip_next: bool,
    /// This command's reply is dropped.
    skip: bool,
}

impl ReplyMode {
    /// Replies are sent: a new connection's mode.
    pub const ON: Self = Self {
        off: false,
        skip_next: false,
        skip: false,
    };

    /// A command ran: whether its reply is to be dropped. Then a `SKIP` given by this command
    /// applies to the next one.
    pub(crate) fn after_command(&mut self) -> bool {
        let drop = self.off || self.skip;
        self.skip = core::mem::take(&mut self.skip_next);
        drop
    }
}

/// `CLIENT REPLY ON|OFF|SKIP` (Redis' `clientCommand`): only `ON` answers; `SKIP` while `OFF`
/// changes nothing.
pub(crate) fn client_reply(
    ctx: &mut Context<'_, '_>,
    argv: &[&[u8]],
    out: &mut ReplyWriter<'_>,
) -> Reply {
    let mode = &mut *ctx.reply_mode;
    if super::is(argv[2], "on") {
        mode.off = false;
        mode.skip = false;
        ok(out)
    } else if super::is(argv[2], "off") {
        mode.off = true;
        Ok(After::Continue)
    } else if super::is(argv[2], "skip") {
        mode.skip_next |= !mode.off;
        Ok(After::Continue)
    } else {
        error(out, SYNTAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_drops_the_next_reply_only() {
        let mut mode = ReplyMode::ON;
        mode.skip_next = true; // CLIENT REPLY SKIP
        assert!(!mode.after_command()); // its own (empty) reply
        assert!(mode.after_command()); // the next command's
        assert!(!mode.after_command());
    }

    #[test]
    fn off_drops_every_reply_until_on() {
        let mut mode = ReplyMode::ON;
        mode.off = true;
        assert!(mode.after_command());
        assert!(mode.after_command());
        mode.off = false; // CLIENT REPLY ON
        assert!(!mode.after_command());
    }
}
