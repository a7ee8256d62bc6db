//! The values of the case benchmark's records (`scorekit.cases`) as the `records` kernels see
//! them: scalars and their equality, value ids, the leaf paths of expected records, and the
//! pairing and scores of a list of scalars or of records.
//!
//! Equality is the JSON equality of docs/cases.md: booleans apart from numbers, `1 == 1.0`,
//! NaN equal to nothing. A reader (the bindings) turns Python values into [`Scalar`]s and dict
//! keys into path texts; everything decided about them lives here.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use foldhash::HashMap as FastMap;
use hashbrown::HashTable;

use crate::exact_i64;
use crate::records::{self, RecordsError};

/// The id of a value that equals nothing (a container, NaN).
pub const NEVER: i64 = -2;
/// An expected path the record does not score.
pub const UNSCORED: i64 = -1;

/// A scalar leaf, its text borrowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

/// What a scalar is equal by: equal keys are equal values (`1 == 1.0`, booleans apart from
/// numbers); NaN has no key, it equals nothing.
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(&'a str),
}

impl<'a> Scalar<'a> {
    #[inline]
    fn key(&self) -> Option<Key<'a>> {
        Some(match *self {
            Scalar::None => Key::None,
            Scalar::Bool(b) => Key::Bool(b),
            Scalar::Int(x) => Key::Int(x),
            Scalar::Float(f) if f.is_nan() => return None,
            Scalar::Float(f) => match exact_i64(f) {
                Some(x) => Key::Int(x),
                None => Key::Float(f.to_bits()),
            },
            Scalar::Str(t) => Key::Str(t),
        })
    }

    /// Whether two scalars are equal (their ids would be).
    #[inline]
    pub fn equals(&self, other: &Scalar<'_>) -> bool {
        self.key().is_some_and(|k| other.key() == Some(k))
    }
}

/// Value ids of the items of two scalar lists, equal values sharing one: an expected item that
/// is `None` (not scored) has [`UNSCORED`], NaN an id of its own, an actual value equal to no
/// expected one [`NEVER`].
pub fn scalar_ids(expected: &[Option<Scalar<'_>>], actual: &[Scalar<'_>]) -> (Vec<i64>, Vec<i64>) {
    let mut ids: FastMap<Key<'_>, i64> =
        FastMap::with_capacity_and_hasher(expected.len(), Default::default());
    let mut e = Vec::with_capacity(expected.len());
    for (j, item) in expected.iter().enumerate() {
        let fresh = j as i64; // an id no earlier item took
        e.push(match item.as_ref().map(Scalar::key) {
            None => UNSCORED,
            Some(None) => fresh,
            Some(Some(key)) => *ids.entry(key).or_insert(fresh),
        });
    }
    let a = actual
        .iter()
        .map(|s| {
            s.key()
                .and_then(|key| ids.get(&key).copied())
                .unwrap_or(NEVER)
        })
        .collect();
    (e, a)
}

/// Value ids of the expected values of a batch of records: equal values share one id, NaN gets a
/// new one each time; the actual values are looked up ([`NEVER`] when no expected value equals
/// them).
#[derive(Debug)]
pub struct ValueIds {
    strings: FastMap<String, i64>,
    ints: FastMap<i64, i64>,
    floats: FastMap<u64, i64>,
    next: i64,
}

impl Default for ValueIds {
    fn default() -> Self {
        ValueIds {
            strings: FastMap::default(),
            ints: FastMap::default(),
            floats: FastMap::default(),
            // ids 0..3 are None, False, True
            next: 3,
        }
    }
}

impl ValueIds {
    fn fresh(&mut self) -> i64 {
        self.next += 1;
        self.next - 1
    }

    /// The id of an expected value (new values get new ids; NaN always a new one).
    #[inline]
    pub fn intern(&mut self, s: &Scalar<'_>) -> i64 {
        match s.key() {
            None => self.fresh(),
            Some(Key::None) => 0,
            Some(Key::Bool(b)) => 1 + b as i64,
            Some(Key::Int(x)) => match self.ints.get(&x) {
                Some(&id) => id,
                None => {
                    let id = self.fresh();
                    self.ints.insert(x, id);
                    id
                }
            },
            Some(Key::Float(bits)) => match self.floats.get(&bits) {
                Some(&id) => id,
                None => {
                    let id = self.fresh();
                    self.floats.insert(bits, id);
                    id
                }
            },
            Some(Key::Str(t)) => match self.strings.get(t) {
                Some(&id) => id,
                None => {
                    let id = self.fresh();
                    self.strings.insert(t.to_owned(), id);
                    id
                }
            },
        }
    }

    /// The id of an actual value: an expected value's id, or [`NEVER`].
    #[inline]
    pub fn lookup(&self, s: &Scalar<'_>) -> i64 {
        match s.key() {
            None => NEVER,
            Some(Key::None) => 0,
            Some(Key::Bool(b)) => 1 + b as i64,
            Some(Key::Int(x)) => self.ints.get(&x).copied().unwrap_or(NEVER),
            Some(Key::Float(bits)) => self.floats.get(&bits).copied().unwrap_or(NEVER),
            Some(Key::Str(t)) => self.strings.get(t).copied().unwrap_or(NEVER),
        }
    }
}

/// The root of [`Paths`]: the record itself.
pub const ROOT: usize = usize::MAX;

/// The leaf paths of a list of expected records: a tree of path nodes (a node is a key under its
/// parent node, numbered parents first) and the value id of every scored leaf of every record.
#[derive(Debug, Default)]
pub struct Paths {
    parents: Vec<usize>,
    texts: Vec<String>,
    index: HashTable<usize>,
    /// `(record, node, id)` of every scored leaf.
    leaves: Vec<(usize, usize, i64)>,
}

fn node_hash(parent: usize, text: &str) -> u64 {
    FixedState::default().hash_one((parent, text))
}

impl Paths {
    /// `(node, new)`: the node of key `text` under `parent` ([`ROOT`] for a record's own keys),
    /// and whether it was made now.
    #[inline]
    pub fn node(&mut self, parent: usize, text: &str) -> (usize, bool) {
        let hash = node_hash(parent, text);
        let (parents, texts) = (&self.parents, &self.texts);
        if let Some(&n) = self
            .index
            .find(hash, |&n| parents[n] == parent && texts[n] == text)
        {
            return (n, false);
        }
        let n = self.parents.len();
        self.parents.push(parent);
        self.texts.push(text.to_owned());
        let (parents, texts) = (&self.parents, &self.texts);
        self.index
            .insert_unique(hash, n, |&m| node_hash(parents[m], &texts[m]));
        (n, true)
    }

    /// Record that `record` scores node `node` with value id `id`.
    #[inline]
    pub fn add_leaf(&mut self, record: usize, node: usize, id: i64) {
        self.leaves.push((record, node, id));
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether no node was made.
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// The parent of every node ([`ROOT`] for a record's own keys).
    pub fn parents(&self) -> &[usize] {
        &self.parents
    }

    /// The expected value ids, row-major `n_records x len()`: a leaf's id, [`UNSCORED`] elsewhere.
    pub fn expected_ids(&self, n_records: usize) -> Vec<i64> {
        let p = self.len();
        let mut e = vec![UNSCORED; n_records * p];
        for &(r, node, id) in &self.leaves {
            e[r * p + node] = id;
        }
        e
    }

    /// Whether some record scores each node as a leaf.
    pub fn is_leaf(&self) -> Vec<bool> {
        let mut is_leaf = vec![false; self.len()];
        for &(_, node, _) in &self.leaves {
            is_leaf[node] = true;
        }
        is_leaf
    }
}

/// The pairing of an expected list with an actual one and its scores (`scoring._Scorer.unordered`
/// without comparators, greedy matching).
#[derive(Debug, PartialEq)]
pub struct ListMatch {
    /// `(expected index, actual index, item score)` of every pair, in expected order.
    pub pairs: Vec<(usize, usize, f64)>,
    /// Expected `$ignore` items (and records scoring no path) filled by unpaired actual items.
    pub wildcards: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

impl ListMatch {
    fn new(
        pairs: Vec<(usize, usize, f64)>,
        wild_slots: usize,
        n_expected: usize,
        n_actual: usize,
    ) -> Self {
        let wildcards = wild_slots.min(n_actual - pairs.len());
        let scores: Vec<f64> = pairs.iter().map(|p| p.2).collect();
        let (precision, recall, f1) =
            records::list_scores(&scores, wildcards, n_expected, n_actual);
        ListMatch {
            pairs,
            wildcards,
            precision,
            recall,
            f1,
        }
    }
}

/// The match of a non-empty list of expected scalars (`None`: `$ignore`) with a list of actual
/// ones: equal items pair (score 1.0) as multisets.
pub fn scalar_list_match(expected: &[Option<Scalar<'_>>], actual: &[Scalar<'_>]) -> ListMatch {
    let (e_ids, a_ids) = scalar_ids(expected, actual);
    let pairs = records::multiset_pairs(&e_ids, &a_ids)
        .into_iter()
        .map(|(j, i)| (j, i, 1.0))
        .collect();
    let wild_slots = expected.iter().filter(|s| s.is_none()).count();
    ListMatch::new(pairs, wild_slots, expected.len(), actual.len())
}

/// The match of a non-empty list of `n_expected` items with `cols` actual records: `plain` are
/// the indices of the expected items that are records (the others are `$ignore`), `e`
/// (`plain.len() x p`) and `a` (`cols x p`) their value ids. Records scoring no path are
/// wildcards; the others pair greedily on the item score matrix.
pub fn record_list_match(
    n_expected: usize,
    plain: &[usize],
    (e, a): (&[i64], &[i64]),
    p: usize,
    cols: usize,
) -> Result<ListMatch, RecordsError> {
    let rows = plain.len();
    if e.len() != rows * p {
        return Err(RecordsError(format!(
            "expected ids hold {} values, not {rows} x {p}",
            e.len()
        )));
    }
    let counts = records::scored_paths(e, p, rows);
    let keep: Vec<usize> = (0..rows).filter(|&r| counts[r] > 0).collect();
    let m = records::match_matrix_of(e, a, p, (rows, cols))?;
    let kept: Vec<f64> = keep
        .iter()
        .flat_map(|&r| m[r * cols..(r + 1) * cols].iter().copied())
        .collect();
    let chosen = if cols == 0 || keep.is_empty() {
        Vec::new()
    } else {
        records::greedy_pairs(&kept, keep.len(), cols)?
    };
    let pairs = chosen
        .iter()
        .enumerate()
        .filter(|&(_, &i)| i >= 0)
        .map(|(r, &i)| (plain[keep[r]], i as usize, kept[r * cols + i as usize]))
        .collect();
    Ok(ListMatch::new(
        pairs,
        n_expected - keep.len(),
        n_expected,
        cols,
    ))
}

/// The score of a step: the correctly rounded mean of its scored leaves (`None` without one).
pub fn mean_score(scored: &[f64]) -> Option<f64> {
    (!scored.is_empty()).then(|| records::fsum(scored) / scored.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_is_json_equality() {
        use Scalar::*;
        assert!(Int(1).equals(&Float(1.0)));
        assert!(Float(-0.0).equals(&Int(0)));
        assert!(!Bool(true).equals(&Int(1)));
        assert!(!Float(f64::NAN).equals(&Float(f64::NAN)));
        assert!(Str("a").equals(&Str("a")));
        assert!(!Str("1").equals(&Int(1)));
        assert!(None.equals(&None));
        assert!(!None.equals(&Bool(false)));
        assert!(Float(0.5).equals(&Float(0.5)));
    }

    #[test]
    fn value_ids_share_ids_of_equal_values() {
        use Scalar::*;
        let mut ids = ValueIds::default();
        assert_eq!(ids.intern(&None), 0);
        assert_eq!(ids.intern(&Bool(false)), 1);
        assert_eq!(ids.intern(&Bool(true)), 2);
        let one = ids.intern(&Int(1));
        assert_eq!(one, 3);
        assert_eq!(ids.intern(&Float(1.0)), one);
        let nan = ids.intern(&Float(f64::NAN));
        assert_ne!(ids.intern(&Float(f64::NAN)), nan);
        let a = ids.intern(&Str("a"));
        assert_eq!(ids.intern(&Str("a")), a);
        let half = ids.intern(&Float(0.5));
        assert_eq!(ids.lookup(&Float(1.0)), one);
        assert_eq!(ids.lookup(&Int(1)), one);
        assert_eq!(ids.lookup(&Float(0.5)), half);
        assert_eq!(ids.lookup(&Str("a")), a);
        assert_eq!(ids.lookup(&Str("b")), NEVER);
        assert_eq!(ids.lookup(&Float(f64::NAN)), NEVER);
        assert_eq!(ids.lookup(&Int(2)), NEVER);
        assert_eq!(ids.lookup(&Bool(true)), 2);
    }

    #[test]
    fn scalar_ids_of_two_lists() {
        use Scalar::*;
        let (e, a) = scalar_ids(
            &[
                Some(Int(1)),
                Option::None,
                Some(Float(1.0)),
                Some(Float(f64::NAN)),
                Some(Str("x")),
            ],
            &[Str("x"), Float(1.0), Float(f64::NAN), Bool(true)],
        );
        assert_eq!(e, [0, UNSCORED, 0, 3, 4]);
        assert_eq!(a, [4, 0, NEVER, NEVER]);
    }

    #[test]
    fn paths_number_nodes_parents_first() {
        let mut paths = Paths::default();
        assert_eq!(paths.node(ROOT, "a"), (0, true));
        assert_eq!(paths.node(0, "b"), (1, true));
        assert_eq!(paths.node(ROOT, "b"), (2, true));
        assert_eq!(paths.node(0, "b"), (1, false));
        assert_eq!(paths.node(ROOT, "a"), (0, false));
        paths.add_leaf(0, 1, 7);
        paths.add_leaf(1, 2, 8);
        assert_eq!(paths.parents(), [ROOT, 0, ROOT]);
        assert_eq!(
            paths.expected_ids(2),
            [UNSCORED, 7, UNSCORED, UNSCORED, UNSCORED, 8]
        );
        assert_eq!(paths.is_leaf(), [false, true, true]);
    }

    #[test]
    fn scalar_lists_pair_as_multisets() {
        use Scalar::*;
        // expected [1, "$ignore", 1, "a"], actual ["a", 1.0, "b"]
        let m = scalar_list_match(
            &[Some(Int(1)), Option::None, Some(Int(1)), Some(Str("a"))],
            &[Str("a"), Float(1.0), Str("b")],
        );
        assert_eq!(m.pairs, [(0, 1, 1.0), (3, 0, 1.0)]);
        assert_eq!(m.wildcards, 1); // "b" fills the $ignore
        assert_eq!((m.precision, m.recall), (1.0, 0.75));
        assert_eq!(m.f1, 2.0 * 0.75 / 1.75);
        // fewer actual items than wildcards: only the unpaired ones fill them
        let m = scalar_list_match(&[Option::None, Option::None], &[Int(1)]);
        assert_eq!(
            (m.pairs.len(), m.wildcards, m.recall, m.precision),
            (0, 1, 0.5, 1.0)
        );
    }

    #[test]
    fn record_lists_pair_greedily() {
        // expected items: [record 0, $ignore, record 1, record without paths]; two paths
        let e = [5, 6, 5, UNSCORED, UNSCORED, UNSCORED];
        let a = [5, 6, 5, NEVER];
        let m = record_list_match(4, &[0, 2, 3], (&e, &a), 2, 2).unwrap();
        // record 0 scores 1.0 on actual 0 (and 0.5 on actual 1); record 1 takes actual 1
        assert_eq!(m.pairs, [(0, 0, 1.0), (2, 1, 1.0)]);
        assert_eq!(m.wildcards, 0); // no actual item left for the two wildcard slots
        assert_eq!((m.precision, m.recall), (1.0, 0.5));
        let m = record_list_match(1, &[0], (&[5, 6], &[]), 2, 0).unwrap();
        assert_eq!(
            (m.pairs.len(), m.precision, m.recall, m.f1),
            (0, 0.0, 0.0, 0.0)
        );
        assert!(record_list_match(1, &[0], (&[5], &[5, 6]), 2, 1).is_err());
    }

    #[test]
    fn mean_of_scored_leaves() {
        assert_eq!(mean_score(&[]), None);
        assert_eq!(mean_score(&[0.1; 10]), Some(0.1));
        assert_eq!(mean_score(&[1.0, 0.0, 0.5]), Some(0.5));
    }
}
