//! Which kind of value a command may act on: a command for strings answers Redis' `WRONGTYPE`
//! error for a key holding a list (Redis' `checkType`), at the point where Redis looks the key
//! up, so errors about arguments come first where they do in Redis.

use super::{error, Context, Reply, ReplyWriter};
#[cfg(feature = "lists")]
use crate::store::ValueKind;

/// Redis' error for a key of another kind.
pub(crate) const WRONGTYPE: &str =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

/// A key holds another kind of value than the command acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WrongType;

impl WrongType {
    /// Replies with Redis' error.
    pub(crate) fn reply(self, out: &mut ReplyWriter<'_>) -> Reply {
        error(out, WRONGTYPE)
    }
}

impl Context<'_, '_> {
    /// The string at `key` (`None`: no such key), or [`WrongType`] if it holds another kind.
    pub(crate) fn string(&mut self, key: &[u8]) -> Result<Option<&[u8]>, WrongType> {
        #[cfg(feature = "lists")]
        return self.value_of(key, ValueKind::String);
        #[cfg(not(feature = "lists"))]
        Ok(self.store.get(key, self.clock.now))
    }

    /// [`WrongType`] if `key` holds another kind than a string (a missing key does not).
    pub(crate) fn check_string(&mut self, key: &[u8]) -> Result<(), WrongType> {
        self.string(key).map(|_| ())
    }

    /// The value at `key` if it is of `kind` (`None`: no such key), or [`WrongType`].
    #[cfg(feature = "lists")]
    pub(crate) fn value_of(
        &mut self,
        key: &[u8],
        kind: ValueKind,
    ) -> Result<Option<&[u8]>, WrongType> {
        match self.store.get_kind(key, self.clock.now) {
            None => Ok(None),
            Some((found, value)) if found == kind => Ok(Some(value)),
            Some(_) => Err(WrongType),
        }
    }
}

/// The string at a key, or the `WRONGTYPE` reply returned from the handler.
macro_rules! string_or_return {
    ($ctx:expr, $key:expr, $out:expr) => {
        match $ctx.string($key) {
            Ok(value) => value,
            Err(wrong) => return wrong.reply($out),
        }
    };
}
pub(crate) use string_or_return;
