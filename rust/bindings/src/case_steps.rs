//! Binding of the step walker of `scorekit.cases` (`scoring.score_step` without comparators,
//! greedy matching; `scorekit._kernels.cases.step_score`): reads one step's expected and actual
//! values and builds the step's `StepScore` with its `FieldScore`s, in the order and with the
//! values the Python scorer gives them. Equality, pairing and scores are the kernels'
//! (`record_values`: `Scalar::equals`, `scalar_list_match`, `record_list_match`, `mean_score`);
//! this module walks the Python values and builds the result objects.
//!
//! Read here: expected values that are plain `dict`s with `str` keys, plain `list`s and the
//! scalars of the record reader (`None`, `bool`, 64-bit `int`, `float`, `str`, `"$ignore"`), up
//! to `MAX_DEPTH` levels; actual values of those types (a `dict` or `list` equals no scalar).
//! Lists of scalars pair as multisets, lists of records through the record reader. Anything
//! else — `{"$ordered": ...}`, other types, records the reader leaves to the general scorer —
//! makes the call answer `None`, and Python scores the step by the general rules.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};
use scorekit_kernels::record_values::{mean_score, record_list_match, scalar_list_match, Scalar};

use crate::parallel::guarded;
use crate::records::{classify, err, read_records, snapshot, Leaf, Read};

/// Nesting below which a step is walked here (deeper ones take the general path).
const MAX_DEPTH: usize = 64;
const IGNORE: &str = "$ignore";
/// The scores 0.0 and 1.0, made once per process (most leaves score one of them).
static ZERO_ONE: PyOnceLock<[Py<PyFloat>; 2]> = PyOnceLock::new();

/// An actual value as the walker sees it; `None` from [`actual_kind`] for other types.
enum Actual<'a, 'py> {
    Scalar(Scalar<'a>),
    Dict(&'a Bound<'py, PyDict>),
    List,
}

fn actual_kind<'a, 'py>(v: &'a Bound<'py, PyAny>) -> Option<Actual<'a, 'py>> {
    match classify(v) {
        Leaf::Scalar(s) => Some(Actual::Scalar(s)),
        Leaf::Container => {
            if let Ok(d) = v.cast_exact::<PyDict>() {
                Some(Actual::Dict(d))
            } else if v.cast_exact::<PyList>().is_ok() {
                Some(Actual::List)
            } else {
                None
            }
        }
        Leaf::Unsupported => None,
    }
}

fn as_scalar<'a>(v: &'a Bound<'_, PyAny>) -> Option<Scalar<'a>> {
    match classify(v) {
        Leaf::Scalar(s) => Some(s),
        _ => None,
    }
}

fn is_ignore(v: &Bound<'_, PyAny>) -> bool {
    matches!(classify(v), Leaf::Scalar(Scalar::Str(IGNORE)))
}

/// One walk: the result classes, the leaves made so far and the scores that count.
struct Walker<'a, 'py> {
    py: Python<'py>,
    field_score: &'a Bound<'py, PyAny>,
    list_match: &'a Bound<'py, PyAny>,
    path: String,
    leaves: Vec<Bound<'py, PyAny>>,
    scored: Vec<f64>,
    zero_one: &'a [Py<PyFloat>; 2],
}

/// `Ok(false)`: a value the walker does not read (the caller answers `None`).
type Walked = PyResult<bool>;

impl<'py> Walker<'_, 'py> {
    fn path(&self) -> Bound<'py, PyString> {
        PyString::new(self.py, &self.path)
    }

    /// `value` as a Python float: the shared 0.0 and 1.0 ([`ZERO_ONE`]), or a new one.
    fn float(&self, value: f64) -> Bound<'py, PyFloat> {
        match value {
            1.0 => self.zero_one[1].bind(self.py).clone(),
            0.0 if value.is_sign_positive() => self.zero_one[0].bind(self.py).clone(),
            _ => PyFloat::new(self.py, value),
        }
    }

    /// A scored leaf without a list match: 1.0 when `equal`, else 0.0.
    fn leaf(
        &mut self,
        actual: &Bound<'py, PyAny>,
        expected: &Bound<'py, PyAny>,
        equal: bool,
    ) -> Walked {
        let score = self.float(if equal { 1.0 } else { 0.0 });
        let leaf = self
            .field_score
            .call1((self.path(), actual, expected, score))?;
        self.leaves.push(leaf);
        self.scored.push(if equal { 1.0 } else { 0.0 });
        Ok(true)
    }

    fn score(
        &mut self,
        actual: &Bound<'py, PyAny>,
        expected: &Bound<'py, PyAny>,
        depth: usize,
    ) -> Walked {
        let Some(got) = actual_kind(actual) else {
            return Ok(false);
        };
        if depth > MAX_DEPTH {
            return Ok(false);
        }
        if let Ok(d) = expected.cast_exact::<PyDict>() {
            return self.dict(got, d, depth);
        }
        if let Ok(items) = expected.cast_exact::<PyList>() {
            return self.list(actual, items);
        }
        let equal = match classify(expected) {
            Leaf::Scalar(Scalar::Str(IGNORE)) => {
                let leaf = self.field_score.call1((
                    self.path(),
                    actual,
                    expected,
                    self.float(0.0),
                    intern!(self.py, "ignored"),
                ))?;
                self.leaves.push(leaf);
                return Ok(true);
            }
            Leaf::Scalar(e) => match got {
                Actual::Scalar(a) => e.equals(&a),
                Actual::Dict(_) | Actual::List => false,
            },
            _ => return Ok(false),
        };
        self.leaf(actual, expected, equal)
    }

    fn dict(
        &mut self,
        got: Actual<'_, 'py>,
        expected: &Bound<'py, PyDict>,
        depth: usize,
    ) -> Walked {
        if expected.len() == 1 {
            if let Some(v) = expected.get_item("$ordered")? {
                if v.is_instance_of::<PyList>() {
                    return Ok(false);
                }
            }
        }
        let source = match got {
            Actual::Dict(d) => Some(d.clone()),
            _ => None,
        };
        let none = self.py.None().into_bound(self.py);
        let end = self.path.len();
        for (key, value) in expected.iter() {
            let Ok(key) = key.cast_exact::<PyString>() else {
                return Ok(false);
            };
            let Ok(text) = key.to_str() else {
                return Ok(false);
            };
            self.path.push('.');
            self.path.push_str(text);
            let found = match &source {
                Some(d) => d.get_item(key)?,
                None => None,
            };
            if !self.score(found.as_ref().unwrap_or(&none), &value, depth + 1)? {
                return Ok(false);
            }
            self.path.truncate(end);
        }
        Ok(true)
    }

    /// An unordered list (`scoring._Scorer.unordered` without comparators, greedy matching).
    fn list(&mut self, actual: &Bound<'py, PyAny>, expected: &Bound<'py, PyList>) -> Walked {
        let Ok(actual) = actual.cast_exact::<PyList>().map(snapshot) else {
            return self.leaf(actual, expected.as_any(), false);
        };
        let expected = snapshot(expected);
        let (actual_copy, expected_copy) = (
            PyList::new(self.py, &actual)?,
            PyList::new(self.py, &expected)?,
        );
        if expected.is_empty() {
            return self.leaf(
                actual_copy.as_any(),
                expected_copy.as_any(),
                actual.is_empty(),
            );
        }
        // the expected items as scalars (`None`: "$ignore") and the actual ones, when all are
        let scalars = expected
            .iter()
            .map(|v| match classify(v) {
                Leaf::Scalar(Scalar::Str(IGNORE)) => Some(None),
                Leaf::Scalar(s) => Some(Some(s)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .zip(actual.iter().map(as_scalar).collect::<Option<Vec<_>>>());
        let list_match = if let Some((scored, scalars)) = scalars {
            scalar_list_match(&scored, &scalars)
        } else {
            let plain: Vec<usize> = (0..expected.len())
                .filter(|&j| !is_ignore(&expected[j]))
                .collect();
            let records: Vec<Bound<'py, PyAny>> =
                plain.iter().map(|&j| expected[j].clone()).collect();
            let Some(Read { e, a, p, cols, .. }) = read_records(&records, &actual)? else {
                return Ok(false);
            };
            record_list_match(expected.len(), &plain, (&e, &a), p, cols).map_err(err)?
        };
        let (wildcards, precision, recall, f1) = (
            list_match.wildcards,
            list_match.precision,
            list_match.recall,
            list_match.f1,
        );
        let pairs = PyList::new(
            self.py,
            list_match
                .pairs
                .iter()
                .map(|&(j, i, score)| (j, i, self.float(score))),
        )?;
        let matched = self.list_match.call1((
            intern!(self.py, "greedy"),
            expected.len(),
            actual.len(),
            pairs,
            wildcards,
            precision,
            recall,
            f1,
        ))?;
        let leaf = self.field_score.call1((
            self.path(),
            actual_copy,
            expected_copy,
            recall,
            intern!(self.py, "scored"),
            matched,
        ))?;
        self.leaves.push(leaf);
        self.scored.push(recall);
        Ok(true)
    }
}

/// The `StepScore` of one step (its leaves; its score, the correctly rounded mean of the scored
/// leaves; `"ignored"` with score 0.0 when no leaf is scored), or `None` when the step has a value
/// not read here (module docs). `classes` are the result classes `(StepScore, FieldScore,
/// ListMatch)` it is made of.
#[pyfunction]
fn cases_step_score<'py>(
    py: Python<'py>,
    actual: &Bound<'py, PyAny>,
    expected: &Bound<'py, PyAny>,
    step_name: &Bound<'py, PyString>,
    classes: (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
) -> PyResult<Option<Bound<'py, PyAny>>> {
    guarded(|| {
        let (step_score, field_score, list_match) = classes;
        // an ignored step has one leaf, named for the whole value
        let mut path = String::with_capacity(128);
        path.push_str(if is_ignore(expected) {
            "<value>"
        } else {
            step_name.to_str()?
        });
        let mut walker = Walker {
            py,
            field_score: &field_score,
            list_match: &list_match,
            path,
            leaves: Vec::with_capacity(32),
            scored: Vec::with_capacity(32),
            zero_one: ZERO_ONE.get_or_init(py, || {
                [
                    PyFloat::new(py, 0.0).unbind(),
                    PyFloat::new(py, 1.0).unbind(),
                ]
            }),
        };
        if !walker.score(actual, expected, 0)? {
            return Ok(None);
        }
        let (score, status) = match mean_score(&walker.scored) {
            None => (0.0, intern!(py, "ignored")),
            Some(mean) => (mean, intern!(py, "scored")),
        };
        let leaves = PyList::new(py, walker.leaves)?;
        step_score
            .call1((step_name, score, status, leaves))
            .map(Some)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cases_step_score, m)?)?;
    Ok(())
}
