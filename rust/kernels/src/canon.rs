//! Canonicalisation of ASCII text by the built-in normaliser steps of `scorekit.canonicalize`.
//!
//! On ASCII input every built-in step stays within ASCII and reduces to a byte rule, so compiled
//! readers can canonicalise the (overwhelmingly ASCII) argument values of tool calls without a
//! round trip into Python; anything non-ASCII goes to the Python canonicaliser instead. The rules
//! are Python's: whitespace is what `str.split()` splits on, `casefold` lowers `A`–`Z` only, and
//! punctuation is Unicode category `P*`.

/// One normaliser step, as it acts on ASCII text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsciiStep {
    /// `nfc` / `nfkc`: ASCII is already normalised under both.
    Unchanged,
    /// `lower` (`str.casefold`): `A`–`Z` become `a`–`z`.
    Casefold,
    /// `strip`: leading and trailing whitespace removed.
    Strip,
    /// `collapse_whitespace`: `" ".join(s.split())`.
    CollapseWhitespace,
    /// `strip_punctuation`: characters of category `P*` removed.
    StripPunctuation,
}

impl AsciiStep {
    /// The step of a built-in normaliser name, or `None` for a name without an ASCII rule here.
    pub fn from_name(name: &str) -> Option<AsciiStep> {
        Some(match name {
            "nfc" | "nfkc" => AsciiStep::Unchanged,
            "lower" => AsciiStep::Casefold,
            "strip" => AsciiStep::Strip,
            "collapse_whitespace" => AsciiStep::CollapseWhitespace,
            "strip_punctuation" => AsciiStep::StripPunctuation,
            _ => return None,
        })
    }
}

/// Whether `b` is whitespace to Python's `str.isspace` (tab to carriage return, the four
/// information separators 0x1C–0x1F, and space).
#[inline]
pub fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | 0x1C..=0x1F | b' ')
}

/// Whether `b` is an ASCII character of Unicode general category `P*` (punctuation; the
/// symbols `$ + < = > ^ ` | ~` are category `S*` and kept).
#[inline]
pub fn is_ascii_punctuation(b: u8) -> bool {
    matches!(
        b,
        b'!'..=b'#' | b'%'..=b'*' | b','..=b'/' | b':' | b';' | b'?' | b'@' | b'['..=b']' | b'_' | b'{' | b'}'
    )
}

fn apply(step: AsciiStep, text: &mut Vec<u8>) {
    match step {
        AsciiStep::Unchanged => {}
        AsciiStep::Casefold => text.make_ascii_lowercase(),
        AsciiStep::Strip => {
            let end = text
                .iter()
                .rposition(|&b| !is_ascii_space(b))
                .map_or(0, |k| k + 1);
            text.truncate(end);
            let start = text.iter().position(|&b| !is_ascii_space(b)).unwrap_or(end);
            text.drain(..start);
        }
        AsciiStep::CollapseWhitespace => {
            let mut out = 0;
            let mut pending_space = false;
            for k in 0..text.len() {
                let b = text[k];
                if is_ascii_space(b) {
                    pending_space = out > 0;
                } else {
                    if pending_space {
                        text[out] = b' ';
                        out += 1;
                        pending_space = false;
                    }
                    text[out] = b;
                    out += 1;
                }
            }
            text.truncate(out);
        }
        AsciiStep::StripPunctuation => text.retain(|&b| !is_ascii_punctuation(b)),
    }
}

/// `input` (ASCII) through `steps`, left to right, into `out` (cleared first).
pub fn canonicalize_ascii(steps: &[AsciiStep], input: &[u8], out: &mut Vec<u8>) {
    debug_assert!(input.is_ascii());
    out.clear();
    out.extend_from_slice(input);
    for &step in steps {
        apply(step, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: &[AsciiStep], s: &str) -> String {
        let mut out = Vec::new();
        canonicalize_ascii(steps, s.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn default_pipeline() {
        let steps = [
            AsciiStep::Unchanged,
            AsciiStep::Casefold,
            AsciiStep::CollapseWhitespace,
        ];
        assert_eq!(run(&steps, "  Hello \t\n WORLD  "), "hello world");
        assert_eq!(run(&steps, "\x1c\x1fA\x0bB\x1d"), "a b");
        assert_eq!(run(&steps, ""), "");
        assert_eq!(run(&steps, " \t "), "");
    }

    #[test]
    fn strip_and_punctuation() {
        assert_eq!(run(&[AsciiStep::Strip], " \x0c a  b \r"), "a  b");
        assert_eq!(run(&[AsciiStep::Strip], "   "), "");
        assert_eq!(
            run(&[AsciiStep::StripPunctuation], "a,b.$c+d_e!f~"),
            "ab$c+def~"
        );
    }

    #[test]
    fn names() {
        assert_eq!(AsciiStep::from_name("nfkc"), Some(AsciiStep::Unchanged));
        assert_eq!(AsciiStep::from_name("lower"), Some(AsciiStep::Casefold));
        assert_eq!(AsciiStep::from_name("custom"), None);
    }
}
