//! Levenshtein family: bit-parallel distance, the alignment breakdown (with rapidfuzz-compatible
//! tie-breaking, so counts equal jiwer's), word tokenisation for WER, and the schwa-forgiving
//! distance (free insertion/deletion of designated code points at join positions), the best
//! substring of a text for a whole pattern (approximate matching), and the longest common
//! subsequence.
//!
//! All sequences are `&[u32]`: Unicode code points, or interned token ids. Memory is linear in
//! the input (see `pattern` and `alignment`), and every buffer is grown fallibly: running out of
//! memory is an `Err(TryReserveError)`, never an abort.

mod alignment;
mod distance;
mod lcs;
mod pattern;
mod schwa;
mod substring;
mod words;

pub use alignment::{align, editops, AlignWorkspace, AlignmentCounts, EditOp, EditOpKind};
pub use distance::{distance, DistanceWorkspace};
pub use lcs::{lcs_length, LcsWorkspace};
pub use schwa::{schwa_distance, schwa_distance_rows, SchwaError, SchwaWorkspace};
pub use substring::{best_substring, SubstringWorkspace};
pub use words::{is_python_whitespace, split_words, word_alignment, WordAlignment, WordWorkspace};

/// Lengths of the common prefix and the common suffix of `a` and `b` (they never overlap).
pub fn common_affix(a: &[u32], b: &[u32]) -> (usize, usize) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    let suffix = a_rest
        .iter()
        .rev()
        .zip(b_rest.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (prefix, suffix)
}

#[cfg(test)]
pub(crate) mod reference {
    //! Plain O(n·m) dynamic programs used as in-crate oracles by the unit tests.

    /// The full distance matrix `D[i][j]` = distance(a[..i], b[..j]).
    pub fn matrix(a: &[u32], b: &[u32]) -> Vec<Vec<usize>> {
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let sub = d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = sub.min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            }
        }
        d
    }

    pub fn distance(a: &[u32], b: &[u32]) -> usize {
        matrix(a, b)[a.len()][b.len()]
    }

    /// Tiny deterministic PRNG (xorshift) so tests need no crates.
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        pub fn seq(&mut self, max_len: usize, alphabet: &[u32]) -> Vec<u32> {
            let len = self.below(max_len + 1);
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }
}
