//! Pairs of texts scored straight from Arrow-style UTF-8 columns: one byte buffer plus offsets
//! per side (`i32` for Arrow `string`/`binary`, `i64` for `large_string`/`large_binary`), an
//! optional validity bitmap, decoded item by item into code points, canonicalised by the
//! built-in normaliser steps of `scorekit.canonicalize`, and aligned with the Levenshtein
//! kernels (character or word level).
//!
//! The normaliser rules are Python's, so the counts equal those of scoring the same texts as
//! Python strings: `nfc`/`nfkc` come from the `unicode-normalization` crate, `lower` is full case
//! folding (`str.casefold`) read from a table the caller derives from its own Python, whitespace
//! is what `str.split()` splits on, punctuation is a caller-given set (category `P*`). The crate
//! may know a newer Unicode than the caller's Python: an item holding a code point the caller
//! marks as unassigned is not normalised here but reported as [`PairOutcome::NeedsCaller`], so the
//! caller scores it its own way. Nothing here knows Python.

use std::collections::TryReserveError;
use std::fmt;

use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::canon::{collapse_by, strip_by};
use crate::levenshtein::{
    align, is_python_whitespace, word_alignment, AlignWorkspace, WordWorkspace,
};

/// One built-in normaliser step (the names of `scorekit.canonicalize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `nfc`: canonical composition.
    Nfc,
    /// `nfkc`: compatibility composition.
    Nfkc,
    /// `lower`: full case folding (`str.casefold`), from the caller's fold table.
    Casefold,
    /// `strip`: leading and trailing whitespace removed.
    Strip,
    /// `collapse_whitespace`: `" ".join(s.split())`.
    CollapseWhitespace,
    /// `strip_punctuation`: members of the caller's punctuation set removed.
    StripPunctuation,
}

impl Step {
    /// The step of a built-in normaliser name, `None` for any other name.
    pub fn from_name(name: &str) -> Option<Step> {
        Some(match name {
            "nfc" => Step::Nfc,
            "nfkc" => Step::Nfkc,
            "lower" => Step::Casefold,
            "strip" => Step::Strip,
            "collapse_whitespace" => Step::CollapseWhitespace,
            "strip_punctuation" => Step::StripPunctuation,
            _ => return None,
        })
    }
}

/// A set of code points as a little-endian bitmap (bit `c % 8` of byte `c / 8`); code points past
/// its end are not members.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodePointSet<'a> {
    pub bits: &'a [u8],
}

impl CodePointSet<'_> {
    #[inline]
    pub fn contains(&self, c: u32) -> bool {
        self.bits
            .get((c / 8) as usize)
            .is_some_and(|b| b >> (c % 8) & 1 == 1)
    }
}

/// Full case folding of the code points that change: `keys` (sorted, distinct) fold to
/// `values[offsets[k]..offsets[k + 1]]`; every other code point folds to itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldTable<'a> {
    pub keys: &'a [u32],
    pub offsets: &'a [i64],
    pub values: &'a [u32],
}

/// A malformed table or column (the message says which and why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

impl FoldTable<'_> {
    /// Check the table: sorted distinct keys, offsets from 0 to `values.len()`, non-decreasing,
    /// and every key and value a Unicode scalar value.
    pub fn check(&self) -> Result<(), LayoutError> {
        let bad = |what: &str| Err(LayoutError(format!("fold table: {what}")));
        if self.offsets.len() != self.keys.len() + 1 {
            return bad("needs one more offset than keys");
        }
        if self.offsets[0] != 0 || *self.offsets.last().unwrap_or(&0) != self.values.len() as i64 {
            return bad("offsets must run from 0 to the number of values");
        }
        if self.offsets.windows(2).any(|w| w[1] < w[0]) {
            return bad("offsets must be non-decreasing");
        }
        if self.keys.windows(2).any(|w| w[1] <= w[0]) {
            return bad("keys must be sorted and distinct");
        }
        if self
            .keys
            .iter()
            .chain(self.values)
            .any(|&c| char::from_u32(c).is_none())
        {
            return bad("keys and values must be Unicode scalar values");
        }
        Ok(())
    }

    /// What `c` folds to, or `None` when it folds to itself.
    #[inline]
    fn get(&self, c: u32) -> Option<&[u32]> {
        let k = self.keys.binary_search(&c).ok()?;
        Some(&self.values[self.offsets[k] as usize..self.offsets[k + 1] as usize])
    }
}

/// The caller's Unicode data: case folding, punctuation, and the code points its own Unicode
/// version leaves unassigned (items holding one are not normalised here).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnicodeTables<'a> {
    pub fold: FoldTable<'a>,
    pub punctuation: CodePointSet<'a>,
    pub unassigned: CodePointSet<'a>,
}

/// An Arrow offset type (`i32` or `i64`).
pub trait Offset: Copy + Send + Sync {
    fn index(self) -> Option<usize>;
}

impl Offset for i32 {
    #[inline]
    fn index(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

impl Offset for i64 {
    #[inline]
    fn index(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

/// One column of texts in Arrow's layout: item `k` is `data[offsets[k]..offsets[k + 1]]`, null
/// when bit `validity_offset + k` of `validity` is 0 (a null item is scored as empty text).
#[derive(Clone, Copy, Debug)]
pub struct TextColumn<'a, O> {
    data: &'a [u8],
    offsets: &'a [O],
    validity: Option<(&'a [u8], usize)>,
}

impl<'a, O: Offset> TextColumn<'a, O> {
    /// A checked column: at least one offset, every offset within `data` and non-decreasing (an
    /// Arrow array's first offset need not be 0), and a validity bitmap long enough. `name` names
    /// the column in the error.
    pub fn new(
        name: &str,
        data: &'a [u8],
        offsets: &'a [O],
        validity: Option<(&'a [u8], usize)>,
    ) -> Result<Self, LayoutError> {
        let bad = |what: String| Err(LayoutError(format!("column {name}: {what}")));
        if offsets.is_empty() {
            return bad("needs at least one offset (n + 1 offsets for n items)".into());
        }
        let mut previous = 0;
        for (k, &o) in offsets.iter().enumerate() {
            match o.index() {
                Some(at) if at <= data.len() && (k == 0 || at >= previous) => previous = at,
                _ => return bad(format!("offset {k} is out of order or outside the data")),
            }
        }
        let n = offsets.len() - 1;
        if let Some((bits, start)) = validity {
            if start.checked_add(n).is_none_or(|end| end > bits.len() * 8) {
                return bad(format!("validity bitmap too short for {n} items"));
            }
        }
        Ok(TextColumn {
            data,
            offsets,
            validity,
        })
    }

    /// Items in the column.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of all items.
    pub fn bytes(&self) -> usize {
        self.offsets[self.len()].index().unwrap_or(0) - self.offsets[0].index().unwrap_or(0)
    }

    /// Whether every item is known to be UTF-8: the bytes from the first item's start to the last
    /// item's end are UTF-8 (one vectorised pass) and every item starts on a character boundary,
    /// so each item is a UTF-8 piece of them. `false` only means "check item by item" (a null
    /// item's bytes, for one, may be anything).
    pub fn is_utf8(&self) -> bool {
        let lo = self.offsets[0].index().unwrap_or(0);
        let hi = self.offsets[self.len()].index().unwrap_or(0);
        simdutf8::basic::from_utf8(&self.data[lo..hi]).is_ok()
            && self.offsets.iter().all(|o| {
                let at = o.index().unwrap_or(0);
                at == hi || !is_continuation(self.data[at])
            })
    }

    /// The bytes of item `k` (empty when it is null).
    #[inline]
    pub fn item(&self, k: usize) -> &'a [u8] {
        if let Some((bits, start)) = self.validity {
            let bit = start + k;
            if bits[bit / 8] >> (bit % 8) & 1 == 0 {
                return &[];
            }
        }
        // checked in `new`
        let (lo, hi) = (self.offsets[k].index(), self.offsets[k + 1].index());
        &self.data[lo.unwrap_or(0)..hi.unwrap_or(0)]
    }
}

/// What scoring a level of text means: characters (CER) or words (WER).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Characters,
    Words,
}

/// Counts of one pair: reference length (characters or words) and the alignment's
/// substitutions, deletions and insertions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairCounts {
    pub ref_len: usize,
    pub substitutions: usize,
    pub deletions: usize,
    pub insertions: usize,
}

/// Which side of a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Pred,
    Gold,
}

/// Which sides of the pairs are known to be UTF-8 already (a whole column checked at once by
/// [`TextColumn::is_utf8`]): they are decoded without validation; other sides are validated item
/// by item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KnownUtf8 {
    pub pred: bool,
    pub gold: bool,
}

/// The result of one pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairOutcome {
    Counts(PairCounts),
    /// A side holds a code point the caller's Unicode leaves unassigned while a normalisation
    /// form is asked for: the caller scores this pair.
    NeedsCaller,
    /// A side is not valid UTF-8.
    InvalidUtf8(Side),
}

/// The result of normalising one text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextOutcome {
    /// The code points are in the workspace's buffer.
    Done,
    NeedsCaller,
    InvalidUtf8,
}

/// Reusable buffers (one per thread in batch use).
#[derive(Default)]
pub struct PairWorkspace {
    pred: Vec<u32>,
    gold: Vec<u32>,
    scratch: Vec<u32>,
    align: AlignWorkspace,
    words: WordWorkspace,
}

impl PairWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// The code points of the last text normalised by [`normalize_text`].
    pub fn text(&self) -> &[u32] {
        &self.pred
    }
}

/// Write the code points of `bytes` to `out` (cleared first); `false` when `bytes` is not UTF-8.
/// One pass validates and decodes, with the rules of `std::str::from_utf8` (Unicode's table of
/// well-formed byte sequences: no overlong forms, surrogates or values past U+10FFFF).
fn decode(bytes: &[u8], out: &mut Vec<u32>) -> Result<bool, TryReserveError> {
    out.clear();
    out.try_reserve(bytes.len())?;
    if bytes.is_ascii() {
        out.extend(bytes.iter().map(|&b| b as u32));
        return Ok(true);
    }
    out.resize(bytes.len(), 0);
    let (mut k, mut written) = (0, 0);
    while k < bytes.len() {
        let b = bytes[k];
        let (width, mut c) = match b {
            0x00..=0x7F => (1, b as u32),
            0xC2..=0xDF => (2, b as u32 & 0x1F),
            0xE0..=0xEF => (3, b as u32 & 0x0F),
            0xF0..=0xF4 => (4, b as u32 & 0x07),
            _ => return Ok(false),
        };
        if width > 1 && !bytes.get(k + 1).is_some_and(|&b1| second_byte_fits(b, b1)) {
            return Ok(false);
        }
        for j in 1..width {
            match bytes.get(k + j) {
                Some(&x) if x & 0xC0 == 0x80 => c = c << 6 | (x as u32 & 0x3F),
                _ => return Ok(false),
            }
        }
        out[written] = c;
        written += 1;
        k += width;
    }
    out.truncate(written);
    Ok(true)
}

/// Write the code points of `bytes`, known to be UTF-8, to `out` (cleared first), without a
/// branch per byte: eight ASCII bytes at a time are widened as they are; elsewhere each byte adds
/// its payload bits (`0x7F >> leading ones`) to the current code point, and a byte that starts a
/// sequence starts the next one. Bytes that are not UTF-8 give unspecified code points, never a
/// panic.
fn decode_utf8(bytes: &[u8], out: &mut Vec<u32>) -> Result<(), TryReserveError> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    out.clear();
    out.try_reserve(bytes.len())?;
    out.resize(bytes.len(), 0);
    // `n` code points started so far (at most the bytes read, so the writes stay in `out`), the
    // last of them being `c`
    let (mut n, mut c) = (0usize, 0u32);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        if word(chunk, u64::from_le_bytes) & HIGH == 0 {
            // eight code points of their own; the one before them (if any) is complete
            for (slot, &b) in out[n..n + 8].iter_mut().zip(chunk) {
                *slot = b as u32;
            }
            n += 8;
            c = chunk[7] as u32;
        } else {
            for &b in chunk {
                decode_byte(out, &mut n, &mut c, b);
            }
        }
    }
    for &b in chunks.remainder() {
        decode_byte(out, &mut n, &mut c, b);
    }
    out.truncate(n);
    Ok(())
}

/// One byte of [`decode_utf8`]'s branch-free loop: add `b` to the code point `c` (the `n`-th) or
/// start the next one with it.
#[inline(always)]
fn decode_byte(out: &mut [u32], n: &mut usize, c: &mut u32, b: u8) {
    let (payload, starts) = BYTE_ROLES[b as usize];
    let keep = (starts as u32).wrapping_sub(1); // all ones when `b` continues `c`
    *c = (*c << 6 & keep) | (b & payload) as u32;
    *n += starts as usize;
    out[n.saturating_sub(1)] = *c;
}

/// Per byte value: the mask of its payload bits (`0x7F >> leading ones`) and whether it starts a
/// sequence (is not `10xxxxxx`), looked up instead of computed in [`decode_byte`].
static BYTE_ROLES: [(u8, bool); 256] = {
    let mut table = [(0u8, false); 256];
    let mut b = 0;
    while b < 256 {
        let ones = (b as u8).leading_ones();
        table[b] = ((0x7Fu32 >> ones) as u8, b & 0xC0 != 0x80);
        b += 1;
    }
    table
};

/// [`decode`] `bytes` into `out`, or decode them without validation when `known` to be UTF-8.
fn decode_side(bytes: &[u8], known: bool, out: &mut Vec<u32>) -> Result<bool, TryReserveError> {
    if known {
        decode_utf8(bytes, out)?;
        return Ok(true);
    }
    decode(bytes, out)
}

/// Whether `b` continues a UTF-8 sequence (`10xxxxxx`).
#[inline]
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Code points of `bytes`, known to be UTF-8: the bytes that do not continue a sequence, counted
/// 32 at a time with AVX2 (from 32 bytes on), else eight at a time (the last few in a word of
/// their own: a zero byte continues nothing).
fn count_chars(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 32 && crate::simd::avx2() {
        // SAFETY: the processor supports AVX2 (simd::avx2 checked it just above).
        return bytes.len() - unsafe { continuations_avx2(bytes) };
    }
    bytes.len() - continuations_swar(bytes)
}

/// The bytes of `bytes` that continue a UTF-8 sequence, eight at a time.
fn continuations_swar(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // bit 7 of each byte set where the byte is 10xxxxxx; the multiply adds the bytes' flags
    let continuations = |w: u64| {
        let flags = (w & !(w << 1) & HIGH) >> 7;
        (flags.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize
    };
    let total: usize = bytes
        .chunks_exact(8)
        .map(|chunk| continuations(word(chunk, u64::from_le_bytes)))
        .sum();
    total + continuations(last_bytes_le(bytes, bytes.len() % 8))
}

/// The bytes of `bytes` (at least 32) that continue a UTF-8 sequence (`-128..=-65` as `i8`), 32
/// at a time; the last few are the top lanes of one more load of the last 32 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn continuations_avx2(bytes: &[u8]) -> usize {
    use std::arch::x86_64::*;
    let below = _mm256_set1_epi8(-64);
    let count = |block: &[u8]| {
        // SAFETY: every block handed here holds 32 bytes.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr() as *const __m256i) };
        _mm256_movemask_epi8(_mm256_cmpgt_epi8(below, v)) as u32
    };
    let chunks = bytes.chunks_exact(32);
    let rest = chunks.remainder().len();
    let mut total: usize = chunks.map(|block| count(block).count_ones() as usize).sum();
    if rest > 0 {
        total += (count(&bytes[bytes.len() - 32..]) >> (32 - rest)).count_ones() as usize;
    }
    total
}

/// Bytes at the start of `a` and `b` that are equal.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a8, b8) = (a[..n].chunks_exact(8), b[..n].chunks_exact(8));
    for (k, (x, y)) in a8.zip(b8).enumerate() {
        let diff = word(x, u64::from_le_bytes) ^ word(y, u64::from_le_bytes);
        if diff != 0 {
            return 8 * k + (diff.trailing_zeros() / 8) as usize;
        }
    }
    // the last few bytes, zero-padded alike on both sides
    let diff = last_bytes_le(&a[..n], n % 8) ^ last_bytes_le(&b[..n], n % 8);
    n - n % 8 + ((diff.trailing_zeros() / 8) as usize).min(n % 8)
}

/// Bytes at the end of `a` and `b` that are equal.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a_end, b_end) = (&a[a.len() - n..], &b[b.len() - n..]);
    let (a8, b8) = (a_end.rchunks_exact(8), b_end.rchunks_exact(8));
    for (k, (x, y)) in a8.zip(b8).enumerate() {
        // big-endian: the last byte is the lowest
        let diff = word(x, u64::from_be_bytes) ^ word(y, u64::from_be_bytes);
        if diff != 0 {
            return 8 * k + (diff.trailing_zeros() / 8) as usize;
        }
    }
    // the first few bytes, right-aligned in a word (zero-padded alike on both sides)
    let diff = first_bytes_be(a_end, n % 8) ^ first_bytes_be(b_end, n % 8);
    n - n % 8 + ((diff.trailing_zeros() / 8) as usize).min(n % 8)
}

/// An 8-byte chunk as a word.
#[inline]
fn word(chunk: &[u8], from: fn([u8; 8]) -> u64) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(chunk);
    from(bytes)
}

/// The last `rest` (< 8) bytes of `bytes` as a little-endian word, zero above them: one load of
/// the last eight bytes when there are eight (a byte loop would become a `memcpy` call).
#[inline]
fn last_bytes_le(bytes: &[u8], rest: usize) -> u64 {
    let n = bytes.len();
    match rest {
        0 => 0,
        _ if n >= 8 => word(&bytes[n - 8..], u64::from_le_bytes) >> (8 * (8 - rest)),
        _ => bytes[n - rest..]
            .iter()
            .rev()
            .fold(0, |w, &b| w << 8 | b as u64),
    }
}

/// The first `rest` (< 8) bytes of `bytes` as a big-endian word, right-aligned (the last of them
/// lowest), zero above them.
#[inline]
fn first_bytes_be(bytes: &[u8], rest: usize) -> u64 {
    match rest {
        0 => 0,
        _ if bytes.len() >= 8 => word(&bytes[..8], u64::from_be_bytes) >> (8 * (8 - rest)),
        _ => bytes[..rest].iter().fold(0, |w, &b| w << 8 | b as u64),
    }
}

/// Bytes of the common prefix and of the common suffix of `a` and `b` (the suffix taken from what
/// the prefix leaves), each cut back to where neither side continues a UTF-8 sequence. Each side
/// then splits into prefix, middle and suffix that are all UTF-8 exactly when the side is, and for
/// UTF-8 sides the prefix and suffix are the maximal common prefix and suffix of code points.
fn byte_affixes(a: &[u8], b: &[u8]) -> (usize, usize) {
    let continues = |s: &[u8], k: usize| s.get(k).is_some_and(|&x| is_continuation(x));
    let mut head = common_prefix(a, b);
    while head > 0 && (continues(a, head) || continues(b, head)) {
        head -= 1;
    }
    let (a, b) = (&a[head..], &b[head..]);
    let mut tail = common_suffix(a, b);
    // the suffix's bytes are equal on both sides: one side tells where it may start
    while tail > 0 && continues(a, a.len() - tail) {
        tail -= 1;
    }
    (head, tail)
}

/// Whether `second` may follow the lead byte `lead`: a continuation byte, in the narrower range that
/// rules out overlong forms (after E0, F0), surrogates (after ED) and values past U+10FFFF (after F4).
#[inline]
fn second_byte_fits(lead: u8, second: u8) -> bool {
    let (low, high) = match lead {
        0xE0 => (0xA0, 0xBF),
        0xED => (0x80, 0x9F),
        0xF0 => (0x90, 0xBF),
        0xF4 => (0x80, 0x8F),
        _ => (0x80, 0xBF),
    };
    (low..=high).contains(&second)
}

/// `c` as a `char` (every value here comes from decoded UTF-8 or a checked fold table).
#[inline]
fn to_char(c: u32) -> char {
    char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Apply `steps` to `text` in place (`scratch` is working space). Returns `false`, leaving `text`
/// as it was, when a normalisation form is asked for and `text` holds a code point the caller's
/// Unicode leaves unassigned.
pub fn normalize(
    steps: &[Step],
    tables: &UnicodeTables<'_>,
    text: &mut Vec<u32>,
    scratch: &mut Vec<u32>,
) -> Result<bool, TryReserveError> {
    let forms = steps.iter().any(|s| matches!(s, Step::Nfc | Step::Nfkc));
    if forms
        && text
            .iter()
            .any(|&c| c >= 0x80 && tables.unassigned.contains(c))
    {
        return Ok(false);
    }
    for &step in steps {
        match step {
            Step::Nfc | Step::Nfkc => {
                if text.iter().all(|&c| c < 0x80) {
                    continue;
                }
                let chars = text.iter().map(|&c| to_char(c));
                let quick = if step == Step::Nfc {
                    is_nfc_quick(chars)
                } else {
                    is_nfkc_quick(chars)
                };
                if quick == IsNormalized::Yes {
                    continue;
                }
                scratch.clear();
                scratch.try_reserve(text.len())?;
                let chars = text.iter().map(|&c| to_char(c));
                if step == Step::Nfc {
                    scratch.extend(chars.nfc().map(|c| c as u32));
                } else {
                    scratch.extend(chars.nfkc().map(|c| c as u32));
                }
                std::mem::swap(text, scratch);
            }
            Step::Casefold => {
                if text.iter().all(|&c| c < 0x80) {
                    text.iter_mut()
                        .for_each(|c| *c = (*c as u8).to_ascii_lowercase() as u32);
                    continue;
                }
                scratch.clear();
                scratch.try_reserve(text.len())?;
                for &c in text.iter() {
                    if c < 0x80 {
                        scratch.push((c as u8).to_ascii_lowercase() as u32);
                    } else if let Some(folded) = tables.fold.get(c) {
                        scratch.try_reserve(folded.len())?;
                        scratch.extend_from_slice(folded);
                    } else {
                        scratch.push(c);
                    }
                }
                std::mem::swap(text, scratch);
            }
            Step::Strip => strip_by(text, is_python_whitespace),
            Step::CollapseWhitespace => collapse_by(text, b' ' as u32, is_python_whitespace),
            Step::StripPunctuation => text.retain(|&c| !tables.punctuation.contains(c)),
        }
    }
    Ok(true)
}

/// Decode and normalise one text into the workspace ([`PairWorkspace::text`]).
pub fn normalize_text(
    ws: &mut PairWorkspace,
    steps: &[Step],
    tables: &UnicodeTables<'_>,
    bytes: &[u8],
) -> Result<TextOutcome, TryReserveError> {
    if !decode(bytes, &mut ws.pred)? {
        return Ok(TextOutcome::InvalidUtf8);
    }
    if !normalize(steps, tables, &mut ws.pred, &mut ws.scratch)? {
        return Ok(TextOutcome::NeedsCaller);
    }
    Ok(TextOutcome::Done)
}

/// A column normalised by [`normalize_column`]: item `k` is `data[offsets[k]..offsets[k + 1]]`
/// (UTF-8), with `status[k]` 0 (normalised), 1 (left to the caller, its text unchanged) or 2 (not
/// UTF-8, an empty text).
#[derive(Debug, Default, PartialEq)]
pub struct NormalizedColumn {
    pub data: Vec<u8>,
    pub offsets: Vec<i64>,
    pub status: Vec<i8>,
}

/// Every item of a column through `steps` ([`normalize_text`]); `Err((k, e))` when out of memory
/// at item `k`.
pub fn normalize_column<'a>(
    items: impl Iterator<Item = &'a [u8]>,
    steps: &[Step],
    tables: &UnicodeTables<'_>,
) -> Result<NormalizedColumn, (usize, TryReserveError)> {
    let mut ws = PairWorkspace::new();
    let mut out = NormalizedColumn {
        offsets: vec![0],
        ..Default::default()
    };
    for (k, bytes) in items.enumerate() {
        let code = match normalize_text(&mut ws, steps, tables, bytes).map_err(|e| (k, e))? {
            TextOutcome::Done => {
                let mut utf8 = [0; 4];
                for c in ws.text().iter().filter_map(|&c| char::from_u32(c)) {
                    out.data
                        .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                }
                0
            }
            TextOutcome::NeedsCaller => {
                out.data.extend_from_slice(bytes);
                1
            }
            TextOutcome::InvalidUtf8 => 2,
        };
        out.offsets.push(out.data.len() as i64);
        out.status.push(code);
    }
    Ok(out)
}

/// Score one pair of UTF-8 texts: decode, normalise both sides by `steps`, align the gold
/// (reference) with the prediction at `level` (an error only when out of memory). Sides `known`
/// to be UTF-8 are not validated again.
pub fn score_pair(
    ws: &mut PairWorkspace,
    level: Level,
    steps: &[Step],
    tables: &UnicodeTables<'_>,
    known: KnownUtf8,
    pred: &[u8],
    gold: &[u8],
) -> Result<PairOutcome, TryReserveError> {
    if steps.is_empty() && level == Level::Characters {
        return score_characters(ws, known, pred, gold);
    }
    for (side, bytes, known) in [
        (Side::Pred, pred, known.pred),
        (Side::Gold, gold, known.gold),
    ] {
        let text = if side == Side::Pred {
            &mut ws.pred
        } else {
            &mut ws.gold
        };
        if !decode_side(bytes, known, text)? {
            return Ok(PairOutcome::InvalidUtf8(side));
        }
    }
    for side in [Side::Pred, Side::Gold] {
        let text = if side == Side::Pred {
            &mut ws.pred
        } else {
            &mut ws.gold
        };
        if !normalize(steps, tables, text, &mut ws.scratch)? {
            return Ok(PairOutcome::NeedsCaller);
        }
    }
    let counts = match level {
        Level::Characters => {
            let c = align(&mut ws.align, &ws.gold, &ws.pred)?;
            PairCounts {
                ref_len: ws.gold.len(),
                substitutions: c.substitutions,
                deletions: c.deletions,
                insertions: c.insertions,
            }
        }
        Level::Words => {
            let w = word_alignment(&mut ws.words, &ws.gold, &ws.pred)?;
            PairCounts {
                ref_len: w.ref_words,
                substitutions: w.counts.substitutions,
                deletions: w.counts.deletions,
                insertions: w.counts.insertions,
            }
        }
    };
    Ok(PairOutcome::Counts(counts))
}

/// [`score_pair`] at the character level without normaliser steps. The common prefix and suffix
/// are found on the bytes ([`byte_affixes`]) and only the middles are decoded and aligned: the
/// alignment strips the common prefix and suffix of code points first, so this is the same
/// problem, and its counts are the same. An equal pair decodes and aligns nothing.
fn score_characters(
    ws: &mut PairWorkspace,
    known: KnownUtf8,
    pred: &[u8],
    gold: &[u8],
) -> Result<PairOutcome, TryReserveError> {
    let (head, tail) = byte_affixes(pred, gold);
    let (prefix, suffix) = (&gold[..head], &gold[gold.len() - tail..]);
    // The affixes are bytes of both sides: UTF-8 when either side is known to be; otherwise a
    // side is UTF-8 exactly when its affixes and its middle are.
    let utf8 = |piece: &[u8]| simdutf8::basic::from_utf8(piece).is_ok();
    if !(known.pred || known.gold || utf8(prefix) && utf8(suffix)) {
        return Ok(PairOutcome::InvalidUtf8(Side::Pred));
    }
    if !decode_side(&pred[head..pred.len() - tail], known.pred, &mut ws.pred)? {
        return Ok(PairOutcome::InvalidUtf8(Side::Pred));
    }
    if !decode_side(&gold[head..gold.len() - tail], known.gold, &mut ws.gold)? {
        return Ok(PairOutcome::InvalidUtf8(Side::Gold));
    }
    let c = align(&mut ws.align, &ws.gold, &ws.pred)?;
    Ok(PairOutcome::Counts(PairCounts {
        ref_len: count_chars(prefix) + ws.gold.len() + count_chars(suffix),
        substitutions: c.substitutions,
        deletions: c.deletions,
        insertions: c.insertions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levenshtein::reference::{matrix, Rng};
    use crate::levenshtein::AlignWorkspace;

    fn cps(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    fn text(ws: &PairWorkspace) -> String {
        ws.text().iter().map(|&c| to_char(c)).collect()
    }

    /// A fold table holding the folds these tests need (as Python's `str.casefold` gives them).
    struct Folds {
        keys: Vec<u32>,
        offsets: Vec<i64>,
        values: Vec<u32>,
    }

    fn folds() -> Folds {
        let pairs = [
            ('Σ', "σ"),
            ('ß', "ss"),
            ('ς', "σ"),
            ('É', "é"),
            ('İ', "i\u{307}"),
            ('ﬁ', "fi"),
        ];
        let mut sorted = pairs.to_vec();
        sorted.sort();
        let mut f = Folds {
            keys: Vec::new(),
            offsets: vec![0],
            values: Vec::new(),
        };
        for (k, v) in sorted {
            f.keys.push(k as u32);
            f.values.extend(cps(v));
            f.offsets.push(f.values.len() as i64);
        }
        f
    }

    fn set(members: &[u32]) -> Vec<u8> {
        let mut bits = vec![0u8; 0x11_0000 / 8];
        for &c in members {
            bits[(c / 8) as usize] |= 1 << (c % 8);
        }
        bits
    }

    fn normalized(steps: &[Step], input: &str) -> Option<String> {
        let f = folds();
        let punctuation = set(&cps("!,.-«»¿、。"));
        let unassigned = set(&[0x0378, 0x1E030]);
        let tables = UnicodeTables {
            fold: FoldTable {
                keys: &f.keys,
                offsets: &f.offsets,
                values: &f.values,
            },
            punctuation: CodePointSet { bits: &punctuation },
            unassigned: CodePointSet { bits: &unassigned },
        };
        tables.fold.check().unwrap();
        let mut ws = PairWorkspace::new();
        match normalize_text(&mut ws, steps, &tables, input.as_bytes()).unwrap() {
            TextOutcome::Done => Some(text(&ws)),
            TextOutcome::NeedsCaller => None,
            TextOutcome::InvalidUtf8 => unreachable!(),
        }
    }

    #[test]
    fn normalisation_forms() {
        use Step::*;
        // e + combining acute composes; the ligature survives NFC and splits under NFKC
        assert_eq!(normalized(&[Nfc], "e\u{301}ﬁ").unwrap(), "éﬁ");
        assert_eq!(normalized(&[Nfkc], "e\u{301}ﬁ").unwrap(), "éfi");
        // Hangul jamo compose algorithmically; a lone combining mark stays
        assert_eq!(normalized(&[Nfc], "\u{1100}\u{1161}").unwrap(), "\u{AC00}");
        assert_eq!(normalized(&[Nfc], "\u{301}a").unwrap(), "\u{301}a");
        // NBSP is a compatibility space
        assert_eq!(normalized(&[Nfkc], "a\u{a0}b").unwrap(), "a b");
        // an unassigned code point (to the caller) hands the text back under a form only
        assert_eq!(normalized(&[Nfc], "a\u{378}"), None);
        assert_eq!(normalized(&[Casefold], "A\u{378}").unwrap(), "a\u{378}");
    }

    #[test]
    fn casefold_whitespace_and_punctuation() {
        use Step::*;
        assert_eq!(
            normalized(&[Casefold], "ΣΣ Straße ﬁ").unwrap(),
            "σσ strasse fi"
        );
        assert_eq!(normalized(&[Casefold], "ς İ").unwrap(), "σ i\u{307}");
        assert_eq!(
            normalized(&[Strip], "\u{3000} a \u{1c}b\u{85}\t").unwrap(),
            "a \u{1c}b"
        );
        assert_eq!(
            normalized(&[CollapseWhitespace], "\u{2028} a\u{a0}\u{a0}b  c ").unwrap(),
            "a b c"
        );
        assert_eq!(
            normalized(&[StripPunctuation], "«¿a, b-c?»").unwrap(),
            "a bc?"
        );
        assert_eq!(
            normalized(&[Nfc, Casefold, CollapseWhitespace], " É\u{301}  X ").unwrap(),
            "é\u{301} x"
        );
        assert_eq!(normalized(&[], " A ").unwrap(), " A ");
        assert_eq!(Step::from_name("lower"), Some(Casefold));
        assert_eq!(Step::from_name("upper"), None);
    }

    fn score(level: Level, pred: &[u8], gold: &[u8]) -> PairOutcome {
        score_pair(
            &mut PairWorkspace::new(),
            level,
            &[],
            &UnicodeTables::default(),
            KnownUtf8::default(),
            pred,
            gold,
        )
        .unwrap()
    }

    #[test]
    fn pairs_of_texts() {
        let counts = |ref_len, substitutions, deletions, insertions| {
            PairOutcome::Counts(PairCounts {
                ref_len,
                substitutions,
                deletions,
                insertions,
            })
        };
        assert_eq!(
            score(Level::Characters, "ct".as_bytes(), "cat".as_bytes()),
            counts(3, 0, 1, 0)
        );
        assert_eq!(
            score(Level::Characters, "αβγδ".as_bytes(), "αβ".as_bytes()),
            counts(2, 0, 0, 2)
        );
        assert_eq!(
            score(
                Level::Words,
                "hello wrld".as_bytes(),
                "hello world".as_bytes()
            ),
            counts(2, 1, 0, 0)
        );
        assert_eq!(score(Level::Words, b"", b" \t "), counts(0, 0, 0, 0));
        assert_eq!(
            score(Level::Characters, b"ok", b"\xffbad"),
            PairOutcome::InvalidUtf8(Side::Gold)
        );
        assert_eq!(
            score(Level::Characters, b"\xc3", b"ok"),
            PairOutcome::InvalidUtf8(Side::Pred)
        );
    }

    #[test]
    fn random_pairs_match_the_dynamic_program() {
        let alphabet = cps("aбc的😀 \u{301}");
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut ws = PairWorkspace::new();
        for _ in 0..3_000 {
            let pred = rng.seq(40, &alphabet);
            let gold = rng.seq(40, &alphabet);
            let (p, g): (String, String) = (
                pred.iter().map(|&c| to_char(c)).collect(),
                gold.iter().map(|&c| to_char(c)).collect(),
            );
            let outcome = score_pair(
                &mut ws,
                Level::Characters,
                &[],
                &UnicodeTables::default(),
                KnownUtf8::default(),
                p.as_bytes(),
                g.as_bytes(),
            )
            .unwrap();
            let PairOutcome::Counts(c) = outcome else {
                panic!("{outcome:?}")
            };
            assert_eq!(c.ref_len, gold.len());
            assert_eq!(
                c.substitutions + c.deletions + c.insertions,
                matrix(&gold, &pred)[gold.len()][pred.len()]
            );
            assert_eq!(gold.len() - c.deletions + c.insertions, pred.len());
        }
    }

    #[test]
    fn columns_in_arrow_layout() {
        // three items ("ab", null, "cde") of a sliced array: offsets start at 2, validity at bit 1
        let data = b"xxabzzcde";
        let offsets: [i32; 4] = [2, 4, 6, 9];
        let validity = [0b0000_1010u8];
        let column = TextColumn::new("pred", data, &offsets, Some((&validity, 1))).unwrap();
        assert_eq!(column.len(), 3);
        assert_eq!(column.bytes(), 7);
        assert_eq!(column.item(0), b"ab");
        assert_eq!(column.item(1), b"");
        assert_eq!(column.item(2), b"cde");
        let large: [i64; 2] = [0, 3];
        assert_eq!(
            TextColumn::new("gold", b"abc", &large, None)
                .unwrap()
                .item(0),
            b"abc"
        );
        let err = |offsets: &[i32], validity| {
            TextColumn::new("pred", data, offsets, validity)
                .unwrap_err()
                .0
        };
        assert!(err(&[], None).contains("at least one offset"));
        assert!(err(&[0, 5, 3], None).contains("offset 2"));
        assert!(err(&[0, 10], None).contains("offset 1"));
        assert!(err(&[-1, 2], None).contains("offset 0"));
        assert!(err(&[0, 1, 2], Some((&validity, 7))).contains("validity bitmap too short"));
    }

    #[test]
    fn fold_tables_are_checked() {
        let check = |keys: &[u32], offsets: &[i64], values: &[u32]| {
            FoldTable {
                keys,
                offsets,
                values,
            }
            .check()
        };
        assert!(check(&[65], &[0, 1], &[97]).is_ok());
        assert!(check(&[66, 65], &[0, 1, 2], &[98, 97]).is_err());
        assert!(check(&[65], &[0, 2], &[97]).is_err());
        assert!(check(&[65], &[0, 1], &[0xD800]).is_err());
        assert!(check(&[65], &[0], &[]).is_err());
    }

    /// Random byte strings from UTF-8 pieces of every width, invalid pieces when `invalid`, and
    /// runs of the shared `common` pieces (so that pairs share prefixes and suffixes, cut inside a
    /// multi-byte character too: é/è and 的/皆 differ in their last byte only).
    fn pieces_text(rng: &mut Rng, invalid: bool, common: &[u8]) -> Vec<u8> {
        let valid: [&[u8]; 8] = [
            b"a",
            b" ",
            "é".as_bytes(),
            "è".as_bytes(),
            "的".as_bytes(),
            "皆".as_bytes(),
            "😀".as_bytes(),
            "😁".as_bytes(),
        ];
        let bad: [&[u8]; 5] = [b"\xff", b"\x80", b"\xc3", b"\xe7\x9a", b"\xed\xa0\x80"];
        let mut out = Vec::new();
        for _ in 0..rng.below(12) {
            match rng.below(10) {
                0..=2 => out.extend_from_slice(common),
                9 if invalid => out.extend_from_slice(bad[rng.below(bad.len())]),
                _ => out.extend_from_slice(valid[rng.below(valid.len())]),
            }
        }
        out
    }

    /// What `score_pair` gave before the byte-level shortcuts: both sides decoded whole (pred
    /// first), then aligned whole.
    fn whole_pair(pred: &[u8], gold: &[u8]) -> PairOutcome {
        let (mut p, mut g) = (Vec::new(), Vec::new());
        if !decode(pred, &mut p).unwrap() {
            return PairOutcome::InvalidUtf8(Side::Pred);
        }
        if !decode(gold, &mut g).unwrap() {
            return PairOutcome::InvalidUtf8(Side::Gold);
        }
        let c = align(&mut AlignWorkspace::new(), &g, &p).unwrap();
        PairOutcome::Counts(PairCounts {
            ref_len: g.len(),
            substitutions: c.substitutions,
            deletions: c.deletions,
            insertions: c.insertions,
        })
    }

    #[test]
    fn a_column_normalises_item_by_item() {
        let mut unassigned = vec![0u8; 0x378 / 8 + 1];
        unassigned[0x378 / 8] |= 1 << (0x378 % 8); // U+0378 is unassigned
        let tables = UnicodeTables {
            unassigned: CodePointSet { bits: &unassigned },
            ..Default::default()
        };
        let items: [&[u8]; 5] = [
            b"  a \t b ",
            "e\u{301}!".as_bytes(),
            b"\xff",
            b"",
            "x\u{378} ".as_bytes(),
        ];
        let steps = [Step::Nfc, Step::CollapseWhitespace];
        let column = normalize_column(items.into_iter(), &steps, &tables).unwrap();
        assert_eq!(
            column.data,
            ["a b", "\u{e9}!", "", "", "x\u{378} "].concat().as_bytes()
        );
        assert_eq!(column.offsets, [0, 3, 6, 6, 6, 10]);
        assert_eq!(column.status, [0, 0, 2, 0, 1]);
        let empty = normalize_column(std::iter::empty(), &steps, &tables).unwrap();
        assert_eq!((empty.offsets, empty.data.len()), (vec![0], 0));
    }

    #[test]
    fn byte_level_shortcuts_give_the_whole_pair_counts() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut ws = PairWorkspace::new();
        let mut seen = [0usize; 4]; // equal, counted, invalid pred, invalid gold
        for round in 0..30_000 {
            let invalid = round % 3 == 0;
            let common = pieces_text(&mut rng, false, b"");
            let gold = pieces_text(&mut rng, invalid, &common);
            let pred = match rng.below(4) {
                0 => gold.clone(),
                _ => pieces_text(&mut rng, invalid, &common),
            };
            let expected = whole_pair(&pred, &gold);
            let utf8 = |b: &[u8]| std::str::from_utf8(b).is_ok();
            for known in [
                KnownUtf8::default(),
                KnownUtf8 {
                    pred: utf8(&pred),
                    gold: false,
                },
                KnownUtf8 {
                    pred: false,
                    gold: utf8(&gold),
                },
                KnownUtf8 {
                    pred: utf8(&pred),
                    gold: utf8(&gold),
                },
            ] {
                let outcome = score_pair(
                    &mut ws,
                    Level::Characters,
                    &[],
                    &UnicodeTables::default(),
                    known,
                    &pred,
                    &gold,
                )
                .unwrap();
                assert_eq!(outcome, expected, "{pred:x?} {gold:x?} {known:?}");
            }
            seen[match expected {
                PairOutcome::Counts(_) if pred == gold => 0,
                PairOutcome::Counts(_) => 1,
                PairOutcome::InvalidUtf8(Side::Pred) => 2,
                _ => 3,
            }] += 1;
        }
        assert!(seen.iter().all(|&k| k > 1_000), "{seen:?}");
    }

    #[test]
    fn affixes_stop_at_character_boundaries() {
        let affixes = |a: &str, b: &str| byte_affixes(a.as_bytes(), b.as_bytes());
        assert_eq!(affixes("abcé", "abcè"), (3, 0)); // é, è: C3 A9, C3 A8
        assert_eq!(affixes("éx", "èx"), (0, 1));
        assert_eq!(affixes("的的", "皆的"), (0, 3)); // E7 9A 84, E7 9A 86
        assert_eq!(affixes("same", "same"), (4, 0));
        assert_eq!(affixes("", "é"), (0, 0));
        // long runs take the word-at-a-time loops
        let (a, b) = (
            "ü".repeat(20) + "é" + &"ö".repeat(9),
            "ü".repeat(20) + "è" + &"ö".repeat(9),
        );
        assert_eq!(affixes(&a, &b), (40, 18));
        assert_eq!(byte_affixes(b"\xc3", b"\xc3\xa9"), (0, 0));
    }

    #[test]
    fn known_utf8_decoding_and_counting() {
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        let mut out = Vec::new();
        for round in 0..5_000 {
            // runs of ASCII eight bytes long or longer, at every alignment, between other pieces
            let common: &[u8] = match round % 3 {
                0 => "Ցß".as_bytes(),
                1 => b"ascii run",
                _ => b"a long ASCII run",
            };
            let bytes = pieces_text(&mut rng, false, common);
            let text = std::str::from_utf8(&bytes).unwrap();
            decode_utf8(&bytes, &mut out).unwrap();
            assert_eq!(out, cps(text));
            assert_eq!(count_chars(&bytes), text.chars().count());
        }
        // long texts: sequences of every width straddle the 64-byte blocks, and ASCII blocks
        // alternate with mixed ones
        let alphabet = ['a', 'z', '~', 'é', 'Ց', '的', '😀', '\u{10FFFF}'];
        for round in 0..2_000 {
            let ascii_run = "x".repeat(round % 130);
            let mut text: String = (0..rng.below(200))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            text.push_str(&ascii_run);
            for _ in 0..rng.below(5) {
                text.push(alphabet[rng.below(alphabet.len())]);
            }
            decode_utf8(text.as_bytes(), &mut out).unwrap();
            assert_eq!(out, cps(&text));
            let chars = text.chars().count();
            assert_eq!(count_chars(text.as_bytes()), chars);
            // the scalar twin of the AVX2 count, on the same long texts
            assert_eq!(text.len() - continuations_swar(text.as_bytes()), chars);
        }
        // not UTF-8: unspecified code points, but no panic
        decode_utf8(b"\x80\xff\xf0", &mut out).unwrap();
        decode_utf8(&[0xF8, 0xFF, 0xFF, 0xFE, 0xC3].repeat(40), &mut out).unwrap();
        decode_utf8(b"\x80\x80abcdefgh\xf0\x80abcdefghij", &mut out).unwrap();
    }

    #[test]
    fn columns_known_to_be_utf8() {
        let known = |data: &[u8], offsets: &[i32], validity: Option<(&[u8], usize)>| {
            TextColumn::new("c", data, offsets, validity)
                .unwrap()
                .is_utf8()
        };
        let data = "aé的😀".as_bytes();
        assert!(known(data, &[0, 1, 3, 6, 10], None));
        assert!(known(data, &[1, 3, 3], None)); // a slice, then an empty item
        assert!(known(b"", &[0], None));
        // every item starts on a boundary, but not the whole buffer: only the items are checked
        assert!(known(b"ok\xff", &[0, 2], None));
        // "é" cut in two items: the buffer is UTF-8, the items are not
        assert!(!known(data, &[0, 2, 3], None));
        assert!(!known(b"a\xffb", &[0, 1, 2, 3], None));
        // a null item holding a bad byte: unknown (checked item by item)
        assert!(!known(b"a\xffb", &[0, 1, 2, 3], Some((&[0b101], 0))));
    }

    #[test]
    fn decoding_validates_like_the_standard_library() {
        let pieces: [&[u8]; 16] = [
            b"a",
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\xf0\x9f\x98\x80",
            b"\xff",
            b"\xc0\xaf",
            b"\xc1\xbf",
            b"\xed\xa0\x80",
            b"\xed\x9f\xbf",
            b"\xf4\x90\x80\x80",
            b"\xf4\x8f\xbf\xbf",
            b"\xe0\x80\xaf",
            b"\xe0\xa0\x80",
            b"\xc3",
            b"\x80",
            b"\xf0\x9f",
        ];
        let mut rng = Rng(0x51_7CC1_B727_220A);
        let mut out = Vec::new();
        let (mut valid, mut invalid) = (0, 0);
        for _ in 0..20_000 {
            let bytes: Vec<u8> = (0..rng.below(6))
                .flat_map(|_| pieces[rng.below(pieces.len())].iter().copied())
                .collect();
            let ok = decode(&bytes, &mut out).unwrap();
            match std::str::from_utf8(&bytes) {
                Ok(text) => {
                    valid += 1;
                    assert!(ok, "{bytes:x?}");
                    assert_eq!(out, cps(text));
                }
                Err(_) => {
                    invalid += 1;
                    assert!(!ok, "{bytes:x?}");
                }
            }
        }
        assert!(
            valid > 1_000 && invalid > 1_000,
            "{valid} valid, {invalid} invalid"
        );
    }
}
