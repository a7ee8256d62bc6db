//! The call table of a batch, built call by call: the rows a reader adds (one per distinct call,
//! deduplicated by the ids of its tool, argument names and values), the arguments re-ordered by
//! the rank of their names for [`CallTable`], and the distances of the batch's trajectory pairs.
//!
//! A call is given as its *key* `[tool, name, value, name, value, …]` (interned ids, arguments
//! in the order read). Only the reader knows the Python objects behind the ids; everything done
//! with the ids lives here.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::{call_mass, CallKernel, CallScratch, CallTable};
use crate::bootstrap::Summation;

/// The rows of a call table in the order they were added: call `k` has tool `tools[k]`, mass
/// `mass[k]` and the arguments `offsets[k]..offsets[k+1]` of `names`/`values`/`weights`, in the
/// order of its key.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRows {
    pub tools: Vec<u32>,
    pub mass: Vec<f64>,
    pub offsets: Vec<i64>,
    pub names: Vec<u32>,
    pub values: Vec<u32>,
    pub weights: Vec<f64>,
}

impl Default for CallRows {
    fn default() -> Self {
        CallRows {
            tools: Vec::new(),
            mass: Vec::new(),
            offsets: vec![0],
            names: Vec::new(),
            values: Vec::new(),
            weights: Vec::new(),
        }
    }
}

/// The arguments of [`CallRows`] in the kernel's order: each call's arguments sorted by the rank
/// of their names, names replaced by their ranks (the `arg_*` arrays of [`CallTable`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SortedArguments {
    pub names: Vec<u32>,
    pub values: Vec<u32>,
    pub weights: Vec<f64>,
}

impl CallRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the table holds no row.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Whether row `row` is the call of `key`.
    #[inline]
    fn is_call(&self, row: u32, key: &[u32]) -> bool {
        let r = row as usize;
        let (lo, hi) = (self.offsets[r] as usize, self.offsets[r + 1] as usize);
        self.tools[r] == key[0]
            && 2 * (hi - lo) == key.len() - 1
            && key[1..]
                .chunks_exact(2)
                .zip(self.names[lo..hi].iter().zip(&self.values[lo..hi]))
                .all(|(k, (&name, &value))| k[0] == name && k[1] == value)
    }

    /// The arguments of every row sorted (stably) by `rank[name]`, names replaced by their ranks;
    /// `rank` holds one rank per name id.
    pub fn sorted_arguments(&self, rank: &[u32]) -> SortedArguments {
        let n_args = self.names.len();
        let mut sorted = SortedArguments {
            names: Vec::with_capacity(n_args),
            values: Vec::with_capacity(n_args),
            weights: Vec::with_capacity(n_args),
        };
        let mut order: Vec<usize> = Vec::new();
        for w in self.offsets.windows(2) {
            order.clear();
            order.extend(w[0] as usize..w[1] as usize);
            // calls have a few arguments: an insertion sort
            for k in 1..order.len() {
                let mut q = k;
                while q > 0
                    && rank[self.names[order[q - 1]] as usize] > rank[self.names[order[q]] as usize]
                {
                    order.swap(q - 1, q);
                    q -= 1;
                }
            }
            for &t in &order {
                sorted.names.push(rank[self.names[t] as usize]);
                sorted.values.push(self.values[t]);
                sorted.weights.push(self.weights[t]);
            }
        }
        sorted
    }

    /// The [`CallTable`] of these rows with their arguments `sorted` (from
    /// [`CallRows::sorted_arguments`]).
    pub fn table<'a>(&'a self, sorted: &'a SortedArguments) -> CallTable<'a> {
        CallTable {
            tools: &self.tools,
            mass: &self.mass,
            arg_offsets: &self.offsets,
            arg_names: &sorted.names,
            arg_values: &sorted.values,
            arg_weights: &sorted.weights,
        }
    }

    /// The distance of every pair `(a[k], b[k])` of trajectories of row ids, each side packed as
    /// `(ids, offsets)` with the same number of trajectories; the ids are rows of this table.
    pub fn pair_distances(
        &self,
        sorted: &SortedArguments,
        a: (&[u32], &[i64]),
        b: (&[u32], &[i64]),
        scratch: &mut CallScratch,
    ) -> Vec<f64> {
        let kernel = CallKernel::new(self.table(sorted));
        (0..a.1.len().saturating_sub(1))
            .map(|k| kernel.distance(trajectory(a, k), trajectory(b, k), scratch))
            .collect()
    }
}

/// Trajectory `k` of a packed side `(ids, offsets)`.
fn trajectory<'a>((ids, offsets): (&'a [u32], &[i64]), k: usize) -> &'a [u32] {
    &ids[offsets[k] as usize..offsets[k + 1] as usize]
}

/// A call key [`CallTableBuilder::find`] did not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewCall {
    hash: u64,
}

/// [`CallRows`] with a memo of the calls already added (by key), so that a call met again gets
/// its row back.
#[derive(Default)]
pub struct CallTableBuilder {
    rows: CallRows,
    /// `(hash of the key, row)` of every memoised row: keys are not stored, but compared with the
    /// rows' own tool, names and values.
    memo: HashTable<(u64, u32)>,
}

/// The hash of a call key (fixed seed: one table's memo only).
#[inline]
fn key_hash(key: &[u32]) -> u64 {
    FixedState::default().hash_one(key)
}

impl CallTableBuilder {
    /// The rows added so far.
    #[inline]
    pub fn rows(&self) -> &CallRows {
        &self.rows
    }

    /// Forget every row (keeping the allocations).
    pub fn clear(&mut self) {
        let rows = &mut self.rows;
        rows.tools.clear();
        rows.mass.clear();
        rows.offsets.clear();
        rows.offsets.push(0);
        rows.names.clear();
        rows.values.clear();
        rows.weights.clear();
        self.memo.clear();
    }

    /// The row of the memoised call `key`, or, when there is none, what
    /// [`CallTableBuilder::add`] needs to memoise it (the key's hash, computed once).
    #[inline]
    pub fn find(&self, key: &[u32]) -> Result<u32, NewCall> {
        let hash = key_hash(key);
        self.memo
            .find(hash, |&(h, row)| h == hash && self.rows.is_call(row, key))
            .map(|&(_, row)| row)
            .ok_or(NewCall { hash })
    }

    /// Add the call `key` (`[tool, name, value, …]`) as a new row and return it: its mass is
    /// `tool_weight` plus its argument weights summed as `summation` sums (`arg_weights`: one per
    /// argument, `None` for unit weights). With `memo` (what [`CallTableBuilder::find`] gave for
    /// `key`), `find` finds it from now on.
    pub fn add(
        &mut self,
        key: &[u32],
        tool_weight: f64,
        arg_weights: Option<&[f64]>,
        summation: Summation,
        memo: Option<NewCall>,
    ) -> u32 {
        let n_args = (key.len() - 1) / 2;
        let rows = &mut self.rows;
        let row = rows.tools.len() as u32;
        let first_weight = rows.weights.len();
        match arg_weights {
            None => rows.weights.extend(std::iter::repeat_n(1.0, n_args)),
            Some(weights) => {
                assert_eq!(weights.len(), n_args, "one weight per argument");
                rows.weights.extend_from_slice(weights);
            }
        }
        rows.mass.push(call_mass(
            tool_weight,
            &rows.weights[first_weight..],
            summation,
        ));
        rows.tools.push(key[0]);
        for pair in key[1..].chunks_exact(2) {
            rows.names.push(pair[0]);
            rows.values.push(pair[1]);
        }
        rows.offsets.push(rows.names.len() as i64);
        if let Some(NewCall { hash }) = memo {
            debug_assert_eq!(hash, key_hash(key));
            self.memo.insert_unique(hash, (hash, row), |&(h, _)| h);
        }
        row
    }
}

/// The rank of every text in byte order (for UTF-8, code-point order: Python's `str` order);
/// equal texts get consecutive ranks in index order.
pub fn ranks_by_bytes(texts: &[&[u8]]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by(|&x, &y| texts[x].cmp(texts[y]));
    ranks_of_order(&order)
}

/// The rank of every index given the indices in ascending order (`order` is a permutation of
/// `0..order.len()`).
pub fn ranks_of_order(order: &[usize]) -> Vec<u32> {
    let mut rank = vec![0u32; order.len()];
    for (r, &k) in order.iter().enumerate() {
        rank[k] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::align::{distance, CallCost, Scratch};

    const SEQ: Summation = Summation::Sequential;

    /// `key` added, memoised.
    fn memoised(builder: &mut CallTableBuilder, key: &[u32], weights: Option<&[f64]>) -> u32 {
        let new = builder.find(key).unwrap_err();
        builder.add(key, 1.0, weights, SEQ, Some(new))
    }

    #[test]
    fn a_call_met_again_gets_its_row() {
        let mut builder = CallTableBuilder::default();
        let a = memoised(&mut builder, &[0, 1, 2, 3, 4], None);
        let b = memoised(&mut builder, &[0, 1, 2], None);
        let c = builder.add(&[5, 1, 2, 3, 4], 1.0, None, SEQ, None);
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(builder.find(&[0, 1, 2, 3, 4]), Ok(0));
        assert_eq!(builder.find(&[0, 1, 2]), Ok(1));
        assert!(builder.find(&[0, 3, 4, 1, 2]).is_err()); // another order is another key
        assert!(builder.find(&[0, 1, 2, 3, 5]).is_err());
        assert!(builder.find(&[5, 1, 2, 3, 4]).is_err()); // not memoised
        assert!(builder.find(&[0]).is_err());
        let rows = builder.rows();
        assert_eq!(rows.tools, [0, 0, 5]);
        assert_eq!(rows.offsets, [0, 2, 3, 5]);
        assert_eq!(rows.names, [1, 3, 1, 1, 3]);
        assert_eq!(rows.values, [2, 4, 2, 2, 4]);
        assert_eq!(rows.mass, [3.0, 2.0, 3.0]);
        builder.clear();
        assert!(builder.find(&[0, 1, 2]).is_err());
        assert_eq!(*builder.rows(), CallRows::default());
    }

    #[test]
    fn masses_sum_the_weights_as_python_does() {
        let mut builder = CallTableBuilder::default();
        let weights = [1e16, 1.0, -1e16];
        builder.add(&[0, 1, 1, 2, 2, 3, 3], 0.5, Some(&weights), SEQ, None);
        builder.add(
            &[0, 1, 1, 2, 2, 3, 3],
            0.5,
            Some(&weights),
            Summation::Compensated,
            None,
        );
        // ((0 + 1e16) + 1) + -1e16 == 0 left to right; 1.0 compensated (Python >= 3.12)
        assert_eq!(builder.rows().mass, [0.5, 1.5]);
        assert_eq!(builder.rows().weights, [1e16, 1.0, -1e16, 1e16, 1.0, -1e16]);
    }

    #[test]
    fn arguments_sort_by_the_rank_of_their_names() {
        let mut builder = CallTableBuilder::default();
        memoised(
            &mut builder,
            &[0, 2, 20, 0, 10, 1, 11],
            Some(&[0.2, 0.0, 0.1]),
        );
        memoised(&mut builder, &[0, 1, 12], None);
        // name 2 ranks first, then 0, then 1
        let sorted = builder.rows().sorted_arguments(&[1, 2, 0]);
        assert_eq!(sorted.names, [0, 1, 2, 2]);
        assert_eq!(sorted.values, [20, 10, 11, 12]);
        assert_eq!(sorted.weights, [0.2, 0.0, 0.1, 1.0]);
        let rows = builder.rows();
        rows.table(&sorted).validate().expect("a valid table");
    }

    #[test]
    fn ranks() {
        assert_eq!(ranks_by_bytes(&[b"b", b"a", b"ab", b""]), [3, 1, 2, 0]);
        // code-point order of UTF-8: "z" < "é" < "😀"
        assert_eq!(
            ranks_by_bytes(&["😀".as_bytes(), "é".as_bytes(), b"z"]),
            [2, 1, 0]
        );
        assert_eq!(ranks_of_order(&[2, 0, 1]), [1, 2, 0]);
        assert!(ranks_by_bytes(&[]).is_empty());
    }

    #[test]
    fn pair_distances_are_the_kernels() {
        let mut builder = CallTableBuilder::default();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound) as u32
        };
        let mut sides: [(Vec<u32>, Vec<i64>); 2] = [(Vec::new(), vec![0]), (Vec::new(), vec![0])];
        for _ in 0..40 {
            for (ids, offsets) in sides.iter_mut() {
                for _ in 0..next(6) {
                    let mut key = vec![next(3)];
                    for name in 0..next(3) {
                        key.extend([name, next(3)]);
                    }
                    let weights: Vec<f64> =
                        (0..key.len() / 2).map(|_| 0.5 * next(4) as f64).collect();
                    let row = match builder.find(&key) {
                        Ok(row) => row,
                        Err(new) => builder.add(&key, 1.0, Some(&weights), SEQ, Some(new)),
                    };
                    ids.push(row);
                }
                offsets.push(ids.len() as i64);
            }
        }
        let rows = builder.rows();
        let sorted = rows.sorted_arguments(&[0, 1, 2]);
        let [(a, ao), (b, bo)] = &sides;
        let got = rows.pair_distances(&sorted, (a, ao), (b, bo), &mut CallScratch::default());
        assert_eq!(got.len(), 40);
        for k in 0..40 {
            let (x, y) = (
                &a[ao[k] as usize..ao[k + 1] as usize],
                &b[bo[k] as usize..bo[k + 1] as usize],
            );
            let want = distance(
                &CallCost::new(rows.table(&sorted), x, y),
                &mut Scratch::default(),
            );
            assert_eq!(got[k], want);
            let same = rows.pair_distances(
                &sorted,
                (x, &[0, x.len() as i64]),
                (x, &[0, x.len() as i64]),
                &mut CallScratch::default(),
            );
            assert_eq!(same, [0.0]);
        }
    }
}
