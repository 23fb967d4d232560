//! Redis' glob patterns (`stringmatchlen` in `util.c`), for `KEYS`, `SCAN … MATCH` and
//! `CONFIG GET`: `*`, `?`, `[abc]`, `[^abc]`, `[a-z]` and `\` escapes.
//!
//! Each element but `*` matches exactly one byte, so a `*` is matched by backtracking to the
//! last star only (no recursion, no allocation): linear space, and at worst the product of the
//! lengths in time.

/// Whether `text` matches `pattern`; `nocase` compares ASCII letters without case.
pub(crate) fn matches(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    // As Redis: an empty text matches only the empty pattern.
    if text.is_empty() {
        return pattern.is_empty();
    }
    let (mut p, mut t) = (0, 0);
    // Where the last star was, and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
            continue;
        }
        if p < pattern.len() {
            if let Some(next) = one(pattern, p, text[t], nocase) {
                p = next;
                t += 1;
                continue;
            }
        }
        // No match here: let the last star take one more byte.
        match star {
            Some((star_p, star_t)) => {
                star = Some((star_p, star_t + 1));
                p = star_p + 1;
                t = star_t + 1;
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// Matches the element at `pattern[p]` (not `*`) against `byte`: the position after it if
/// it matches.
fn one(pattern: &[u8], p: usize, byte: u8, nocase: bool) -> Option<usize> {
    let same = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    match pattern[p] {
        b'?' => Some(p + 1),
        b'[' => class(pattern, p + 1, byte, nocase),
        b'\\' if p + 1 < pattern.len() => same(pattern[p + 1], byte).then_some(p + 2),
        literal => same(literal, byte).then_some(p + 1),
    }
}

/// A `[...]` class whose body starts at `pattern[p]`: the position after its `]` if `byte` is
/// in it. An unclosed class runs to the end of the pattern, as in Redis.
fn class(pattern: &[u8], mut p: usize, byte: u8, nocase: bool) -> Option<usize> {
    let fold = |b: u8| if nocase { b.to_ascii_lowercase() } else { b };
    let negated = pattern.get(p) == Some(&b'^');
    if negated {
        p += 1;
    }
    let mut found = false;
    loop {
        match pattern.get(p) {
            None => break,
            Some(b']') => {
                p += 1;
                break;
            }
            Some(b'\\') if p + 1 < pattern.len() => {
                found |= pattern[p + 1] == byte;
                p += 2;
            }
            Some(&start) if p + 2 < pattern.len() && pattern[p + 1] == b'-' => {
                let (mut low, mut high) = (fold(start), fold(pattern[p + 2]));
                if low > high {
                    core::mem::swap(&mut low, &mut high);
                }
                found |= (low..=high).contains(&fold(byte));
                p += 3;
            }
            Some(&c) => {
                found |= fold(c) == fold(byte);
                p += 1;
            }
        }
    }
    (found != negated).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_questions_and_literals() {
        assert!(matches(b"*", b"timeout", false));
        assert!(matches(b"*timeout*", b"read-timeout-ms", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h*llo", b"heeeello", false));
        assert!(matches(b"a*b*c", b"axxbyyc", false));
        assert!(!matches(b"a*b*c", b"axxbyy", false));
        assert!(!matches(b"save", b"timeout", false));
        assert!(matches(b"TIME?UT", b"timeout", true));
        assert!(!matches(b"TIME?UT", b"timeout", false));
    }

    #[test]
    fn classes_ranges_negation_and_escapes() {
        assert!(matches(b"h[ae]llo", b"hello", false));
        assert!(!matches(b"h[ae]llo", b"hillo", false));
        assert!(matches(b"h[^e]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"h[b-a]llo", b"hallo", false));
        assert!(matches(b"h\\*llo", b"h*llo", false));
        assert!(!matches(b"h\\*llo", b"hello", false));
        assert!(matches(b"[ab", b"a", false));
    }

    #[test]
    fn empty_text_matches_only_the_empty_pattern() {
        assert!(matches(b"", b"", false));
        assert!(!matches(b"*", b"", false));
        assert!(!matches(b"", b"a", false));
    }
}
