//! Requests as the simulated clients send them: multibulks. (Replies are decoded by
//! [`crate::reply`].)

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
