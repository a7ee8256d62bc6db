//! Pattern-match bit vectors for bit-parallel Levenshtein over arbitrary `u32` symbols.
//!
//! For a pattern `p` cut into 64-symbol blocks, the mask of symbol `c` in block `b` has bit `i`
//! set iff `p[64 b + i] == c`. Memory is linear in the pattern whatever its alphabet:
//!
//! * the symbols actually present get dense ids (a direct table below 256, an open-addressing
//!   hash table sized by the pattern above);
//! * the masks are a dense `ids × blocks` table while that table stays small (at most
//!   [`DENSE_BYTES_PER_SYMBOL`] bytes per pattern symbol, or [`DENSE_MIN_BYTES`]), otherwise a
//!   sparse table: per id, only the blocks where it occurs (at most one entry per pattern symbol).
//!
//! Buffers are reused across calls and grown fallibly: an allocation failure is an error, not an
//! abort.

use std::collections::TryReserveError;

const DIRECT: usize = 256;
const ABSENT: u32 = u32::MAX;
/// A dense mask table may take this many bytes per pattern symbol (512 distinct symbols)…
pub const DENSE_BYTES_PER_SYMBOL: usize = 64;
/// …or this many bytes in all, whichever is larger.
pub const DENSE_MIN_BYTES: usize = 8 << 20;

/// Clear `v` and make it `len` copies of `value`, failing instead of aborting when out of memory.
pub(crate) fn fill<T: Clone>(v: &mut Vec<T>, len: usize, value: T) -> Result<(), TryReserveError> {
    v.clear();
    v.try_reserve(len)?;
    v.resize(len, value);
    Ok(())
}

/// The masks of one symbol, as [`PatternMasks::row`] returns them.
pub enum Row<'a> {
    /// The symbol does not occur in the pattern.
    Absent,
    /// One mask per block.
    Dense(&'a [u64]),
    /// The blocks where the symbol occurs (increasing) and its masks there.
    Sparse(&'a [u32], &'a [u64]),
}

/// Slots of the [`ShortMasks`] table of symbols from 256 up: four times the most symbols it holds,
/// so that few lookups probe past a slot held by another symbol.
const SHORT_SLOTS: usize = 256;

/// Masks of a pattern of at most 64 symbols, the common case of short texts, kept without dense
/// ids in one fixed table (no allocation, no bounds checks on the masked indices): entries
/// `0..256` are the symbols below 256 themselves, entries `256..` a small open-addressing table of
/// `(symbol, mask)` slots; an empty slot has mask 0 and the key [`EMPTY_KEY`].
///
/// Finding a symbol's entry takes one well-predicted branch whatever the symbol: the keys of the
/// direct part are the symbols themselves, and one comparison (see [`ShortMasks::entry`]) tells
/// a slot held by another symbol (probe on; rare) from a slot of the symbol or an empty one.
/// (Testing "empty" and "same symbol" apart is a branch that hits and misses alternate on, which
/// cost more than the rest of the lookup.) Built and cleared in one pass over the pattern each;
/// [`ShortMasks::get`] is the same mask as [`PatternMasks::single`] gives.
pub struct ShortMasks {
    masks: [u64; DIRECT + SHORT_SLOTS],
    keys: [u64; DIRECT + SHORT_SLOTS],
    /// Entries set for the current pattern, to clear them before the next one.
    used: [u16; 64],
    used_len: usize,
}

/// The key of an empty slot: no `u32` symbol.
const EMPTY_KEY: u64 = u64::MAX;

impl Default for ShortMasks {
    fn default() -> Self {
        let mut keys = [EMPTY_KEY; DIRECT + SHORT_SLOTS];
        for (c, key) in keys.iter_mut().enumerate().take(DIRECT) {
            *key = c as u64;
        }
        ShortMasks {
            masks: [0; DIRECT + SHORT_SLOTS],
            keys,
            used: [0; 64],
            used_len: 0,
        }
    }
}

impl ShortMasks {
    /// The entry of `c`: where it is, or the empty slot where it would go (there is always one:
    /// at most 64 of the slots are in use).
    #[inline(always)]
    fn entry(&self, c: u32) -> usize {
        let home = (c.wrapping_mul(0x9E37_79B1) >> (32 - SHORT_SLOTS.trailing_zeros())) as usize;
        let mut entry = if (c as usize) < DIRECT {
            c as usize
        } else {
            DIRECT + home
        };
        // `key ^ c` is 0 for `c`'s own entry, at least 2^32 for an empty slot (`EMPTY_KEY`), and
        // in between for a slot held by another symbol: the only case that probes on
        while (self.keys[entry] ^ c as u64).wrapping_sub(1) < u64::from(u32::MAX) {
            entry = DIRECT + (entry - DIRECT + 1) % SHORT_SLOTS;
        }
        entry
    }

    /// Build the masks of `pattern` (its first 64 symbols), clearing the previous pattern's.
    pub fn build(&mut self, pattern: &[u32]) {
        debug_assert!(pattern.len() <= 64);
        for &entry in &self.used[..self.used_len] {
            let entry = entry as usize % (DIRECT + SHORT_SLOTS);
            self.masks[entry] = 0;
            self.keys[entry] = if entry < DIRECT {
                entry as u64
            } else {
                EMPTY_KEY
            };
        }
        let mut used = 0;
        for (i, &c) in pattern.iter().take(64).enumerate() {
            let entry = self.entry(c);
            self.keys[entry] = c as u64;
            // every entry is listed the first time it is set (the list ends where it stops growing)
            self.used[used % 64] = entry as u16;
            used += usize::from(self.masks[entry] == 0);
            self.masks[entry] |= 1u64 << i;
        }
        self.used_len = used;
    }

    /// Mask of symbol `c` (0 when `c` is not in the pattern: its entry is an empty slot).
    #[inline(always)]
    pub fn get(&self, c: u32) -> u64 {
        self.masks[self.entry(c)]
    }
}

/// Masks of the current pattern; see the module docs.
#[derive(Default)]
pub struct PatternMasks {
    words: usize,
    /// Dense id of each symbol below 256 (`ABSENT` if not in the pattern).
    direct: Vec<u32>,
    /// One-block patterns: the mask of each symbol below 256, read without the id indirection
    /// (the hot path of short strings).
    direct_mask: Vec<u64>,
    /// Open-addressing table of the other symbols: key and id per slot (`ABSENT` id = empty).
    keys: Vec<u32>,
    key_ids: Vec<u32>,
    /// Occupied direct symbols and hash slots, to clear them before the next pattern.
    direct_used: Vec<u32>,
    slots_used: Vec<usize>,
    /// Dense id of every pattern position.
    pattern_ids: Vec<u32>,
    /// Built by [`PatternMasks::build_ids`]: [`PatternMasks::row`] then takes dense ids.
    by_id: bool,
    sparse: bool,
    /// Dense layout: `ids × words` masks.
    dense: Vec<u64>,
    /// Sparse layout: entries `start[id]..start[id + 1]` of `blocks`/`bits` belong to `id`.
    start: Vec<u32>,
    blocks: Vec<u32>,
    bits: Vec<u64>,
    /// Tests force the sparse layout on patterns small enough for a plain DP oracle.
    #[cfg(test)]
    pub(crate) force_sparse: bool,
}

impl PatternMasks {
    /// Number of 64-bit blocks of the current pattern.
    #[cfg(test)]
    pub fn words(&self) -> usize {
        self.words
    }

    /// True when the current pattern's masks use the sparse layout.
    #[cfg(test)]
    pub fn is_sparse(&self) -> bool {
        self.sparse
    }

    fn clear(&mut self) {
        for &c in &self.direct_used {
            self.direct[c as usize] = ABSENT;
            self.direct_mask[c as usize] = 0;
        }
        self.direct_used.clear();
        for &slot in &self.slots_used {
            self.key_ids[slot] = ABSENT;
        }
        self.slots_used.clear();
    }

    #[inline]
    fn hash(c: u32, capacity: usize) -> usize {
        (c.wrapping_mul(0x9E37_79B1) as usize) & (capacity - 1)
    }

    /// Dense id of `c`, or `None` if it is not in the pattern.
    #[inline]
    fn id(&self, c: u32) -> Option<usize> {
        let id = if (c as usize) < DIRECT {
            self.direct[c as usize]
        } else {
            self.hashed_id(c)
        };
        (id != ABSENT).then_some(id as usize)
    }

    /// Dense id (or `ABSENT`) of a symbol above the direct table, from the hash table; kept out of
    /// line so that [`PatternMasks::row`] stays small enough to inline into the kernels.
    #[inline(never)]
    fn hashed_id(&self, c: u32) -> u32 {
        if self.slots_used.is_empty() {
            return ABSENT;
        }
        let capacity = self.keys.len();
        let mut slot = Self::hash(c, capacity);
        loop {
            let id = self.key_ids[slot];
            if id == ABSENT || self.keys[slot] == c {
                return id;
            }
            slot = (slot + 1) & (capacity - 1);
        }
    }

    /// Give every symbol of `pattern` its dense id (in order of first occurrence); returns how
    /// many distinct symbols there are.
    fn assign_ids(&mut self, pattern: &[u32]) -> Result<usize, TryReserveError> {
        if self.direct.is_empty() {
            fill(&mut self.direct, DIRECT, ABSENT)?;
            fill(&mut self.direct_mask, DIRECT, 0)?;
        }
        // Hash capacity: a power of two at least twice the pattern length (load ≤ 1/2).
        let capacity = (2 * pattern.len()).next_power_of_two().max(16);
        if capacity > self.keys.len() {
            fill(&mut self.keys, capacity, 0)?;
            fill(&mut self.key_ids, capacity, ABSENT)?;
        }
        let capacity = self.keys.len();
        self.pattern_ids.clear();
        self.pattern_ids.try_reserve(pattern.len())?;
        self.direct_used.try_reserve(pattern.len().min(DIRECT))?;
        self.slots_used.try_reserve(pattern.len())?;
        let mut count = 0u32;
        for &c in pattern {
            let id = if (c as usize) < DIRECT {
                let id = &mut self.direct[c as usize];
                if *id == ABSENT {
                    *id = count;
                    count += 1;
                    self.direct_used.push(c);
                }
                *id
            } else {
                let mut slot = Self::hash(c, capacity);
                loop {
                    let id = self.key_ids[slot];
                    if id == ABSENT {
                        self.keys[slot] = c;
                        self.key_ids[slot] = count;
                        count += 1;
                        self.slots_used.push(slot);
                        break count - 1;
                    }
                    if self.keys[slot] == c {
                        break id;
                    }
                    slot = (slot + 1) & (capacity - 1);
                }
            };
            self.pattern_ids.push(id);
        }
        Ok(count as usize)
    }

    /// Build the masks of `pattern` (any length).
    pub fn build(&mut self, pattern: &[u32]) -> Result<(), TryReserveError> {
        self.clear();
        self.by_id = false;
        let ids = self.assign_ids(pattern)?;
        let pattern_ids = std::mem::take(&mut self.pattern_ids);
        let filled = self.fill_masks(&pattern_ids, ids);
        self.pattern_ids = pattern_ids;
        filled?;
        if self.words == 1 {
            for &c in &self.direct_used {
                self.direct_mask[c as usize] = self.dense[self.direct[c as usize] as usize];
            }
        }
        Ok(())
    }

    /// Encode `pattern` and `text` as dense ids of `pattern`'s symbols (in order of first
    /// occurrence; a text symbol absent from the pattern becomes `u32::MAX`) into `pattern_out`
    /// and `text_out`; returns the number of ids. Every comparison of a pattern symbol with a
    /// text symbol gives the same answer on the ids. The masks of the current pattern are lost.
    pub fn encode(
        &mut self,
        pattern: &[u32],
        text: &[u32],
        pattern_out: &mut Vec<u32>,
        text_out: &mut Vec<u32>,
    ) -> Result<usize, TryReserveError> {
        self.clear();
        self.words = 0;
        let ids = self.assign_ids(pattern)?;
        fill(pattern_out, 0, 0)?;
        pattern_out.try_reserve(pattern.len())?;
        pattern_out.extend_from_slice(&self.pattern_ids);
        fill(text_out, 0, 0)?;
        text_out.try_reserve(text.len())?;
        text_out.extend(
            text.iter()
                .map(|&c| self.id(c).map_or(ABSENT, |id| id as u32)),
        );
        Ok(ids)
    }

    /// Build the masks of a pattern given as ids below `ids` (from [`PatternMasks::encode`], or a
    /// part of such a pattern); [`PatternMasks::row`] then takes ids (`u32::MAX`: absent).
    pub fn build_ids(&mut self, pattern: &[u32], ids: usize) -> Result<(), TryReserveError> {
        self.by_id = true;
        self.fill_masks(pattern, ids)
    }

    /// The dense or sparse mask table of the pattern whose dense ids (below `ids`) are
    /// `pattern_ids`.
    fn fill_masks(&mut self, pattern_ids: &[u32], ids: usize) -> Result<(), TryReserveError> {
        let len = pattern_ids.len();
        let words = len.div_ceil(64).max(1);
        self.words = words;
        let dense_budget = (DENSE_BYTES_PER_SYMBOL * len).max(DENSE_MIN_BYTES) / 8;
        // One-block patterns are always dense (at most 64 ids): `single` reads them.
        self.sparse = words > 1 && ids.saturating_mul(words) > dense_budget;
        #[cfg(test)]
        {
            self.sparse |= words > 1 && self.force_sparse;
        }
        if !self.sparse {
            fill(&mut self.dense, ids * words, 0)?;
            for (i, &id) in pattern_ids.iter().enumerate() {
                self.dense[id as usize * words + i / 64] |= 1u64 << (i % 64);
            }
            return Ok(());
        }
        // Sparse: count the blocks of each id, then fill them in pattern order (so each id's
        // blocks come out increasing). `start[id + 1]` first holds the count, then the fill cursor.
        fill(&mut self.start, ids + 1, 0)?;
        let mut last_block = Vec::new();
        fill(&mut last_block, ids, u32::MAX)?;
        for (i, &id) in pattern_ids.iter().enumerate() {
            let block = (i / 64) as u32;
            if last_block[id as usize] != block {
                last_block[id as usize] = block;
                self.start[id as usize + 1] += 1;
            }
        }
        for id in 0..ids {
            self.start[id + 1] += self.start[id];
        }
        let entries = self.start[ids] as usize;
        fill(&mut self.blocks, entries, 0)?;
        fill(&mut self.bits, entries, 0)?;
        // `last_block[id]` now counts the entries of `id` filled so far.
        last_block.fill(0);
        for (i, &id) in pattern_ids.iter().enumerate() {
            let (block, id) = ((i / 64) as u32, id as usize);
            let base = self.start[id] as usize;
            let filled = last_block[id] as usize;
            if filled == 0 || self.blocks[base + filled - 1] != block {
                self.blocks[base + filled] = block;
                last_block[id] += 1;
            }
            let k = base + last_block[id] as usize - 1;
            self.bits[k] |= 1u64 << (i % 64);
        }
        Ok(())
    }

    /// The masks of symbol `c`.
    #[inline(always)]
    pub fn row(&self, c: u32) -> Row<'_> {
        let id = if self.by_id {
            if c == ABSENT {
                return Row::Absent;
            }
            c as usize
        } else {
            let Some(id) = self.id(c) else {
                return Row::Absent;
            };
            id
        };
        if self.sparse {
            let (s, e) = (self.start[id] as usize, self.start[id + 1] as usize);
            Row::Sparse(&self.blocks[s..e], &self.bits[s..e])
        } else {
            let w = self.words;
            Row::Dense(&self.dense[id * w..id * w + w])
        }
    }

    /// Mask of symbol `c` for a pattern of at most 64 symbols.
    #[inline]
    pub fn single(&self, c: u32) -> u64 {
        debug_assert_eq!(self.words, 1);
        if self.by_id {
            return if c == ABSENT {
                0
            } else {
                self.dense[c as usize]
            };
        }
        if (c as usize) < DIRECT {
            return self.direct_mask[c as usize];
        }
        self.id(c).map_or(0, |id| self.dense[id])
    }

    /// Mask of symbol `c` in block `word`.
    #[cfg(test)]
    pub fn mask(&self, c: u32, word: usize) -> u64 {
        match self.row(c) {
            Row::Absent => 0,
            Row::Dense(masks) => masks[word],
            Row::Sparse(blocks, bits) => {
                blocks.binary_search(&(word as u32)).map_or(0, |k| bits[k])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reference::Rng;
    use super::*;

    #[test]
    fn short_masks_equal_the_general_masks() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let (mut short, mut general) = (ShortMasks::default(), PatternMasks::default());
        // Few or many distinct symbols, below and above the direct table, and symbols whose home
        // slots collide (multiples of 128 apart share the low bits the hash mixes up).
        let alphabets: [Vec<u32>; 3] = [
            (0..6).map(|k| 0x4E00 + k).chain([97, 98]).collect(),
            (0..300).map(|k| 200 + 7 * k).collect(),
            (0..64)
                .map(|k| 0x1000 + (k << 7))
                .chain([u32::MAX, 0])
                .collect(),
        ];
        for round in 0..3_000 {
            let alphabet = &alphabets[round % 3];
            let pattern = rng.seq(64, alphabet);
            short.build(&pattern);
            general.build(&pattern).unwrap();
            for &c in alphabet.iter().chain(&[1, 0x10FFFF]) {
                assert_eq!(short.get(c), general.single(c), "{c:x} in {pattern:x?}");
            }
        }
    }

    #[test]
    fn masks_mark_positions_of_each_symbol() {
        let mut pm = PatternMasks::default();
        let pattern: Vec<u32> = vec![97, 0x0568, 97, 0x1F600, 0x0568];
        pm.build(&pattern).unwrap();
        assert_eq!(pm.mask(97, 0), 0b00101);
        assert_eq!(pm.mask(0x0568, 0), 0b10010);
        assert_eq!(pm.mask(0x1F600, 0), 0b01000);
        assert_eq!(pm.mask(98, 0), 0);
        assert_eq!(pm.mask(0x4E00, 0), 0);
        for c in [97, 0x0568, 0x1F600, 98, 0x4E00] {
            assert_eq!(pm.single(c), pm.mask(c, 0));
        }
        // Rebuilding clears the previous pattern.
        pm.build(&[0x4E00]).unwrap();
        assert_eq!(pm.mask(97, 0), 0);
        assert_eq!(pm.mask(0x0568, 0), 0);
        assert_eq!(pm.mask(0x4E00, 0), 1);
        assert_eq!((pm.single(97), pm.single(0x4E00)), (0, 1));
    }

    #[test]
    fn long_patterns_use_several_blocks() {
        let mut pm = PatternMasks::default();
        let mut pattern = vec![1u32; 130];
        pattern[64] = 1000;
        pattern[129] = 1000;
        pm.build(&pattern).unwrap();
        assert_eq!(pm.words(), 3);
        assert_eq!(pm.mask(1000, 0), 0);
        assert_eq!(pm.mask(1000, 1), 1);
        assert_eq!(pm.mask(1000, 2), 0b10);
        assert_eq!(pm.mask(1, 1), !1u64);
    }

    /// Masks straight from the definition.
    fn naive_mask(pattern: &[u32], c: u32, word: usize) -> u64 {
        (0..64)
            .filter(|&bit| pattern.get(64 * word + bit) == Some(&c))
            .fold(0, |m, bit| m | 1 << bit)
    }

    #[test]
    fn dense_and_sparse_layouts_equal_the_definition() {
        let mut rng = Rng(42);
        let mut pm = PatternMasks::default();
        // Small alphabets stay dense; a pattern of ~all-distinct symbols is large enough to
        // exceed the dense budget and goes sparse.
        let wide: Vec<u32> = (0..200_000u32).map(|k| 300 + k).collect();
        for (len, alphabet, sparse) in [
            (500, (0..40).collect::<Vec<u32>>(), false),
            (3000, vec![7, 0x568, 0x1F600], false),
            (200_000, wide.clone(), true),
        ] {
            let mut pattern: Vec<u32> = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            if sparse {
                pattern = wide.clone();
                for _ in 0..1000 {
                    let (i, j) = (rng.below(len), rng.below(len));
                    pattern[i] = pattern[j];
                }
            }
            pm.build(&pattern).unwrap();
            assert_eq!(pm.is_sparse(), sparse);
            for _ in 0..2000 {
                let c = if rng.below(10) == 0 {
                    5_000_000
                } else {
                    pattern[rng.below(len)]
                };
                let word = rng.below(pm.words());
                assert_eq!(pm.mask(c, word), naive_mask(&pattern, c, word));
            }
        }
        // After a sparse pattern, a short one is dense and clean.
        pm.build(&[300, 301, 300]).unwrap();
        assert!(!pm.is_sparse());
        assert_eq!(
            (pm.mask(300, 0), pm.mask(301, 0), pm.mask(302, 0)),
            (5, 2, 0)
        );
    }
}
