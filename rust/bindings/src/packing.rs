//! Packing Python strings into the flat batch layout (`uint32` code points + `int64` offsets)
//! without intermediate Python objects: code points are copied straight out of each `str`.
//! Errors name the argument and the item: a non-`str` item is a `TypeError`, a lone surrogate
//! (not a Unicode scalar value) a `ValueError`.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySequence, PyString, PyTuple};
use pyo3::Borrowed;

use crate::parallel::guarded;

/// Code points of `s` appended to `values`; a lone surrogate is a `ValueError` naming `name[k]`.
pub(crate) fn append_code_points(
    py: Python<'_>,
    s: &Bound<'_, PyString>,
    values: &mut Vec<u32>,
    name: &str,
    k: usize,
) -> PyResult<()> {
    // SAFETY: `s` is a live `str`; PyUnicode_GetLength only reads it.
    let len = unsafe { ffi::PyUnicode_GetLength(s.as_ptr()) };
    if len < 0 {
        return Err(PyErr::fetch(py));
    }
    let (start, len) = (values.len(), len as usize);
    if len == 0 {
        return Ok(());
    }
    values.reserve(len);
    // SAFETY: `len` code points fit in the reserved spare capacity; PyUnicode_AsUCS4 writes exactly
    // `len` of them (copy_null = 0: no terminator) or fails, in which case the length is not changed.
    let ok = unsafe {
        let spare = values.as_mut_ptr().add(start) as *mut ffi::Py_UCS4;
        ffi::PyUnicode_AsUCS4(s.as_ptr(), spare, len as ffi::Py_ssize_t, 0)
    };
    if ok.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: the first `start + len` elements are initialised (above).
    unsafe { values.set_len(start + len) };
    let buf = &values[start..];
    // Branch-free scan (vectorises): a surrogate is 0xD800..=0xDFFF, i.e. `c >> 11 == 0x1B`.
    if buf
        .iter()
        .fold(false, |found, &c| found | (c >> 11 == 0x1B))
    {
        let pos = buf.iter().position(|&c| c >> 11 == 0x1B).unwrap_or(0);
        return Err(PyValueError::new_err(format!(
            "{name}[{k}] contains a lone surrogate U+{:04X} at position {pos}; only Unicode scalar values can be scored",
            buf[pos]
        )));
    }
    Ok(())
}

pub(crate) type Packed<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>);

/// How a `str` becomes symbols of the batch layout: code points ([`CodePoints`]) or interned
/// grapheme clusters (`crate::graphemes::Segmenter`). The packing functions below are written
/// once over this trait, so both units validate, name errors and carry joins the same way.
pub(crate) trait Reader {
    /// Append the symbols of `s` to `values` and return its length in code points; a lone
    /// surrogate is a `ValueError` naming `name[k]` (the message of [`append_code_points`]).
    fn append(
        &mut self,
        py: Python<'_>,
        s: &Bound<'_, PyString>,
        values: &mut Vec<u32>,
        name: &str,
        k: usize,
    ) -> PyResult<usize>;

    /// The symbol boundary of code-point boundary `pos` (`0..=len`) of the last appended string.
    fn boundary(&self, pos: usize) -> usize;
}

/// The code-point reader: one symbol per code point, boundaries unchanged.
pub(crate) struct CodePoints;

impl Reader for CodePoints {
    fn append(
        &mut self,
        py: Python<'_>,
        s: &Bound<'_, PyString>,
        values: &mut Vec<u32>,
        name: &str,
        k: usize,
    ) -> PyResult<usize> {
        let start = values.len();
        append_code_points(py, s, values, name, k)?;
        Ok(values.len() - start)
    }

    fn boundary(&self, pos: usize) -> usize {
        pos
    }
}

/// Pack the predictions and golds of `cases`, a list of `(pred, gold, ...)` tuples or lists whose
/// first two items are `str`, into two packed sides. Anything else is a `TypeError` (callers fall
/// back to coercing the items); a lone surrogate is a `ValueError` naming `pred[k]`/`gold[k]`.
#[pyfunction]
pub fn pack_pairs<'py>(
    py: Python<'py>,
    cases: &Bound<'py, PyList>,
) -> PyResult<(Packed<'py>, Packed<'py>)> {
    guarded(|| pack_pairs_with(py, &mut CodePoints, cases))
}

pub(crate) fn pack_pairs_with<'py, R: Reader>(
    py: Python<'py>,
    reader: &mut R,
    cases: &Bound<'py, PyList>,
) -> PyResult<(Packed<'py>, Packed<'py>)> {
    let n = cases.len();
    let mut sides = [
        (Vec::new(), Vec::with_capacity(n + 1)),
        (Vec::new(), Vec::with_capacity(n + 1)),
    ];
    for (values, offsets) in sides.iter_mut() {
        values.reserve(n * 32);
        offsets.push(0i64);
    }
    for (k, case) in cases.iter().enumerate() {
        let case = if case.is_instance_of::<PyTuple>() || case.is_instance_of::<PyList>() {
            case.cast_into::<PySequence>()?
        } else {
            return Err(PyTypeError::new_err(format!(
                "cases[{k}] is not a tuple or list"
            )));
        };
        if case.len()? < 2 {
            return Err(PyTypeError::new_err(format!(
                "cases[{k}] has fewer than two items"
            )));
        }
        for (side, name) in [(0usize, "pred"), (1, "gold")] {
            let item = case.get_item(side)?;
            let Ok(s) = item.cast_into::<PyString>() else {
                return Err(PyTypeError::new_err(format!("{name}[{k}] is not str")));
            };
            let (values, offsets) = &mut sides[side];
            reader.append(py, &s, values, name, k)?;
            offsets.push(values.len() as i64);
        }
    }
    let [(pv, po), (gv, go)] = sides;
    Ok((
        (pv.into_pyarray(py), po.into_pyarray(py)),
        (gv.into_pyarray(py), go.into_pyarray(py)),
    ))
}

/// Pack `texts` (a list or tuple of `str`); `name` is used in error messages.
#[pyfunction]
pub fn pack_texts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Packed<'py>> {
    guarded(|| pack_texts_with(py, &mut CodePoints, texts, name))
}

pub(crate) fn pack_texts_with<'py, R: Reader>(
    py: Python<'py>,
    reader: &mut R,
    texts: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Packed<'py>> {
    if !(texts.is_instance_of::<PyList>() || texts.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a list or tuple of str"
        )));
    }
    let seq = texts.cast::<PySequence>()?;
    let n = seq.len()?;
    let mut values = Vec::new();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    for k in 0..n {
        let item = seq.get_item(k)?;
        let Ok(s) = item.cast_into::<PyString>() else {
            let type_name = seq.get_item(k)?.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "{name}[{k}] must be str, got {type_name}"
            )));
        };
        reader.append(py, &s, &mut values, name, k)?;
        offsets.push(values.len() as i64);
    }
    Ok((values.into_pyarray(py), offsets.into_pyarray(py)))
}

pub(crate) type PackedJoined<'py> = (
    Packed<'py>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// Pack texts with join positions: each item of `items` (a list) is a `str` (no joins) or an
/// object with a `str` attribute `text` and a tuple/list of `int` attribute `joins` (a
/// `scorekit.text.JoinedText`). Returns (values, offsets, join values, join offsets); a join
/// outside `0..=len(text)` is a `ValueError`, anything else malformed a `TypeError`.
#[pyfunction]
pub fn pack_joined<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyList>,
    name: &str,
    joins_name: &str,
) -> PyResult<PackedJoined<'py>> {
    guarded(|| pack_joined_with(py, &mut CodePoints, items, name, joins_name))
}

/// [`pack_joined`] with any reader: joins are given (and checked) in code points, and stored as
/// the reader's symbol boundaries ([`Reader::boundary`]).
pub(crate) fn pack_joined_with<'py, R: Reader>(
    py: Python<'py>,
    reader: &mut R,
    items: &Bound<'py, PyList>,
    name: &str,
    joins_name: &str,
) -> PyResult<PackedJoined<'py>> {
    let n = items.len();
    let mut values = Vec::with_capacity(n * 32);
    let mut offsets = Vec::with_capacity(n + 1);
    let mut joins = Vec::new();
    let mut join_offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    join_offsets.push(0i64);
    let text_attr = pyo3::intern!(py, "text");
    let joins_attr = pyo3::intern!(py, "joins");
    for (k, item) in items.iter().enumerate() {
        let text = if item.is_instance_of::<PyString>() {
            item.clone()
        } else {
            item.getattr(text_attr)?
        };
        let Ok(s) = text.cast_into::<PyString>() else {
            let type_name = item.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "{name}[{k}] must be str or JoinedText, got {type_name}"
            )));
        };
        let len = reader.append(py, &s, &mut values, name, k)? as i64;
        offsets.push(values.len() as i64);
        if !item.is_instance_of::<PyString>() {
            let own = item.getattr(joins_attr)?;
            let bad =
                || PyTypeError::new_err(format!("{joins_name}[{k}] must hold integer positions"));
            let mut push = |p: Bound<'py, PyAny>| -> PyResult<()> {
                if p.is_instance_of::<pyo3::types::PyBool>() {
                    return Err(bad());
                }
                let pos: i64 = p.extract().map_err(|_| bad())?;
                if pos < 0 || pos > len {
                    return Err(PyValueError::new_err(format!(
                        "{joins_name}[{k}] position {pos} is outside 0..{len}"
                    )));
                }
                joins.push(reader.boundary(pos as usize) as i64);
                Ok(())
            };
            if let Ok(tuple) = own.cast::<PyTuple>() {
                for p in tuple.iter() {
                    push(p)?;
                }
            } else {
                for p in own.try_iter().map_err(|_| bad())? {
                    push(p?)?;
                }
            }
        }
        join_offsets.push(joins.len() as i64);
    }
    Ok((
        (values.into_pyarray(py), offsets.into_pyarray(py)),
        joins.into_pyarray(py),
        join_offsets.into_pyarray(py),
    ))
}

/// Borrowed items `0..len` of `values` when it is exactly a `list` or a `tuple`.
fn exact_items<'a, 'py>(
    values: &'a Bound<'py, PyAny>,
) -> Option<(Borrowed<'a, 'py, PyAny>, usize, bool)> {
    if let Ok(list) = values.cast_exact::<PyList>() {
        return Some((list.as_any().as_borrowed(), list.len(), false));
    }
    if let Ok(tuple) = values.cast_exact::<PyTuple>() {
        return Some((tuple.as_any().as_borrowed(), tuple.len(), true));
    }
    None
}

/// Item `k` (in range) of an exact list or tuple, borrowed.
///
/// # Safety
/// `sequence` is an exact list (`tuple` false) or tuple of more than `k` items, and the GIL is
/// held; nothing may change the list while the reference is used.
unsafe fn item_ptr(
    sequence: &Borrowed<'_, '_, PyAny>,
    k: usize,
    tuple: bool,
) -> *mut ffi::PyObject {
    if tuple {
        ffi::PyTuple_GetItem(sequence.as_ptr(), k as ffi::Py_ssize_t)
    } else {
        ffi::PyList_GetItem(sequence.as_ptr(), k as ffi::Py_ssize_t)
    }
}

/// The items of `values` as float64, as NumPy converts them, when `values` is exactly a `list` or
/// `tuple` whose every item is exactly a `float`, a `bool`, or an `int` of at most 64 bits; else
/// `None` (the caller converts with NumPy and reports what it must). No Python code runs.
#[pyfunction]
pub fn read_floats<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
    guarded(|| Ok(floats_in(values).map(|out| out.into_pyarray(py))))
}

/// The items [`read_floats`] reads, as a `Vec`, or `None`.
pub fn floats_in(values: &Bound<'_, PyAny>) -> Option<Vec<f64>> {
    let (sequence, len, tuple) = exact_items(values)?;
    let mut out = Vec::with_capacity(len);
    for k in 0..len {
        // SAFETY: `k < len` items of an exact list or tuple; the GIL is held and no Python code
        // runs between reading the length and the items. Type checks precede each conversion,
        // and a failed int conversion's exception is cleared.
        let value = unsafe {
            let item = item_ptr(&sequence, k, tuple);
            let kind = ffi::Py_TYPE(item);
            if kind == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
                ffi::PyFloat_AsDouble(item)
            } else if item == ffi::Py_True() {
                1.0
            } else if item == ffi::Py_False() {
                0.0
            } else if kind == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
                let mut overflow = 0;
                let n = ffi::PyLong_AsLongLongAndOverflow(item, &mut overflow);
                if overflow != 0 || (n == -1 && !ffi::PyErr_Occurred().is_null()) {
                    ffi::PyErr_Clear();
                    return None;
                }
                n as f64
            } else {
                return None;
            }
        };
        out.push(value);
    }
    Some(out)
}

/// The items of `values` as a bool array when `values` is exactly a `list` or `tuple` of `True`
/// and `False` only; else `None` (the caller's NumPy path reads 0/1 numbers and reports the rest).
#[pyfunction]
pub fn read_bools<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyArray1<bool>>>> {
    guarded(|| Ok(bools_in(values).map(|out| out.into_pyarray(py))))
}

/// The items [`read_bools`] reads, as a `Vec`, or `None`.
pub fn bools_in(values: &Bound<'_, PyAny>) -> Option<Vec<bool>> {
    let (sequence, len, tuple) = exact_items(values)?;
    // SAFETY: the singletons are live for the interpreter's life.
    let (yes, no) = unsafe { (ffi::Py_True(), ffi::Py_False()) };
    let mut out = Vec::with_capacity(len);
    for k in 0..len {
        // SAFETY: as in `floats_in`; only the pointer is compared.
        let item = unsafe { item_ptr(&sequence, k, tuple) };
        if item == yes {
            out.push(true);
        } else if item == no {
            out.push(false);
        } else {
            return None;
        }
    }
    Some(out)
}

/// The value of `item` when its type is exactly `float` (read through `PyFloat_AsDouble`, the API
/// call: never from the object's memory layout), else `None`.
///
/// # Safety
/// `item` is a live object and the GIL is held.
pub(crate) unsafe fn exact_float(item: *mut ffi::PyObject) -> Option<f64> {
    (ffi::Py_TYPE(item) == std::ptr::addr_of_mut!(ffi::PyFloat_Type))
        .then(|| ffi::PyFloat_AsDouble(item))
}

/// The items of `values` when it is exactly a `list` or `tuple` whose every item is exactly a
/// `float` (NaN and ±inf included); else `None`. No Python code runs.
pub(crate) fn read_exact_floats(values: &Bound<'_, PyAny>) -> Option<Vec<f64>> {
    let (sequence, len, tuple) = exact_items(values)?;
    let mut out = Vec::with_capacity(len);
    for k in 0..len {
        // SAFETY: as in `read_floats`: `k < len` items of an exact list or tuple, the GIL held.
        out.push(unsafe { exact_float(item_ptr(&sequence, k, tuple)) }?);
    }
    Some(out)
}

/// Calibration rows: `probs` read by [`read_exact_floats`], `correct` by [`bools_in`], when
/// both are read and as long; else `None`.
pub(crate) fn read_exact_rows(
    probs: &Bound<'_, PyAny>,
    correct: &Bound<'_, PyAny>,
) -> Option<(Vec<f64>, Vec<bool>)> {
    let (p, c) = (read_exact_floats(probs)?, bools_in(correct)?);
    (p.len() == c.len()).then_some((p, c))
}

/// Whether `values` is exactly a `list` or `tuple` whose every item is exactly a `float` (NaN and
/// ±inf included): a check that reads no value. No Python code runs.
#[pyfunction]
pub fn exact_floats(values: &Bound<'_, PyAny>) -> bool {
    let Some((sequence, len, tuple)) = exact_items(values) else {
        return false;
    };
    let float = std::ptr::addr_of_mut!(ffi::PyFloat_Type);
    // SAFETY: as in `read_floats`: `k < len` items of an exact list or tuple, the GIL held; only
    // their types are read.
    (0..len).all(|k| unsafe { ffi::Py_TYPE(item_ptr(&sequence, k, tuple)) } == float)
}

/// The mean of the values of `probs` (with `minimum`, the first smallest, as `min` picks it) when
/// `probs` is exactly a non-empty `dict` whose every value is exactly a `float` in `[0, 1]` (so
/// not NaN); the mean is the values added left to right onto `0.0`, divided by their count, as
/// `sum(values) / len(values)`. Else `None`: the caller checks each value and names the bad one.
/// No Python code runs.
#[pyfunction]
pub fn fuse_probabilities(probs: &Bound<'_, PyAny>, minimum: bool) -> Option<f64> {
    let dict = probs.cast_exact::<PyDict>().ok()?;
    let count = dict.len();
    if count == 0 {
        return None;
    }
    let (mut pos, mut key, mut value) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    let mut fused = if minimum { f64::INFINITY } else { 0.0 };
    // SAFETY: `dict` is a live exact dict and the GIL is held; PyDict_Next lends its keys and
    // values, and no Python code runs (nothing can change the dict) while they are read.
    while unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) } != 0 {
        // SAFETY: `value` is a live value lent by the dict (above).
        let p = unsafe { exact_float(value) }?;
        if !(0.0..=1.0).contains(&p) {
            return None;
        }
        if !minimum {
            fused += p;
        } else if p < fused {
            fused = p;
        }
    }
    Some(if minimum { fused } else { fused / count as f64 })
}
