//! Best substring: the substring of a text closest to a whole pattern in unit-cost edits
//! (approximate matching with both text ends free), the alignment step of the flexible character
//! accuracy (`scorekit.ocr.fca`).
//!
//! `D[i][j]` is the least cost of aligning `pattern[..i]` with a substring of `text` ending at `j`,
//! `D[0][j] = 0`. Each cell also carries the start of its substring, and cells compare as
//! `(cost, start)`: the least cost and, among equal costs, the earliest start (the longest
//! substring). The answer is the last `j` of least `D[m][j]`, with that cell's start. A plain
//! `O(m·n)` dynamic program over one row of the text: patterns are text lines.

use std::collections::TryReserveError;

/// Bits of a cell below its cost: they hold the start of its substring.
const SHIFT: u32 = 32;
const UNIT: u64 = 1 << SHIFT;

/// Reusable row buffer (one per thread in batch use).
#[derive(Default)]
pub struct SubstringWorkspace {
    /// Row cells as `cost << 32 | start`, so that comparing keys compares `(cost, start)`.
    row: Vec<u64>,
}

impl SubstringWorkspace {
    pub fn new() -> Self {
        Self::default()
    }
}

/// `(d, start, end)`: the least `distance(pattern, text[start..end])`, its last `end`, and the
/// earliest `start` reaching it for that `end`. An empty pattern gives `(0, n, n)`.
///
/// # Panics
/// On a text of 2^32 symbols or more (a start must fit in the low half of a cell).
pub fn best_substring(
    ws: &mut SubstringWorkspace,
    pattern: &[u32],
    text: &[u32],
) -> Result<(usize, usize, usize), TryReserveError> {
    assert!((text.len() as u64) < UNIT, "text too long for best_substring");
    let row = &mut ws.row;
    row.clear();
    row.try_reserve(text.len() + 1)?;
    row.extend(0..=text.len() as u64); // cost 0, the substring starts at its own column
    for (i, &p) in pattern.iter().enumerate() {
        // `diag` is row i-1 at column j-1; column 0 of row i costs i + 1 and starts at 0.
        let mut diag = row[0];
        let mut left = (i as u64 + 1) * UNIT;
        row[0] = left;
        for (cell, &t) in row[1..].iter_mut().zip(text) {
            let up = *cell;
            let here = (diag + (u64::from(p != t) << SHIFT))
                .min(up + UNIT)
                .min(left + UNIT);
            diag = up;
            *cell = here;
            left = here;
        }
    }
    let mut end = 0;
    for j in 1..row.len() {
        if row[j] >> SHIFT <= row[end] >> SHIFT {
            end = j;
        }
    }
    let cell = row[end];
    Ok(((cell >> SHIFT) as usize, (cell & (UNIT - 1)) as usize, end))
}

#[cfg(test)]
mod tests {
    use super::super::reference::{self, Rng};
    use super::*;

    /// Every substring tried: least distance, then the last end, then the longest substring.
    fn brute(pattern: &[u32], text: &[u32]) -> (usize, usize, usize) {
        let mut best = (usize::MAX, 0, 0);
        for end in 0..=text.len() {
            for start in (0..=end).rev() {
                let d = reference::distance(pattern, &text[start..end]);
                if d < best.0
                    || (d == best.0 && end > best.2)
                    || (d == best.0 && end == best.2 && start < best.1)
                {
                    best = (d, start, end);
                }
            }
        }
        best
    }

    #[test]
    fn known_values() {
        let mut ws = SubstringWorkspace::new();
        let s = |t: &str| t.chars().map(|c| c as u32).collect::<Vec<_>>();
        assert_eq!(
            best_substring(&mut ws, &s("abc"), &s("xxabcyy")).unwrap(),
            (0, 2, 5)
        );
        assert_eq!(
            best_substring(&mut ws, &s("abc"), &s("abx")).unwrap(),
            (1, 0, 3)
        );
        assert_eq!(
            best_substring(&mut ws, &s("abc"), &s("")).unwrap(),
            (3, 0, 0)
        );
        assert_eq!(
            best_substring(&mut ws, &s(""), &s("ab")).unwrap(),
            (0, 2, 2)
        );
    }

    #[test]
    fn matches_brute_force() {
        let mut rng = Rng(0x5eed_f00d);
        let mut ws = SubstringWorkspace::new();
        for _ in 0..3000 {
            let pattern = rng.seq(5, &[1, 2, 3]);
            let text = rng.seq(8, &[1, 2, 3]);
            assert_eq!(
                best_substring(&mut ws, &pattern, &text).unwrap(),
                brute(&pattern, &text),
                "{pattern:?} in {text:?}"
            );
        }
    }
}
