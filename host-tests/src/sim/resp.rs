//! RESP for the simulated clients: requests encoded as multibulks, and the server's RESP2
//! replies decoded.

/// A RESP multibulk request.
pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// [`encode`] for text arguments.
pub fn encode_str(args: &[&str]) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    encode(&args)
}

/// A RESP2 reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Array(Vec<Reply>),
    NilArray,
}

impl Reply {
    pub fn simple(text: &str) -> Self {
        Self::Simple(text.into())
    }

    pub fn ok() -> Self {
        Self::simple("OK")
    }

    pub fn error(text: &str) -> Self {
        Self::Error(text.into())
    }

    pub fn bulk(value: &str) -> Self {
        Self::Bulk(value.as_bytes().to_vec())
    }

    /// The error text, if this is an error.
    pub fn error_text(&self) -> Option<&str> {
        match self {
            Self::Error(text) => Some(text),
            _ => None,
        }
    }

    /// The bulk value as text, panicking otherwise.
    pub fn text(&self) -> String {
        match self {
            Self::Bulk(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            other => panic!("not a bulk reply: {other:?}"),
        }
    }

    /// Decodes one reply from the front of `bytes`: the reply and its length, `None` if
    /// incomplete. Panics on bytes that are not RESP2. A status or error line is text, but may
    /// carry a byte of the request (`expected '$', got '\x80'`, as from Redis): such bytes are
    /// shown as U+FFFD.
    pub fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        let line_end = bytes.windows(2).position(|w| w == b"\r\n")?;
        let line = String::from_utf8_lossy(&bytes[1..line_end]);
        let after = line_end + 2;
        let number = || line.parse::<i64>().expect("reply length");
        match bytes[0] {
            b'+' => Some((Self::Simple(line.into_owned()), after)),
            b'-' => Some((Self::Error(line.into_owned()), after)),
            b':' => Some((Self::Int(number()), after)),
            b'$' => {
                let len = number();
                if len < 0 {
                    return Some((Self::Nil, after));
                }
                let end = after + len as usize;
                if bytes.len() < end + 2 {
                    return None;
                }
                assert_eq!(&bytes[end..end + 2], b"\r\n", "bulk reply terminator");
                Some((Self::Bulk(bytes[after..end].to_vec()), end + 2))
            }
            b'*' => {
                let count = number();
                if count < 0 {
                    return Some((Self::NilArray, after));
                }
                let mut at = after;
                let mut items = Vec::new();
                for _ in 0..count {
                    let (item, used) = Self::decode(&bytes[at..])?;
                    items.push(item);
                    at += used;
                }
                Some((Self::Array(items), at))
            }
            other => panic!("not a RESP2 reply: starts with {:?}", other as char),
        }
    }
}
