//! Word-level alignment for WER: split code-point text into words exactly like Python's
//! `str.split()` (runs of Unicode whitespace as Python defines it), intern the words of one pair
//! to small ids, and align the id sequences with the character-level rule.

use std::collections::TryReserveError;

use super::alignment::{align, AlignWorkspace, AlignmentCounts};
use super::pattern::fill;

/// True for the code points Python's `str.isspace()` accepts (Python 3.11, Unicode 14.0).
#[inline]
pub fn is_python_whitespace(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0D
            | 0x1C..=0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0x2000..=0x200A
    )
}

/// Append the `(start, end)` spans of the words of `text` to `out` (an error only when out of
/// memory).
pub fn split_words(text: &[u32], out: &mut Vec<(usize, usize)>) -> Result<(), TryReserveError> {
    // A text of `len` symbols holds at most `(len + 1) / 2` words.
    out.try_reserve(text.len().div_ceil(2))?;
    let mut start = None;
    for (k, &c) in text.iter().enumerate() {
        match (is_python_whitespace(c), start) {
            (true, Some(s)) => {
                out.push((s, k));
                start = None;
            }
            (false, None) => start = Some(k),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    Ok(())
}

/// Word counts and alignment counts of one pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WordAlignment {
    pub counts: AlignmentCounts,
    pub ref_words: usize,
    pub hyp_words: usize,
}

/// Reusable buffers for [`word_alignment`].
#[derive(Default)]
pub struct WordWorkspace {
    align: AlignWorkspace,
    ref_spans: Vec<(usize, usize)>,
    hyp_spans: Vec<(usize, usize)>,
    ref_ids: Vec<u32>,
    hyp_ids: Vec<u32>,
    /// Open-addressing table of word ids (`u32::MAX` = empty).
    table: Vec<u32>,
    /// Representative word of each id: (is_hyp side, span).
    words: Vec<(bool, (usize, usize))>,
}

impl WordWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

fn hash_word(word: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in word {
        h = (h ^ c as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ (h >> 29)
}

/// Word-level alignment of `reference` and `hypothesis` (code points); an error only when out of
/// memory.
pub fn word_alignment(
    ws: &mut WordWorkspace,
    reference: &[u32],
    hypothesis: &[u32],
) -> Result<WordAlignment, TryReserveError> {
    ws.ref_spans.clear();
    ws.hyp_spans.clear();
    split_words(reference, &mut ws.ref_spans)?;
    split_words(hypothesis, &mut ws.hyp_spans)?;
    let total = ws.ref_spans.len() + ws.hyp_spans.len();
    let capacity = (2 * total).next_power_of_two().max(16);
    fill(&mut ws.table, capacity, u32::MAX)?;
    ws.words.clear();
    ws.words.try_reserve(total)?;
    ws.ref_ids.clear();
    ws.ref_ids.try_reserve(ws.ref_spans.len())?;
    ws.hyp_ids.clear();
    ws.hyp_ids.try_reserve(ws.hyp_spans.len())?;
    for side in [false, true] {
        let (text, spans) = if side {
            (hypothesis, &ws.hyp_spans)
        } else {
            (reference, &ws.ref_spans)
        };
        for &(s, e) in spans.iter() {
            let word = &text[s..e];
            let mut slot = hash_word(word) as usize & (capacity - 1);
            let id = loop {
                let id = ws.table[slot];
                if id == u32::MAX {
                    let new_id = ws.words.len() as u32;
                    ws.table[slot] = new_id;
                    ws.words.push((side, (s, e)));
                    break new_id;
                }
                let (id_side, (ws_, we)) = ws.words[id as usize];
                let known = if id_side {
                    &hypothesis[ws_..we]
                } else {
                    &reference[ws_..we]
                };
                if known == word {
                    break id;
                }
                slot = (slot + 1) & (capacity - 1);
            };
            if side {
                ws.hyp_ids.push(id);
            } else {
                ws.ref_ids.push(id);
            }
        }
    }
    let counts = align(&mut ws.align, &ws.ref_ids, &ws.hyp_ids)?;
    Ok(WordAlignment {
        counts,
        ref_words: ws.ref_ids.len(),
        hyp_words: ws.hyp_ids.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Vec<u32> {
        t.chars().map(|c| c as u32).collect()
    }

    #[test]
    fn splits_like_python() {
        let mut spans = Vec::new();
        split_words(&s("  a\u{a0}bb\tc\u{3000}\u{200b}d  "), &mut spans).unwrap();
        assert_eq!(spans, vec![(2, 3), (4, 6), (7, 8), (9, 11)]);
    }

    #[test]
    fn word_counts() {
        let mut ws = WordWorkspace::new();
        let r = word_alignment(&mut ws, &s("hello world"), &s("hello wrld")).unwrap();
        assert_eq!(
            r.counts,
            AlignmentCounts {
                hits: 1,
                substitutions: 1,
                deletions: 0,
                insertions: 0
            }
        );
        assert_eq!((r.ref_words, r.hyp_words), (2, 2));
        // Morris et al. vectors (jiwer's tests): WER 3, 2/3, 2.
        assert_eq!(
            word_alignment(&mut ws, &s("X"), &s("X X Y Y"))
                .unwrap()
                .counts
                .edits(),
            3
        );
        assert_eq!(
            word_alignment(&mut ws, &s("X Y X"), &s("X Z"))
                .unwrap()
                .counts
                .edits(),
            2
        );
        assert_eq!(
            word_alignment(&mut ws, &s("X"), &s("Y Z"))
                .unwrap()
                .counts
                .edits(),
            2
        );
        let empty = word_alignment(&mut ws, &s("   "), &s("")).unwrap();
        assert_eq!(
            (empty.ref_words, empty.hyp_words, empty.counts.edits()),
            (0, 0, 0)
        );
    }
}
