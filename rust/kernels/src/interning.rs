//! The native part of the interning rule of `scorekit._interning`: strings, numbers and `None`
//! found by value, so that equal values share one id. Strings are equal when their texts are;
//! numbers by exact value, as Python's `==` compares them (`2.0 == 2`, `True == 1`); NaN equals
//! nothing. The reader assigns the ids (other values are interned by Python, and a value may be
//! given the id of an equal one of another kind); this index only finds them again.

use std::hash::BuildHasher;
use std::ops::Range;

use foldhash::fast::FixedState;
use foldhash::HashMap as FastMap;
use hashbrown::HashTable;

use crate::exact_i64;

/// A number by value: an integral float within `i64` is the int it equals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Num {
    Int(i64),
    /// Any other float but NaN, by its bits.
    Float(u64),
}

impl Num {
    /// The number `x` equals under Python's `==`; `None` for NaN, which equals nothing.
    #[inline]
    pub fn of_float(x: f64) -> Option<Num> {
        if x.is_nan() {
            return None;
        }
        Some(match exact_i64(x) {
            Some(n) => Num::Int(n),
            None => Num::Float(x.to_bits()),
        })
    }
}

/// A value whose equality the index decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Native<'a> {
    Str(&'a str),
    Num(Num),
    None,
}

/// A value [`NativeIndex::find`] did not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Absent {
    hash: u64,
}

/// Native value → id, with the texts of the strings kept in one buffer.
#[derive(Debug)]
pub struct NativeIndex {
    /// `(hash, id, start, end)` of every indexed string, its text `text[start..end]`.
    strings: HashTable<(u64, u32, u32, u32)>,
    text: String,
    numbers: FastMap<Num, u32>,
    none: Option<u32>,
}

impl Default for NativeIndex {
    /// Room for the distinct values of a typical batch.
    fn default() -> Self {
        NativeIndex {
            strings: HashTable::with_capacity(64),
            text: String::new(),
            numbers: FastMap::with_capacity_and_hasher(64, Default::default()),
            none: None,
        }
    }
}

#[inline]
fn text_hash(text: &str) -> u64 {
    FixedState::default().hash_one(text)
}

impl NativeIndex {
    /// Forget every value and text (keeping the allocations).
    pub fn clear(&mut self) {
        self.strings.clear();
        self.text.clear();
        self.numbers.clear();
        self.none = None;
    }

    /// The id of a value equal to `value`, or, when none is indexed, what
    /// [`NativeIndex::insert_text`] needs to index it (the string's hash, computed once).
    #[inline]
    pub fn find(&self, value: &Native<'_>) -> Result<u32, Absent> {
        let found = match value {
            Native::Str(s) => {
                let hash = text_hash(s);
                return self
                    .strings
                    .find(hash, |&(h, _, start, end)| {
                        h == hash && &self.text[start as usize..end as usize] == *s
                    })
                    .map(|&(_, id, _, _)| id)
                    .ok_or(Absent { hash });
            }
            Native::Num(n) => self.numbers.get(n).copied(),
            Native::None => self.none,
        };
        found.ok_or(Absent { hash: 0 })
    }

    /// Keep the text `s`: where it is ([`NativeIndex::text`]).
    #[inline]
    pub fn keep_text(&mut self, s: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(s);
        start..self.text.len()
    }

    /// A text kept by [`NativeIndex::keep_text`].
    #[inline]
    pub fn text(&self, range: Range<usize>) -> &str {
        &self.text[range]
    }

    /// Index the number or `None` `value` under `id` (see [`NativeIndex::insert_text`] for a
    /// string).
    #[inline]
    pub fn insert(&mut self, value: &Native<'_>, id: u32) {
        match value {
            Native::Str(_) => panic!("a string is indexed by its kept text"),
            Native::Num(n) => {
                self.numbers.insert(*n, id);
            }
            Native::None => self.none = Some(id),
        }
    }

    /// Index the string kept at `range` under `id`; `absent`: what [`NativeIndex::find`] gave for
    /// that string.
    #[inline]
    pub fn insert_text(&mut self, range: Range<usize>, id: u32, absent: Absent) {
        let hash = absent.hash;
        debug_assert_eq!(hash, text_hash(&self.text[range.clone()]));
        self.strings.insert_unique(
            hash,
            (hash, id, range.start as u32, range.end as u32),
            |&(h, ..)| h,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_equal_by_value() {
        assert_eq!(Num::of_float(2.0), Some(Num::Int(2)));
        assert_eq!(Num::of_float(-0.0), Some(Num::Int(0)));
        assert_eq!(Num::of_float(0.5), Some(Num::Float(0.5f64.to_bits())));
        assert_eq!(Num::of_float(f64::NAN), None);
        assert_eq!(Num::of_float(1e300), Some(Num::Float(1e300f64.to_bits())));
    }

    #[test]
    fn values_are_found_by_value() {
        let mut index = NativeIndex::default();
        let absent = |index: &NativeIndex, s| index.find(&Native::Str(s)).unwrap_err();
        let a = index.keep_text("a");
        index.insert_text(a.clone(), 0, absent(&index, "a"));
        index.insert(&Native::Num(Num::Int(2)), 1);
        index.insert(&Native::None, 2);
        let wasted = index.keep_text("ab"); // kept but not indexed: found by nothing
        assert_eq!(index.text(wasted), "ab");
        let b = index.keep_text("b");
        index.insert_text(b, 3, absent(&index, "b"));
        assert_eq!(index.find(&Native::Str("a")), Ok(0));
        assert_eq!(index.find(&Native::Str("b")), Ok(3));
        assert!(index.find(&Native::Str("ab")).is_err());
        assert!(index.find(&Native::Str("")).is_err());
        let two = Num::of_float(2.0).unwrap();
        assert_eq!(index.find(&Native::Num(two)), Ok(1));
        assert!(index.find(&Native::Num(Num::Int(3))).is_err());
        assert_eq!(index.find(&Native::None), Ok(2));
        assert_eq!(index.text(a), "a");
        index.clear();
        assert!(index.find(&Native::Str("a")).is_err());
        assert!(index.find(&Native::None).is_err());
        let empty = index.keep_text("");
        index.insert_text(empty, 7, absent(&index, ""));
        assert_eq!(index.find(&Native::Str("")), Ok(7));
    }
}
