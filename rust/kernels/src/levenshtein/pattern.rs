//! Pattern-match bit vectors for bit-parallel Levenshtein over arbitrary `u32` symbols.
//!
//! For a pattern `p`, `mask(c)` has bit `i` set iff `p[i] == c`. Symbols below 256 use a direct
//! table; others an open-addressing hash table. Both are reused across calls (no allocation once
//! warmed up) and cleared by undoing only the entries that were set.

const DIRECT: usize = 256;

/// Masks for one 64-symbol block per pattern block; `words` blocks per symbol.
pub struct PatternMasks {
    words: usize,
    direct: Vec<u64>,
    direct_used: Vec<u32>,
    keys: Vec<u32>,
    slots_used: Vec<bool>,
    hashed: Vec<u64>,
    hashed_used: Vec<usize>,
    capacity: usize,
}

impl Default for PatternMasks {
    fn default() -> Self {
        Self::new()
    }
}

impl PatternMasks {
    pub fn new() -> Self {
        PatternMasks {
            words: 0,
            direct: Vec::new(),
            direct_used: Vec::new(),
            keys: Vec::new(),
            slots_used: Vec::new(),
            hashed: Vec::new(),
            hashed_used: Vec::new(),
            capacity: 0,
        }
    }

    /// Number of 64-bit blocks of the current pattern.
    #[cfg(test)]
    pub fn words(&self) -> usize {
        self.words
    }

    fn clear(&mut self) {
        let w = self.words;
        for &c in &self.direct_used {
            let base = c as usize * w;
            self.direct[base..base + w].fill(0);
        }
        self.direct_used.clear();
        for &slot in &self.hashed_used {
            self.slots_used[slot] = false;
            self.hashed[slot * w..slot * w + w].fill(0);
        }
        self.hashed_used.clear();
    }

    /// Build the masks of `pattern` (any length).
    pub fn build(&mut self, pattern: &[u32]) {
        self.clear();
        let words = pattern.len().div_ceil(64).max(1);
        // Hash capacity: a power of two at least twice the pattern length (load ≤ 1/2).
        let capacity = (2 * pattern.len()).next_power_of_two().max(64);
        if words != self.words || capacity > self.capacity {
            self.words = words;
            self.capacity = capacity.max(self.capacity);
            self.direct = vec![0; DIRECT * words];
            self.keys = vec![0; self.capacity];
            self.slots_used = vec![false; self.capacity];
            self.hashed = vec![0; self.capacity * words];
        }
        for (i, &c) in pattern.iter().enumerate() {
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if (c as usize) < DIRECT {
                let base = c as usize * words;
                if self.direct[base..base + words].iter().all(|&m| m == 0) {
                    self.direct_used.push(c);
                }
                self.direct[base + word] |= bit;
            } else {
                let slot = self.slot_for_insert(c);
                self.hashed[slot * words + word] |= bit;
            }
        }
    }

    #[inline]
    fn hash(&self, c: u32) -> usize {
        (c.wrapping_mul(0x9E37_79B1) as usize) & (self.capacity - 1)
    }

    fn slot_for_insert(&mut self, c: u32) -> usize {
        let mut slot = self.hash(c);
        loop {
            if !self.slots_used[slot] {
                self.slots_used[slot] = true;
                self.keys[slot] = c;
                self.hashed_used.push(slot);
                return slot;
            }
            if self.keys[slot] == c {
                return slot;
            }
            slot = (slot + 1) & (self.capacity - 1);
        }
    }

    /// Mask of symbol `c` in block `word`.
    #[inline]
    pub fn mask(&self, c: u32, word: usize) -> u64 {
        if (c as usize) < DIRECT {
            return self.direct[c as usize * self.words + word];
        }
        if self.hashed_used.is_empty() {
            return 0;
        }
        let mut slot = self.hash(c);
        loop {
            if !self.slots_used[slot] {
                return 0;
            }
            if self.keys[slot] == c {
                return self.hashed[slot * self.words + word];
            }
            slot = (slot + 1) & (self.capacity - 1);
        }
    }

    /// All block masks of symbol `c` (slice of `words()` entries), or `None` if `c` is absent.
    #[inline]
    pub fn masks(&self, c: u32) -> Option<&[u64]> {
        let w = self.words;
        if (c as usize) < DIRECT {
            let base = c as usize * w;
            return Some(&self.direct[base..base + w]);
        }
        if self.hashed_used.is_empty() {
            return None;
        }
        let mut slot = self.hash(c);
        loop {
            if !self.slots_used[slot] {
                return None;
            }
            if self.keys[slot] == c {
                return Some(&self.hashed[slot * w..slot * w + w]);
            }
            slot = (slot + 1) & (self.capacity - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_mark_positions_of_each_symbol() {
        let mut pm = PatternMasks::new();
        let pattern: Vec<u32> = vec![97, 0x0568, 97, 0x1F600, 0x0568];
        pm.build(&pattern);
        assert_eq!(pm.mask(97, 0), 0b00101);
        assert_eq!(pm.mask(0x0568, 0), 0b10010);
        assert_eq!(pm.mask(0x1F600, 0), 0b01000);
        assert_eq!(pm.mask(98, 0), 0);
        assert_eq!(pm.mask(0x4E00, 0), 0);
        // Rebuilding clears the previous pattern.
        pm.build(&[0x4E00]);
        assert_eq!(pm.mask(97, 0), 0);
        assert_eq!(pm.mask(0x0568, 0), 0);
        assert_eq!(pm.mask(0x4E00, 0), 1);
    }

    #[test]
    fn long_patterns_use_several_blocks() {
        let mut pm = PatternMasks::new();
        let mut pattern = vec![1u32; 130];
        pattern[64] = 1000;
        pattern[129] = 1000;
        pm.build(&pattern);
        assert_eq!(pm.words(), 3);
        assert_eq!(pm.mask(1000, 0), 0);
        assert_eq!(pm.mask(1000, 1), 1);
        assert_eq!(pm.mask(1000, 2), 0b10);
        assert_eq!(pm.mask(1, 1), !1u64);
    }
}
