//! The compiled reader and scorer of ANLS* answers ([`AnlsBatch`]), whose Python twin is the tree
//! path of `scorekit.metrics.anls` (`_Reader.build`/`collect` and `_Scorer`): it reads a batch of
//! (prediction, gold) answers into the flat arena of `scorekit_kernels::anls` and scores them once
//! Python has computed the similarity of every leaf pair (the normalisation of texts stays in
//! Python). Also `anls_assign`, the list pairing solver, for the tests against its Python twin.
//!
//! The reader takes exact `dict`, `list`, `tuple` (gold only, not empty), `str` (without lone
//! surrogates), `int`, `bool`, `float` and `None`, with dict keys of exact `str`, `int` (64 bits),
//! `bool`, `float` (not NaN) or `None`. An item holding anything else, nesting too deep, or that
//! the Python reader would reject (a tuple in a prediction, an empty tuple) is handed back, whole,
//! to the Python twin, which gives the same value or raises the same error. Only C code that
//! cannot call back into Python runs while reading, so the borrowed objects stay valid.

use std::cell::RefCell;

use foldhash::HashMap as FastMap;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyList, PyString};
use pyo3::{ffi, Borrowed};
use scorekit_kernels::anls::{assign, Arena, Key, Kind, Leaf, ScoreError, Scorer, NULL};
use scorekit_kernels::exact_i64;

use crate::bootstrap::summation;
use crate::parallel::guarded;
use crate::tags::exact_str_bytes;

/// An item the compiled reader leaves to the Python twin.
struct Fallback;

type Step<T> = Result<T, Fallback>;

/// The exact types the reader knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Type {
    Str,
    Int,
    Float,
    List,
    Dict,
    Tuple,
    None,
    Other,
}

fn type_of(object: *mut ffi::PyObject) -> Type {
    use std::ptr::addr_of_mut;
    // SAFETY: `object` is a live object; only its type pointer is read.
    unsafe {
        if object == ffi::Py_None() {
            return Type::None;
        }
        let kind = ffi::Py_TYPE(object);
        if kind == addr_of_mut!(ffi::PyUnicode_Type) {
            Type::Str
        } else if kind == addr_of_mut!(ffi::PyLong_Type) || kind == addr_of_mut!(ffi::PyBool_Type) {
            Type::Int
        } else if kind == addr_of_mut!(ffi::PyFloat_Type) {
            Type::Float
        } else if kind == addr_of_mut!(ffi::PyList_Type) {
            Type::List
        } else if kind == addr_of_mut!(ffi::PyDict_Type) {
            Type::Dict
        } else if kind == addr_of_mut!(ffi::PyTuple_Type) {
            Type::Tuple
        } else {
            Type::Other
        }
    }
}

/// The value of an exact `int` or `bool`; `None` beyond 64 bits.
fn int_value(object: *mut ffi::PyObject) -> Option<i64> {
    let mut overflow = 0;
    // SAFETY: `object` is a live exact int; a failure leaves an exception, which is cleared.
    unsafe {
        let value = ffi::PyLong_AsLongLongAndOverflow(object, &mut overflow);
        if overflow != 0 || (value == -1 && !ffi::PyErr_Occurred().is_null()) {
            ffi::PyErr_Clear();
            return None;
        }
        Some(value)
    }
}

fn float_value(object: *mut ffi::PyObject) -> f64 {
    // SAFETY: `object` is a live exact float: the conversion cannot fail.
    unsafe { ffi::PyFloat_AsDouble(object) }
}

/// Items `0..len` of an exact list or tuple, borrowed.
#[derive(Clone, Copy)]
struct Items<'a, 'py> {
    sequence: Borrowed<'a, 'py, PyAny>,
    tuple: bool,
    len: usize,
}

impl<'a, 'py> Items<'a, 'py> {
    fn of(sequence: Borrowed<'a, 'py, PyAny>) -> Option<Self> {
        let tuple = match type_of(sequence.as_ptr()) {
            Type::List => false,
            Type::Tuple => true,
            _ => return None,
        };
        let len = sequence.len().ok()?;
        Some(Items {
            sequence,
            tuple,
            len,
        })
    }

    /// Item `k < len` (the reader runs no Python code, so the sequence does not shrink while
    /// read; were it to, the item would fall back).
    fn get(self, k: usize) -> Step<Borrowed<'a, 'py, PyAny>> {
        // SAFETY: a live list or tuple; an index out of range returns NULL with an IndexError set,
        // which is cleared; an item returned is borrowed from the sequence.
        unsafe {
            let item = if self.tuple {
                ffi::PyTuple_GetItem(self.sequence.as_ptr(), k as ffi::Py_ssize_t)
            } else {
                ffi::PyList_GetItem(self.sequence.as_ptr(), k as ffi::Py_ssize_t)
            };
            if item.is_null() {
                ffi::PyErr_Clear();
                return Err(Fallback);
            }
            Ok(Borrowed::from_ptr(self.sequence.py(), item))
        }
    }
}

/// Reads answers into an [`Arena`]; lives for one call, while the answers are borrowed.
struct Reader<'a, 'py> {
    py: Python<'py>,
    arena: Arena,
    max_depth: usize,
    /// `str` leaf → its leaf node, by value.
    texts: FastMap<&'a [u8], u32>,
    /// Any other leaf → its leaf node, by identity (the objects are alive during the call).
    objects: FastMap<usize, u32>,
    /// `str` dict key → its id, by value.
    key_texts: FastMap<&'a [u8], u32>,
    /// Raw id → `str(leaf)`.
    raws: Vec<Bound<'py, PyAny>>,
    /// Leaves of kind [`Leaf::Other`], by raw id: compared through Python.
    others: FastMap<u32, Py<PyAny>>,
    /// The children (and keys) of the containers being read.
    stack: Vec<(u32, Key)>,
    /// The objects the maps above know by address or borrow bytes from, kept alive for the call
    /// (even an exception raised and cleared inside the read could run a garbage collection).
    alive: Vec<Bound<'py, PyAny>>,
}

impl<'a, 'py> Reader<'a, 'py> {
    /// A new leaf with raw text `raw`: its node.
    fn new_leaf(&mut self, leaf: Leaf, raw: Bound<'py, PyAny>) -> u32 {
        self.raws.push(raw);
        self.arena.push_leaf(leaf)
    }

    fn text(&mut self, text: Borrowed<'a, 'py, PyAny>) -> Step<u32> {
        let bytes = exact_str_bytes(text).ok_or(Fallback)?;
        if let Some(&node) = self.texts.get(bytes) {
            return Ok(node);
        }
        let node = self.new_leaf(
            Leaf::Text {
                empty: bytes.is_empty(),
            },
            text.to_owned(),
        );
        self.texts.insert(bytes, node);
        Ok(node)
    }

    fn number(&mut self, number: Borrowed<'a, 'py, PyAny>, kind: Type) -> Step<u32> {
        let address = number.as_ptr() as usize;
        if let Some(&node) = self.objects.get(&address) {
            return Ok(node);
        }
        let leaf = match kind {
            Type::Float => Leaf::Float(float_value(number.as_ptr())),
            _ => int_value(number.as_ptr()).map_or(Leaf::Other, Leaf::Int),
        };
        // An int beyond the digit limit of str() fails: the Python reader raises its error.
        let raw = number.str().map_err(|_| Fallback)?.into_any();
        let node = self.new_leaf(leaf, raw);
        if leaf == Leaf::Other {
            self.others
                .insert(self.raws.len() as u32 - 1, number.to_owned().unbind());
        }
        self.objects.insert(address, node);
        self.alive.push(number.to_owned());
        Ok(node)
    }

    fn key(&mut self, key: Borrowed<'a, 'py, PyAny>) -> Step<Key> {
        Ok(match type_of(key.as_ptr()) {
            Type::Str => {
                let bytes = exact_str_bytes(key).ok_or(Fallback)?;
                let next = self.key_texts.len() as u32;
                let id = *self.key_texts.entry(bytes).or_insert(next);
                if id == next {
                    self.alive.push(key.to_owned());
                }
                Key::Text(id)
            }
            Type::Int => Key::Int(int_value(key.as_ptr()).ok_or(Fallback)?),
            Type::Float => {
                let f = float_value(key.as_ptr());
                if f.is_nan() {
                    return Err(Fallback); // a key equal only to itself
                }
                match exact_i64(f) {
                    Some(n) => Key::Int(n), // equal to the int of its value (-0.0 included)
                    None => Key::Float(f.to_bits()),
                }
            }
            Type::None => Key::Null,
            _ => return Err(Fallback), // its __hash__ / __eq__ could run Python code
        })
    }

    /// The node of one answer (`depth`: the containers around it).
    fn read(&mut self, object: Borrowed<'a, 'py, PyAny>, gold: bool, depth: usize) -> Step<u32> {
        let kind = type_of(object.as_ptr());
        match kind {
            Type::Str => return self.text(object),
            Type::Int | Type::Float => return self.number(object, kind),
            Type::None => return Ok(NULL),
            Type::Other => return Err(Fallback),
            Type::List | Type::Dict | Type::Tuple => {}
        }
        if depth >= self.max_depth || (kind == Type::Tuple && !gold) {
            return Err(Fallback);
        }
        let mark = self.stack.len();
        if kind == Type::Dict {
            let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: a live dict, not changed while read (no Python code runs); its entries are
            // borrowed from it.
            while unsafe { ffi::PyDict_Next(object.as_ptr(), &mut pos, &mut key, &mut value) } != 0
            {
                // SAFETY: PyDict_Next returned non-null borrowed references to an entry of
                // `object`, which stays alive and unchanged while the batch is read.
                let (key, value) = unsafe {
                    (
                        Borrowed::from_ptr(self.py, key),
                        Borrowed::from_ptr(self.py, value),
                    )
                };
                let key = self.key(key)?;
                let node = self.read(value, gold, depth + 1)?;
                self.stack.push((node, key));
            }
        } else {
            let items = Items::of(object).ok_or(Fallback)?;
            if kind == Type::Tuple && items.len == 0 {
                return Err(Fallback);
            }
            for k in 0..items.len {
                let node = self.read(items.get(k)?, gold, depth + 1)?;
                self.stack.push((node, Key::Null));
            }
        }
        Ok(self.container(kind, mark))
    }

    /// The container whose children are on the stack from `mark` on.
    fn container(&mut self, kind: Type, mark: usize) -> u32 {
        let kind = match kind {
            Type::List => Kind::List,
            Type::Dict => Kind::Dict,
            _ => Kind::Tuple,
        };
        self.arena.push_container(kind, self.stack.drain(mark..))
    }

    /// The gold node of item `(pred, gold)`: the gold as read, or, in the reference's
    /// compatibility mode (a `str` prediction against a list of `str`), the list read as a tuple
    /// (`Ok(None)` when the Python reader is needed).
    fn gold(
        &mut self,
        pred: Borrowed<'a, 'py, PyAny>,
        gold: Borrowed<'a, 'py, PyAny>,
    ) -> Step<(u32, bool)> {
        let (p_kind, g_kind) = (type_of(pred.as_ptr()), type_of(gold.as_ptr()));
        if p_kind == Type::Str && g_kind == Type::List {
            let items = Items::of(gold).ok_or(Fallback)?;
            let mut all_str = true;
            for k in 0..items.len {
                all_str = all_str && items.get(k)?.is_instance_of::<PyString>();
            }
            if all_str {
                let mark = self.stack.len();
                for k in 0..items.len {
                    let node = self.text(items.get(k)?)?; // a str subclass falls back
                    self.stack.push((node, Key::Null));
                }
                if items.len == 0 {
                    return Err(Fallback); // the Python reader raises its error
                }
                return Ok((self.container(Type::Tuple, mark), true));
            }
        }
        if p_kind == Type::List && g_kind == Type::List {
            let cells = (gold.len().map_err(|_| Fallback)? as u64)
                * (pred.len().map_err(|_| Fallback)? as u64);
            if cells > self.arena.max_cells {
                return Err(Fallback); // the Python reader raises its error, naming the item
            }
        }
        Ok((self.read(gold, true, 0)?, false))
    }
}

/// `(values, error)` of [`AnlsBatch::score`].
type Scores<'py> = (Bound<'py, PyArray1<f64>>, Option<(usize, u64, u64)>);

/// A batch of (prediction, gold) answers read for scoring (see the module documentation).
#[pyclass(module = "scorekit._core", unsendable)]
pub struct AnlsBatch {
    arena: Arena,
    /// Batch index of each item of the arena.
    item_of: Vec<usize>,
    n: usize,
    raws: Py<PyList>,
    others: FastMap<u32, Py<PyAny>>,
    fallback: Py<PyList>,
    compat: usize,
}

#[pymethods]
impl AnlsBatch {
    /// Read `preds` and `golds` (lists or tuples of the same length). Items left to the Python
    /// twin are listed in `fallback` (all of them when a side is not an exact list or tuple).
    #[new]
    fn new<'py>(
        py: Python<'py>,
        preds: &Bound<'py, PyAny>,
        golds: &Bound<'py, PyAny>,
        max_depth: usize,
        max_cells: u64,
    ) -> PyResult<Self> {
        guarded(|| {
            let n = golds.len()?;
            if preds.len()? != n {
                return Err(PyValueError::new_err("preds and golds differ in length"));
            }
            let mut reader = Reader {
                py,
                arena: Arena::new(max_cells),
                max_depth,
                texts: FastMap::default(),
                objects: FastMap::default(),
                key_texts: FastMap::default(),
                raws: Vec::new(),
                others: FastMap::default(),
                stack: Vec::new(),
                alive: Vec::new(),
            };
            let mut item_of = Vec::with_capacity(n);
            let mut fallback = Vec::new();
            let mut compat = 0;
            match (
                Items::of(preds.as_borrowed()),
                Items::of(golds.as_borrowed()),
            ) {
                (Some(preds), Some(golds)) => {
                    for k in 0..n {
                        let read = (|| {
                            let (pred, gold) = (preds.get(k)?, golds.get(k)?);
                            let (g, compatible) = reader.gold(pred, gold)?;
                            Ok((g, reader.read(pred, false, 0)?, compatible))
                        })();
                        match read {
                            Ok((g, p, compatible)) => {
                                reader.arena.add_item(g, p);
                                item_of.push(k);
                                compat += usize::from(compatible);
                            }
                            Err(Fallback) => {
                                reader.stack.clear();
                                fallback.push(k);
                            }
                        }
                    }
                }
                _ => fallback.extend(0..n),
            }
            Ok(AnlsBatch {
                arena: reader.arena,
                item_of,
                n,
                raws: PyList::new(py, reader.raws)?.unbind(),
                others: reader.others,
                fallback: PyList::new(py, fallback)?.unbind(),
                compat,
            })
        })
    }

    /// Raw id → `str(leaf)`: the texts whose normalised forms the similarities compare.
    #[getter]
    fn raws(&self, py: Python<'_>) -> Py<PyList> {
        self.raws.clone_ref(py)
    }

    /// The batch indices of the items left to the Python twin, in order.
    #[getter]
    fn fallback(&self, py: Python<'_>) -> Py<PyList> {
        self.fallback.clone_ref(py)
    }

    /// How many items the reference's compatibility mode read (a `str` against a list of `str`).
    #[getter]
    fn compat(&self) -> usize {
        self.compat
    }

    /// `(gold raw ids, predicted raw ids)` (`int64`) of the leaf pairs the scores compare.
    fn pairs<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let wide = |ids: &[u32]| {
            ids.iter()
                .map(|&id| i64::from(id))
                .collect::<Vec<_>>()
                .into_pyarray(py)
        };
        (wide(&self.arena.left), wide(&self.arena.right))
    }

    /// The ANLS* of every item, given `sims` (the thresholded similarity of each leaf pair of
    /// [`pairs`](Self::pairs)) and `same` (that of two equal texts): `(values float64[n], error)`,
    /// NaN for the items left to Python. Scoring stops at the first item holding a list
    /// comparison beyond `max_cells`: `error` is then `(item, gold items, predicted items)` and
    /// the later values are NaN; otherwise `None`. `compensated`: this interpreter's `sum` of
    /// floats is compensated (CPython >= 3.12).
    fn score<'py>(
        &self,
        py: Python<'py>,
        sims: PyReadonlyArray1<'py, f64>,
        same: f64,
        compensated: bool,
    ) -> PyResult<Scores<'py>> {
        guarded(|| {
            let sims = sims.as_slice()?;
            if sims.len() != self.arena.left.len() {
                return Err(PyValueError::new_err(
                    "one similarity per leaf pair expected",
                ));
            }
            let summation = summation(compensated);
            let failure: RefCell<Option<PyErr>> = RefCell::new(None);
            let equal_others = |a: u32, b: u32| -> Option<bool> {
                let result = self
                    .leaf_object(py, a)
                    .and_then(|x| x.eq(self.leaf_object(py, b)?));
                result.map_err(|err| *failure.borrow_mut() = Some(err)).ok()
            };
            let mut scorer = Scorer::new(&self.arena, sims, same, summation, equal_others);
            let mut values = vec![f64::NAN; self.n];
            let mut error = None;
            for (a, &k) in self.item_of.iter().enumerate() {
                match scorer.score(a) {
                    Ok(value) => values[k] = value,
                    Err(ScoreError::Cells { gold, pred, .. }) => {
                        error = Some((k, gold, pred));
                        break;
                    }
                    Err(ScoreError::Compare { .. }) => {
                        return Err(failure
                            .take()
                            .unwrap_or_else(|| PyValueError::new_err("comparison failed")));
                    }
                    Err(ScoreError::Inconsistent) => {
                        return Err(PyValueError::new_err(
                            "the similarities do not fit the batch",
                        ));
                    }
                }
            }
            Ok((values.into_pyarray(py), error))
        })
    }
}

impl AnlsBatch {
    /// A Python object equal to the leaf with raw id `raw` (a number).
    fn leaf_object<'py>(&self, py: Python<'py>, raw: u32) -> PyResult<Bound<'py, PyAny>> {
        match self.arena.leaves[raw as usize] {
            Leaf::Int(value) => Ok(value.into_pyobject(py)?.into_any()),
            Leaf::Float(value) => Ok(PyFloat::new(py, value).into_any()),
            _ => self
                .others
                .get(&raw)
                .map(|object| object.bind(py).clone())
                .ok_or_else(|| PyValueError::new_err("not a number leaf")),
        }
    }
}

/// Minimum-cost pairing of the rows and columns of `costs` (float64, 2-D): `(row, column)` pairs
/// sorted by row, ties broken as `scorekit.metrics.anls.assign` (its twin) breaks them.
#[pyfunction]
fn anls_assign(costs: PyReadonlyArray2<'_, f64>) -> PyResult<Vec<(usize, usize)>> {
    guarded(|| {
        let costs = costs.as_array();
        let (n_rows, n_cols) = costs.dim();
        let flat: Vec<f64> = costs.iter().copied().collect();
        Ok(assign(&flat, n_rows, n_cols))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AnlsBatch>()?;
    m.add_function(wrap_pyfunction!(anls_assign, m)?)?;
    Ok(())
}
