//! Bindings of the `records` kernel: reading two lists of records (Python dicts) into value-id
//! rows, then the item score matrix and greedy pairing (`scorekit._kernels.cases`). Equality,
//! value ids and the expected leaf paths are the kernel's (`record_values`); this module reads
//! the Python values into them.
//!
//! The reader handles the common shape only and answers `None` for anything else, which the
//! caller then scores with the general (Python) rules: expected records must be plain dicts with
//! `str` keys whose leaves are `None`, `bool`, `int` (64-bit), `float`, `str` or `"$ignore"`
//! (nested plain dicts allowed); actual records may be anything whose walk meets only plain dicts,
//! those scalars, and containers (which equal no scalar). Equality of ids is the JSON equality of
//! docs/cases.md: booleans apart from numbers, `1 == 1.0`, NaN equal to nothing.

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple};
use scorekit_kernels::record_values::{Paths, Scalar, ValueIds, NEVER, ROOT};
use scorekit_kernels::records;

use crate::parallel::guarded;

/// Nesting below which expected records are read here (deeper ones take the general path).
const MAX_DEPTH: usize = 64;
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

/// The expected side: the kernel's path tree and, per node, its key as a Python string (to look
/// the node up in the actual records).
struct ExpectedPaths<'py> {
    paths: Paths,
    keys: Vec<Bound<'py, PyString>>,
}

impl<'py> ExpectedPaths<'py> {
    /// Read one expected record (a dict at `parent`); false if it is not of the supported shape.
    fn read(
        &mut self,
        record: usize,
        parent: usize,
        d: &Bound<'py, PyDict>,
        ids: &mut ValueIds,
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
            let Ok(text) = key.to_str() else {
                return false;
            };
            let (node, new) = self.paths.node(parent, text);
            if new {
                self.keys.push(key.clone());
            }
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
                    self.paths.add_leaf(record, node, id);
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
    let mut ids = ValueIds::default();
    let mut paths = ExpectedPaths {
        paths: Paths::default(),
        keys: Vec::new(),
    };
    for (r, item) in expected.iter().enumerate() {
        let Ok(d) = item.cast_exact::<PyDict>() else {
            return Ok(None);
        };
        if !paths.read(r, ROOT, d, &mut ids, 0) {
            return Ok(None);
        }
    }
    let p = paths.paths.len();
    let e = paths.paths.expected_ids(expected.len());
    let is_leaf = paths.paths.is_leaf();
    let mut a = vec![NEVER; actual.len() * p];
    let mut values: Vec<Option<Bound<'py, PyAny>>> = Vec::with_capacity(p);
    for (i, item) in actual.iter().enumerate() {
        values.clear();
        for (&parent, key) in paths.paths.parents().iter().zip(&paths.keys) {
            let source = if parent == ROOT {
                Some(item)
            } else {
                values[parent].as_ref()
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
                None => ids.lookup(&Scalar::None), // missing: compared with None
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
