//! Who may talk to the server: Redis' `requirepass` and protected mode.
//!
//! With a password set, a new connection must `AUTH` (or `HELLO … AUTH`) before anything but
//! `AUTH`, `HELLO` and `QUIT`, and gets `-NOAUTH` until it has; a wrong password gets
//! `-WRONGPASS`. With no password set and protected mode on (the default, as in Redis),
//! only clients from the trusted network are served; others get Redis' `-DENIED` explanation
//! and are disconnected. Redis trusts its loopback interface; a device on a LAN has none, so
//! the trusted network is configured (`None`: nobody is trusted until a password is set).
//!
//! Passwords are compared in constant time: always over [`MAX_PASSWORD_LEN`] bytes, with
//! [`subtle`], so the time taken says nothing of where a guess first differs, nor of the
//! password's length.

use core::fmt;

use smoltcp::wire::{IpAddress, Ipv4Cidr};
use subtle::ConstantTimeEq;

/// The longest password `requirepass` takes.
pub const MAX_PASSWORD_LEN: usize = 128;

/// The password and protected-mode settings (`requirepass`, `protected-mode`,
/// `trusted-network`), changeable at run time with `CONFIG SET`.
///
/// # Examples
///
/// ```
/// use net_shell::Security;
/// use net_shell::smoltcp::wire::{IpAddress, Ipv4Address, Ipv4Cidr};
///
/// let lan = Ipv4Cidr::new(Ipv4Address::new(10, 77, 0, 0), 24);
/// let mut security = Security::DEFAULT.trusting(Some(lan));
/// assert!(!security.requires_auth());
/// assert!(security.admits(IpAddress::v4(10, 77, 0, 1)));
/// assert!(!security.admits(IpAddress::v4(192, 168, 1, 5)));
///
/// security.set_password(b"s3cret").unwrap();
/// assert!(security.requires_auth());
/// assert!(security.admits(IpAddress::v4(192, 168, 1, 5))); // a password ends protected mode
/// assert!(security.password_matches(b"s3cret"));
/// assert!(!security.password_matches(b"s3cre"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Security {
    password: [u8; MAX_PASSWORD_LEN],
    password_len: u8,
    /// Redis' `protected-mode`: with no password set, serve only the trusted network.
    pub protected_mode: bool,
    /// The network whose clients protected mode lets in (Redis lets in its loopback interface).
    pub trusted_network: Option<Ipv4Cidr>,
}

/// A password longer than [`MAX_PASSWORD_LEN`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PasswordTooLong;

impl fmt::Display for PasswordTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a password is at most {MAX_PASSWORD_LEN} bytes")
    }
}

impl core::error::Error for PasswordTooLong {}

impl Security {
    /// As Redis starts: no password, protected mode on, and (having no loopback interface)
    /// nobody trusted.
    pub const DEFAULT: Self = Self {
        password: [0; MAX_PASSWORD_LEN],
        password_len: 0,
        protected_mode: true,
        trusted_network: None,
    };

    /// These settings with `network` trusted by protected mode.
    pub const fn trusting(mut self, network: Option<Ipv4Cidr>) -> Self {
        self.trusted_network = network;
        self
    }

    /// Sets the password; an empty one removes it, as `CONFIG SET requirepass ""` does.
    ///
    /// # Errors
    ///
    /// [`PasswordTooLong`] past [`MAX_PASSWORD_LEN`] bytes; the password is then unchanged.
    pub fn set_password(&mut self, password: &[u8]) -> Result<(), PasswordTooLong> {
        if password.len() > MAX_PASSWORD_LEN {
            return Err(PasswordTooLong);
        }
        self.password = [0; MAX_PASSWORD_LEN];
        self.password[..password.len()].copy_from_slice(password);
        self.password_len = password.len() as u8;
        Ok(())
    }

    /// The password, if one is set.
    pub fn password(&self) -> Option<&[u8]> {
        let len = usize::from(self.password_len);
        (len > 0).then(|| &self.password[..len])
    }

    /// Whether new connections must authenticate.
    pub const fn requires_auth(&self) -> bool {
        self.password_len > 0
    }

    /// Whether `candidate` is the password, compared in constant time. With no password set,
    /// every candidate matches (Redis' default user has `nopass`).
    pub fn password_matches(&self, candidate: &[u8]) -> bool {
        if !self.requires_auth() {
            return true;
        }
        // Compare fixed-size buffers, so neither the contents nor the length shows in timing.
        let mut padded = [0u8; MAX_PASSWORD_LEN];
        let fits = candidate.len() <= MAX_PASSWORD_LEN;
        let take = candidate.len().min(MAX_PASSWORD_LEN);
        padded[..take].copy_from_slice(&candidate[..take]);
        let same_bytes = padded.ct_eq(&self.password);
        let same_len = (candidate.len() as u64).ct_eq(&u64::from(self.password_len));
        bool::from(same_bytes & same_len) && fits
    }

    /// Whether protected mode lets a client from `peer` in: always with a password set or
    /// protected mode off, otherwise only from the trusted network.
    pub fn admits(&self, peer: IpAddress) -> bool {
        if self.requires_auth() || !self.protected_mode {
            return true;
        }
        match (self.trusted_network, peer) {
            (Some(network), IpAddress::Ipv4(address)) => network.contains_addr(&address),
            _ => false,
        }
    }
}

impl Default for Security {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Debug for Security {
    // Never print the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Security")
            .field("requires_auth", &self.requires_auth())
            .field("protected_mode", &self.protected_mode)
            .field("trusted_network", &self.trusted_network)
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Security {
    // Never log the password.
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Security {{ requires_auth: {}, protected_mode: {}, trusted_network: {} }}",
            self.requires_auth(),
            self.protected_mode,
            self.trusted_network
        );
    }
}

/// Redis 7's reply to a client refused by protected mode, byte for byte (checked against
/// redis-server 7.0.15). "The loopback interface" is this server's trusted network.
pub(crate) const DENIED: &[u8] = b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Redis' replies about authentication.
pub(crate) const NOAUTH: &str = "NOAUTH Authentication required.";
pub(crate) const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub(crate) const NO_PASSWORD_SET: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub(crate) const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";

/// The only user: Redis' `default`.
pub(crate) const DEFAULT_USER: &[u8] = b"default";

#[cfg(test)]
mod tests {
    use super::*;
    use smoltcp::wire::Ipv4Address;

    #[test]
    fn password_matches_only_itself() {
        let mut security = Security::DEFAULT;
        security.set_password(b"s3cret").unwrap();
        assert!(security.password_matches(b"s3cret"));
        for wrong in [&b""[..], b"s3cre", b"s3crett", b"S3cret", b"s3cret\0"] {
            assert!(!security.password_matches(wrong), "{wrong:?}");
        }
        let long = [b'a'; MAX_PASSWORD_LEN + 1];
        assert!(!security.password_matches(&long));
    }

    #[test]
    fn password_of_max_len_set_and_longer_refused() {
        let mut security = Security::DEFAULT;
        let max = [b'x'; MAX_PASSWORD_LEN];
        assert_eq!(security.set_password(&max), Ok(()));
        assert!(security.password_matches(&max));
        assert!(!security.password_matches(&max[..MAX_PASSWORD_LEN - 1]));
        let longer = [b'x'; MAX_PASSWORD_LEN + 1];
        assert_eq!(security.set_password(&longer), Err(PasswordTooLong));
        assert!(security.password_matches(&max));
    }

    #[test]
    fn empty_password_removes_it() {
        let mut security = Security::DEFAULT;
        security.set_password(b"pw").unwrap();
        security.set_password(b"").unwrap();
        assert!(!security.requires_auth());
        assert_eq!(security.password(), None);
        assert!(security.password_matches(b"anything"));
    }

    #[test]
    fn protected_mode_admits_only_the_trusted_network() {
        let lan = Ipv4Cidr::new(Ipv4Address::new(10, 0, 0, 0), 24);
        let mut security = Security::DEFAULT;
        assert!(!security.admits(IpAddress::v4(10, 0, 0, 2)));
        security = security.trusting(Some(lan));
        assert!(security.admits(IpAddress::v4(10, 0, 0, 2)));
        assert!(!security.admits(IpAddress::v4(10, 0, 1, 2)));
        security.protected_mode = false;
        assert!(security.admits(IpAddress::v4(10, 0, 1, 2)));
    }

    #[test]
    fn debug_never_shows_the_password() {
        let mut security = Security::DEFAULT;
        security.set_password(b"hunter2").unwrap();
        let shown = std::format!("{security:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
