//! Bindings of the `records` kernel: reading two lists of records (Python dicts) into value-id
//! rows, then the item score matrix and greedy pairing (`scorekit._kernels.cases`).
//!
//! The reader handles the common shape only and answers `None` for anything else, which the
//! caller then scores with the general (Python) rules: expected records must be plain dicts with
//! `str` keys whose leaves are `None`, `bool`, `int` (64-bit), `float`, `str` or `"$ignore"`
//! (nested plain dicts allowed); actual records may be anything whose walk meets only plain dicts,
//! those scalars, and containers (which equal no scalar). Equality of ids is the JSON equality of
//! docs/cases.md: booleans apart from numbers, `1 == 1.0`, NaN equal to nothing.

use foldhash::HashMap as FastMap;
use hashbrown::HashTable;

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};
use scorekit_kernels::{exact_i64, records};

use crate::parallel::guarded;

/// Nesting below which expected records are read here (deeper ones take the general path).
const MAX_DEPTH: usize = 64;
/// The id of a value that equals nothing (a container, NaN).
pub(crate) const NEVER: i64 = -2;
/// An expected path the record does not score.
pub(crate) const UNSCORED: i64 = -1;

/// Value ids: equal values share one id.
#[derive(Default)]
pub(crate) struct Interner {
    strings: FastMap<String, i64>,
    ints: FastMap<i64, i64>,
    floats: FastMap<u64, i64>,
    next: i64,
}

/// A scalar leaf, borrowed.
pub(crate) enum Scalar<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

/// What a leaf value is: a scalar, a container (equal to no scalar), or unsupported here.
pub(crate) enum Leaf<'a> {
    Scalar(Scalar<'a>),
    Container,
    Unsupported,
}

pub(crate) fn classify<'a>(v: &'a Bound<'_, PyAny>) -> Leaf<'a> {
    if v.is_none() {
        return Leaf::Scalar(Scalar::None);
    }
    if let Ok(s) = v.cast_exact::<PyString>() {
        return match s.to_str() {
            Ok(text) => Leaf::Scalar(Scalar::Str(text)),
            Err(_) => Leaf::Unsupported, // lone surrogates
        };
    }
    if let Ok(b) = v.cast_exact::<PyBool>() {
        return Leaf::Scalar(Scalar::Bool(b.is_true()));
    }
    if let Ok(i) = v.cast_exact::<PyInt>() {
        return match i.extract::<i64>() {
            Ok(x) => Leaf::Scalar(Scalar::Int(x)),
            Err(_) => Leaf::Unsupported,
        };
    }
    if let Ok(f) = v.cast_exact::<PyFloat>() {
        return Leaf::Scalar(Scalar::Float(f.value()));
    }
    if v.is_instance_of::<PyDict>()
        || v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || v.is_instance_of::<PySet>()
        || v.is_instance_of::<PyFrozenSet>()
    {
        return Leaf::Container;
    }
    Leaf::Unsupported
}

/// What a scalar is equal by: equal keys are equal values (`1 == 1.0`, booleans apart from
/// numbers); NaN has no key, it equals nothing. The interner gives equal keys one id.
#[derive(PartialEq, Eq, Hash)]
enum Key<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(&'a str),
}

impl<'a> Scalar<'a> {
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

    /// Whether two scalars are equal (their ids would be), without interning them.
    pub(crate) fn equals(&self, other: &Scalar<'_>) -> bool {
        self.key().is_some_and(|k| other.key() == Some(k))
    }
}

/// Value ids of the items of two scalar lists, equal values sharing one: an expected item that
/// is `None` (not scored) has `UNSCORED`, NaN an id of its own, an actual value equal to no
/// expected one `NEVER`. The strings are borrowed, not copied (a list's own interner).
pub(crate) fn scalar_ids(
    expected: &[Option<Scalar<'_>>],
    actual: &[Scalar<'_>],
) -> (Vec<i64>, Vec<i64>) {
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

impl Interner {
    fn fresh(&mut self) -> i64 {
        self.next += 1;
        self.next - 1
    }

    /// The id of an expected value (new values get new ids; NaN always a new one).
    pub(crate) fn intern(&mut self, s: &Scalar<'_>) -> i64 {
        match s.key() {
            None => self.fresh(),
            // ids 0..3 are reserved for None, False, True (see `new`)
            Some(Key::None) => 0,
            Some(Key::Bool(b)) => 1 + b as i64,
            Some(Key::Int(x)) => self.intern_int(x),
            Some(Key::Float(bits)) => {
                if let Some(&id) = self.floats.get(&bits) {
                    return id;
                }
                let id = self.fresh();
                self.floats.insert(bits, id);
                id
            }
            Some(Key::Str(t)) => {
                if let Some(&id) = self.strings.get(t) {
                    return id;
                }
                let id = self.fresh();
                self.strings.insert(t.to_owned(), id);
                id
            }
        }
    }

    fn intern_int(&mut self, x: i64) -> i64 {
        if let Some(&id) = self.ints.get(&x) {
            return id;
        }
        let id = self.fresh();
        self.ints.insert(x, id);
        id
    }

    /// The id of an actual value: an expected value's id, or `NEVER`.
    pub(crate) fn lookup(&self, s: &Scalar<'_>) -> i64 {
        match s.key() {
            None => NEVER,
            Some(Key::None) => 0,
            Some(Key::Bool(b)) => 1 + b as i64,
            Some(Key::Int(x)) => self.ints.get(&x).copied().unwrap_or(NEVER),
            Some(Key::Float(bits)) => self.floats.get(&bits).copied().unwrap_or(NEVER),
            Some(Key::Str(t)) => self.strings.get(t).copied().unwrap_or(NEVER),
        }
    }

    pub(crate) fn new() -> Self {
        Interner {
            next: 3,
            ..Default::default()
        }
    }
}

/// The expected side: a tree of path nodes (a node is a key under its parent node) and, per
/// record, the id of each scored leaf.
struct Paths<'py> {
    /// (parent node or usize::MAX for the record itself, key) of every node, parents first.
    nodes: Vec<(usize, Bound<'py, PyString>)>,
    texts: Vec<String>,
    index: HashTable<usize>,
    /// (record, node, id) of every scored leaf.
    leaves: Vec<(usize, usize, i64)>,
}

fn node_hash(parent: usize, text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one((parent, text))
}

impl<'py> Paths<'py> {
    fn node(&mut self, parent: usize, key: &Bound<'py, PyString>, text: &str) -> usize {
        let hash = node_hash(parent, text);
        let (nodes, texts) = (&self.nodes, &self.texts);
        if let Some(&n) = self
            .index
            .find(hash, |&n| nodes[n].0 == parent && texts[n] == text)
        {
            return n;
        }
        let n = self.nodes.len();
        self.nodes.push((parent, key.clone()));
        self.texts.push(text.to_owned());
        let (nodes, texts) = (&self.nodes, &self.texts);
        self.index
            .insert_unique(hash, n, |&m| node_hash(nodes[m].0, &texts[m]));
        n
    }

    /// Read one expected record (a dict at `parent`); false if it is not of the supported shape.
    fn read(
        &mut self,
        record: usize,
        parent: usize,
        d: &Bound<'py, PyDict>,
        ids: &mut Interner,
        depth: usize,
    ) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if d.len() == 1 {
            if let Some(v) = d.get_item("$ordered").ok().flatten() {
                if v.is_instance_of::<PyList>() {
                    return false;
                }
            }
        }
        for (key, value) in d.iter() {
            let Ok(key) = key.cast_exact::<PyString>().cloned() else {
                return false;
            };
            let Ok(text) = key.to_str().map(str::to_owned) else {
                return false;
            };
            let node = self.node(parent, &key, &text);
            if let Ok(inner) = value.cast_exact::<PyDict>() {
                if !self.read(record, node, inner, ids, depth + 1) {
                    return false;
                }
                continue;
            }
            match classify(&value) {
                Leaf::Scalar(Scalar::Str("$ignore")) => {}
                Leaf::Scalar(s) => {
                    let id = ids.intern(&s);
                    self.leaves.push((record, node, id));
                }
                _ => return false,
            }
        }
        true
    }
}

/// The items of `list` as they are now.
pub(crate) fn snapshot<'py>(list: &Bound<'py, PyList>) -> Vec<Bound<'py, PyAny>> {
    list.iter().collect()
}

/// What `read_records` gives: the value ids, the number of paths and the two lists' lengths.
pub(crate) struct Read {
    pub(crate) e: Vec<i64>,
    pub(crate) a: Vec<i64>,
    pub(crate) p: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
}

/// Value ids of expected and actual records, or `None` when a record is not of the supported
/// shape: `(expected int64[nE, P], actual int64[nA, P])`. The callers take both lists' items
/// once (see [`snapshot`]), before anything is read, so a hostile `__eq__` (a dict key lookup
/// calls it) that grows or shrinks a list cannot change the lengths the arrays are shaped with.
pub(crate) fn read_records<'py>(
    expected: &[Bound<'py, PyAny>],
    actual: &[Bound<'py, PyAny>],
) -> PyResult<Option<Read>> {
    let mut ids = Interner::new();
    let mut paths = Paths {
        nodes: Vec::new(),
        texts: Vec::new(),
        index: HashTable::new(),
        leaves: Vec::new(),
    };
    for (r, item) in expected.iter().enumerate() {
        let Ok(d) = item.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        if !paths.read(r, usize::MAX, d, &mut ids, 0) {
            return Ok(None);
        }
    }
    let p = paths.nodes.len();
    let mut e = vec![UNSCORED; expected.len() * p];
    for &(r, node, id) in &paths.leaves {
        e[r * p + node] = id;
    }
    let mut is_leaf = vec![false; p];
    for &(_, node, _) in &paths.leaves {
        is_leaf[node] = true;
    }
    let mut a = vec![NEVER; actual.len() * p];
    let mut values: Vec<Option<Bound<'py, PyAny>>> = Vec::with_capacity(p);
    for (i, item) in actual.iter().enumerate() {
        values.clear();
        for (parent, key) in &paths.nodes {
            let source = if *parent == usize::MAX {
                Some(item)
            } else {
                values[*parent].as_ref()
            };
            let value = match source {
                None => None,
                Some(v) => {
                    if let Ok(d) = v.cast_exact::<PyDict>() {
                        d.get_item(key)?
                    } else {
                        match classify(v) {
                            Leaf::Scalar(_) | Leaf::Container if !v.is_instance_of::<PyDict>() => {
                                None
                            }
                            _ => return Ok(None),
                        }
                    }
                }
            };
            values.push(value);
        }
        for (node, value) in values.iter().enumerate() {
            if !is_leaf[node] {
                continue; // no record scores this node as a leaf
            }
            a[i * p + node] = match value {
                None => 0, // missing: compared with None
                Some(v) => match classify(v) {
                    Leaf::Scalar(s) => ids.lookup(&s),
                    Leaf::Container => NEVER,
                    Leaf::Unsupported => return Ok(None),
                },
            };
        }
    }
    let (rows, cols) = (expected.len(), actual.len());
    Ok(Some(Read {
        e,
        a,
        p,
        rows,
        cols,
    }))
}

/// The score matrix and scored-leaf counts of [`cases_record_matrix`].
type MatrixAndCounts<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<i64>>);
/// The expected and actual value ids of [`cases_record_ids`].
type IdArrays<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<i64>>);

/// The item score matrix of two record lists (`float64[len(expected), len(actual)]`) and the
/// number of scored leaves of each expected record (`int64[len(expected)]`; a record with none
/// is a wildcard for the caller), or `None` when a record is not of the shape read here.
#[pyfunction]
fn cases_record_matrix<'py>(
    py: Python<'py>,
    expected: &Bound<'py, PyList>,
    actual: &Bound<'py, PyList>,
) -> PyResult<Option<MatrixAndCounts<'py>>> {
    guarded(|| {
        let Some(Read {
            e,
            a,
            p,
            rows,
            cols,
        }) = read_records(&snapshot(expected), &snapshot(actual))?
        else {
            return Ok(None);
        };
        let counts = records::scored_paths(&e, p, rows);
        let m = records::match_matrix_of(&e, &a, p, (rows, cols)).map_err(err)?;
        Ok(Some((
            m.into_pyarray(py).reshape([rows, cols])?,
            counts.into_pyarray(py),
        )))
    })
}

/// The value ids `read_records` gives (for the tests that compare the two backends' kernels).
#[pyfunction]
fn cases_record_ids<'py>(
    py: Python<'py>,
    expected: &Bound<'py, PyList>,
    actual: &Bound<'py, PyList>,
) -> PyResult<Option<IdArrays<'py>>> {
    guarded(|| {
        let Some(Read {
            e,
            a,
            p,
            rows,
            cols,
        }) = read_records(&snapshot(expected), &snapshot(actual))?
        else {
            return Ok(None);
        };
        Ok(Some((
            e.into_pyarray(py).reshape([rows, p])?,
            a.into_pyarray(py).reshape([cols, p])?,
        )))
    })
}

pub(crate) fn err(e: records::RecordsError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn matrix_slice<'a>(m: &'a PyReadonlyArray2<'_, f64>, name: &str) -> PyResult<&'a [f64]> {
    m.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a C-contiguous 2-D array")))
}

/// Item scores from value ids: `float64[nE, nA]` (`records::match_matrix`).
#[pyfunction]
fn cases_match_matrix<'py>(
    py: Python<'py>,
    expected: PyReadonlyArray2<'py, i64>,
    actual: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    guarded(|| {
        let (rows, p) = (expected.shape()[0], expected.shape()[1]);
        let cols = actual.shape()[0];
        if actual.shape()[1] != p {
            return Err(PyValueError::new_err(format!(
                "expected and actual ids must have the same number of paths, got {p} and {}",
                actual.shape()[1]
            )));
        }
        let e = expected
            .as_slice()
            .map_err(|_| PyValueError::new_err("expected must be C-contiguous"))?;
        let a = actual
            .as_slice()
            .map_err(|_| PyValueError::new_err("actual must be C-contiguous"))?;
        let m = py
            .detach(|| records::match_matrix_of(e, a, p, (rows, cols)))
            .map_err(err)?;
        m.into_pyarray(py).reshape([rows, cols])
    })
}

/// Greedy pairing on a score matrix: the column of every row, or -1 (`records::greedy_pairs`).
#[pyfunction]
fn cases_greedy_pairs<'py>(
    py: Python<'py>,
    matrix: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    guarded(|| {
        let (rows, cols) = (matrix.shape()[0], matrix.shape()[1]);
        let m = matrix_slice(&matrix, "matrix")?;
        let chosen = py
            .detach(|| records::greedy_pairs(m, rows, cols))
            .map_err(err)?;
        Ok(chosen.into_pyarray(py))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cases_record_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(cases_record_ids, m)?)?;
    m.add_function(wrap_pyfunction!(cases_match_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(cases_greedy_pairs, m)?)?;
    Ok(())
}
