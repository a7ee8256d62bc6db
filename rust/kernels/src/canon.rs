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

/// `strip` on text of any unit (bytes, code points): leading and trailing `is_space` units removed.
pub fn strip_by<T: Copy>(text: &mut Vec<T>, is_space: impl Fn(T) -> bool) {
    let end = text
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |k| k + 1);
    text.truncate(end);
    let start = text.iter().position(|&c| !is_space(c)).unwrap_or(end);
    text.drain(..start);
}

/// `collapse_whitespace` on text of any unit: every run of `is_space` units becomes one `space`,
/// and runs at either end go (`" ".join(s.split())`).
pub fn collapse_by<T: Copy>(text: &mut Vec<T>, space: T, is_space: impl Fn(T) -> bool) {
    let mut out = 0;
    let mut pending_space = false;
    for k in 0..text.len() {
        let c = text[k];
        if is_space(c) {
            pending_space = out > 0;
        } else {
            if pending_space {
                text[out] = space;
                out += 1;
                pending_space = false;
            }
            text[out] = c;
            out += 1;
        }
    }
    text.truncate(out);
}

fn apply(step: AsciiStep, text: &mut Vec<u8>) {
    match step {
        AsciiStep::Unchanged => {}
        AsciiStep::Casefold => text.make_ascii_lowercase(),
        AsciiStep::Strip => strip_by(text, is_ascii_space),
        AsciiStep::CollapseWhitespace => collapse_by(text, b' ', is_ascii_space),
        AsciiStep::StripPunctuation => text.retain(|&b| !is_ascii_punctuation(b)),
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` (ASCII bytes) that is `>= bound` (`bound` <= 0x80).
#[inline]
fn bytes_at_least(word: u64, bound: u8) -> u64 {
    // b + (0x80 - bound) reaches 0x80 exactly when b >= bound, and stays below 0x100 (no carry)
    word.wrapping_add((0x80 - bound as u64) * ONES) & HIGH_BITS
}

/// Eight bytes at a time: when `text` (ASCII) is already collapsed — whitespace only as single
/// spaces between other characters — every whitespace step leaves it unchanged, so its canonical
/// form is `text` itself, lowercased if `fold`. Writes that form to `out` (empty) and returns
/// `true`; returns `false` (with `out` unspecified) for any other text.
fn fold_if_collapsed(text: &[u8], fold: bool, out: &mut Vec<u8>) -> bool {
    if text.first() == Some(&b' ') || text.last() == Some(&b' ') {
        return false;
    }
    // whole words are rewritten in place, padded with 'a' (neither whitespace nor upper case)
    out.extend_from_slice(text);
    out.resize(text.len().next_multiple_of(8), b'a');
    let mut previous_ended_in_space = false;
    for chunk in out.chunks_exact_mut(8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(&*chunk).expect("eight bytes"));
        let below_space = !bytes_at_least(word, b' ') & HIGH_BITS;
        let spaces = !bytes_at_least(word ^ (b' ' as u64 * ONES), 1) & HIGH_BITS;
        if below_space != 0  // tab, newline, … (or another control character: the slow path decides)
            || spaces & (spaces << 8) != 0  // two spaces in a row
            || (previous_ended_in_space && spaces & 0x80 != 0)
        {
            return false;
        }
        previous_ended_in_space = spaces >> 63 != 0;
        if fold {
            let upper = bytes_at_least(word, b'A') & !bytes_at_least(word, b'Z' + 1);
            // 0x80 >> 2 is the case bit 0x20
            chunk.copy_from_slice(&(word | (upper >> 2)).to_le_bytes());
        }
    }
    out.truncate(text.len());
    true
}

/// `input` (ASCII) through `steps`, left to right, into `out` (cleared first).
pub fn canonicalize_ascii(steps: &[AsciiStep], input: &[u8], out: &mut Vec<u8>) {
    debug_assert!(input.is_ascii());
    out.clear();
    let whitespace_only = |s: &AsciiStep| {
        matches!(
            s,
            AsciiStep::Unchanged
                | AsciiStep::Casefold
                | AsciiStep::Strip
                | AsciiStep::CollapseWhitespace
        )
    };
    if steps.iter().all(whitespace_only) {
        let fold = steps.contains(&AsciiStep::Casefold);
        if fold_if_collapsed(input, fold, out) {
            return;
        }
        out.clear();
    }
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

    /// Every step applied in turn (the general path, without the eight-byte shortcut).
    fn step_by_step(steps: &[AsciiStep], s: &[u8]) -> Vec<u8> {
        let mut text = s.to_vec();
        for &step in steps {
            apply(step, &mut text);
        }
        text
    }

    #[test]
    fn shortcut_equals_the_steps_on_random_text() {
        use AsciiStep::*;
        let pipelines: [&[AsciiStep]; 6] = [
            &[Unchanged, Casefold, CollapseWhitespace],
            &[CollapseWhitespace, Casefold],
            &[Casefold],
            &[CollapseWhitespace],
            &[Strip],
            &[Unchanged, Strip, Casefold],
        ];
        // the second alphabet's text is often collapsed already (the shortcut's case)
        let alphabets: [&[u8]; 2] = [
            b"aZ AzM@[`{ \t\n\x0b\x1c\x1f\x01\x7f09!_",
            b"aZAzM@[`{09!_ ",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |bound: usize| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % bound
        };
        let mut out = Vec::new();
        let mut shortcuts = 0;
        for k in 0..20_000 {
            let alphabet = alphabets[k % 2];
            let len = next(30);
            let text: Vec<u8> = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            shortcuts += fold_if_collapsed(&text, true, &mut Vec::new()) as usize;
            for steps in pipelines {
                canonicalize_ascii(steps, &text, &mut out);
                assert_eq!(out, step_by_step(steps, &text), "{steps:?} on {text:?}");
            }
        }
        assert!(
            shortcuts > 2_000,
            "only {shortcuts} texts took the shortcut"
        );
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
