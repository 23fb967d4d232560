//! What a key holds: the store keeps every value as bytes, and each entry says how to read
//! them (Redis' object types).

/// The type of a key's value, as `TYPE` names it.
///
/// # Examples
///
/// ```
/// use net_shell::store::{Store, StoreMemory, Ttl, ValueKind};
///
/// let mut store = Store::new(StoreMemory::allocate(8, 1024), 16, 64);
/// store.set(b"s", b"v", Ttl::Persist, 0).unwrap();
/// store.set_kind(b"l", b"", ValueKind::List, Ttl::Persist, 0).unwrap();
/// assert_eq!(store.value_kind(b"s", 0), Some(ValueKind::String));
/// assert_eq!(store.value_kind(b"l", 0).map(ValueKind::name), Some("list"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ValueKind {
    /// Bytes, as written.
    #[default]
    String,
    /// A list of byte strings, in the encoding of `store::list`.
    List,
    /// Fields and their values, alternating in the encoding of `store::list`.
    Hash,
}

impl ValueKind {
    /// The name `TYPE` answers, and `SCAN … TYPE` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::List => "list",
            Self::Hash => "hash",
        }
    }
}
