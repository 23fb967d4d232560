//! Replies as clients decode them: one decoder ([`Value::parse`]) for every test, RESP2 and
//! RESP3, over bytes (a status line may carry a raw request byte, as from Redis), and
//! [`Reply`], the RESP2 view the simulated-network tests compare against.

/// A RESP2 or RESP3 value, for the checks that are not byte for byte.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `+…`
    Simple(Vec<u8>),
    /// `-…`
    Error(Vec<u8>),
    /// `:…`
    Int(i64),
    /// `$…` (`None`: `$-1`)
    Bulk(Option<Vec<u8>>),
    /// `*…` (`None`: `*-1`), and RESP3's sets (`~`) and pushes (`>`)
    Array(Option<Vec<Value>>),
    /// RESP3 `%` maps, as key-value pairs
    Map(Vec<(Value, Value)>),
    /// RESP3's other one-line kinds (`_`, `#`, `,`, `(`), by their line
    Line(u8, Vec<u8>),
    /// RESP3 `=` verbatim strings and `!` blob errors
    Blob(u8, Vec<u8>),
}

impl Value {
    /// Decodes one value from the front of `bytes`: the value and its length, `None` if
    /// incomplete or not RESP ([`parse`](Self::parse) tells the two apart).
    pub fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        Self::parse(bytes).ok().flatten()
    }

    /// Decodes one value from the front of `bytes`: `Ok(None)` if it is incomplete so far,
    /// `Err` with what is wrong if it cannot be RESP whatever follows.
    ///
    /// # Errors
    ///
    /// A type byte RESP does not have, a length or count that is not a number, a bulk string
    /// not followed by CRLF.
    pub fn parse(bytes: &[u8]) -> Result<Option<(Self, usize)>, String> {
        let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let (&kind, line) = bytes[..end]
            .split_first()
            .ok_or("an empty line where a value starts")?;
        let after = end + 2;
        let number = || {
            std::str::from_utf8(line)
                .ok()
                .and_then(|text| text.parse::<i64>().ok())
                .ok_or_else(|| format!("not a number: {:?}", line.escape_ascii().to_string()))
        };
        let items = |count: usize, at: &mut usize| -> Result<Option<Vec<Self>>, String> {
            let mut items = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                let Some((item, used)) = Self::parse(&bytes[*at..])? else {
                    return Ok(None);
                };
                items.push(item);
                *at += used;
            }
            Ok(Some(items))
        };
        Ok(Some(match kind {
            b'+' => (Self::Simple(line.to_vec()), after),
            b'-' => (Self::Error(line.to_vec()), after),
            b':' => (Self::Int(number()?), after),
            b'_' | b'#' | b',' | b'(' => (Self::Line(kind, line.to_vec()), after),
            b'$' | b'=' | b'!' => {
                let len = number()?;
                if len < 0 {
                    return Ok(Some((Self::Bulk(None), after)));
                }
                let stop = after + len as usize;
                if bytes.len() < stop + 2 {
                    return Ok(None);
                }
                if &bytes[stop..stop + 2] != b"\r\n" {
                    return Err("a bulk string not followed by CRLF".into());
                }
                let data = bytes[after..stop].to_vec();
                let value = if kind == b'$' {
                    Self::Bulk(Some(data))
                } else {
                    Self::Blob(kind, data)
                };
                (value, stop + 2)
            }
            b'*' | b'~' | b'>' => {
                let count = number()?;
                if count < 0 {
                    return Ok(Some((Self::Array(None), after)));
                }
                let mut at = after;
                let Some(items) = items(count as usize, &mut at)? else {
                    return Ok(None);
                };
                (Self::Array(Some(items)), at)
            }
            b'%' | b'|' => {
                let count = number()?;
                let mut at = after;
                let Some(flat) = items(count.max(0) as usize * 2, &mut at)? else {
                    return Ok(None);
                };
                let mut pairs = Vec::new();
                let mut flat = flat.into_iter();
                while let (Some(k), Some(v)) = (flat.next(), flat.next()) {
                    pairs.push((k, v));
                }
                (Self::Map(pairs), at)
            }
            other => return Err(format!("not a RESP type: {:?}", char::from(other))),
        }))
    }

    /// The items of an array (or, flattened, a map).
    pub fn items(&self) -> Option<Vec<Self>> {
        match self {
            Self::Array(Some(items)) => Some(items.clone()),
            Self::Map(pairs) => Some(
                pairs
                    .iter()
                    .flat_map(|(k, v)| [k.clone(), v.clone()])
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The bytes of a bulk or simple string.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bulk(Some(b)) | Self::Simple(b) => Some(b),
            _ => None,
        }
    }
}

/// Splits `bytes` into whole replies; `None` if the last is incomplete.
pub fn split_replies(mut bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut replies = Vec::new();
    while !bytes.is_empty() {
        let (_, used) = Value::decode(bytes)?;
        replies.push(bytes[..used].to_vec());
        bytes = &bytes[used..];
    }
    Some(replies)
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

    /// Decodes one RESP2 reply from the front of `bytes` ([`Value::parse`]): the reply and its
    /// length, `None` if incomplete. A status or error line is text, but may carry a byte of
    /// the request (`expected '$', got '\x80'`, as from Redis): such bytes are shown as U+FFFD.
    ///
    /// # Panics
    ///
    /// On bytes that are not RESP2.
    pub fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        let (value, used) = Value::parse(bytes)
            .unwrap_or_else(|error| panic!("not RESP: {error}: {}", bytes.escape_ascii()))?;
        Some((Self::from_resp2(value), used))
    }

    /// The RESP2 reply `value` is.
    ///
    /// # Panics
    ///
    /// On a RESP3 kind.
    pub fn from_resp2(value: Value) -> Self {
        let text = |line: Vec<u8>| String::from_utf8_lossy(&line).into_owned();
        match value {
            Value::Simple(line) => Self::Simple(text(line)),
            Value::Error(line) => Self::Error(text(line)),
            Value::Int(n) => Self::Int(n),
            Value::Bulk(Some(bytes)) => Self::Bulk(bytes),
            Value::Bulk(None) => Self::Nil,
            Value::Array(Some(items)) => {
                Self::Array(items.into_iter().map(Self::from_resp2).collect())
            }
            Value::Array(None) => Self::NilArray,
            other => panic!("not a RESP2 reply: {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_frames_resp2_and_resp3() {
        let bytes = b"*2\r\n$1\r\na\r\n%1\r\n+k\r\n:1\r\n_\r\n";
        let replies = split_replies(bytes).unwrap();
        assert_eq!(replies.len(), 2);
        assert_eq!(
            Value::decode(&replies[0]).unwrap().0,
            Value::Array(Some(vec![
                Value::Bulk(Some(b"a".to_vec())),
                Value::Map(vec![(Value::Simple(b"k".to_vec()), Value::Int(1))])
            ]))
        );
        assert!(split_replies(b"$3\r\nab").is_none());
    }

    #[test]
    fn parse_tells_incomplete_from_invalid() {
        assert_eq!(Value::parse(b"$3\r\nab"), Ok(None));
        assert_eq!(Value::parse(b"*2\r\n:1\r\n"), Ok(None));
        assert!(Value::parse(b"$x\r\n").is_err());
        assert!(Value::parse(b"$2\r\nabcd").is_err());
        assert!(Value::parse(b"?\r\n").is_err());
    }

    #[test]
    fn a_raw_byte_in_an_error_line_is_kept_and_shown_as_replacement() {
        let bytes = b"-ERR Protocol error: expected '$', got '\x80'\r\n";
        let (value, used) = Value::decode(bytes).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(value, Value::Error(bytes[1..bytes.len() - 2].to_vec()));
        let (reply, _) = Reply::decode(bytes).unwrap();
        assert_eq!(
            reply,
            Reply::error("ERR Protocol error: expected '$', got '\u{fffd}'")
        );
    }
}
