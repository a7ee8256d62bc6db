//! Packing Python strings into the flat batch layout (`uint32` code points + `int64` offsets)
//! without intermediate Python objects: code points are copied straight out of each `str`.
//! Errors name the argument and the item: a non-`str` item is a `TypeError`, a lone surrogate
//! (not a Unicode scalar value) a `ValueError`.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySequence, PyString, PyTuple};

/// Pack `texts` (a list or tuple of `str`); `name` is used in error messages.
#[pyfunction]
pub fn pack_texts<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<(Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>)> {
    if !(texts.is_instance_of::<PyList>() || texts.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a list or tuple of str"
        )));
    }
    let seq = texts.cast::<PySequence>()?;
    let n = seq.len()?;
    let mut items = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0i64);
    let mut total: i64 = 0;
    for k in 0..n {
        let item = seq.get_item(k)?;
        let Ok(s) = item.cast_into::<PyString>() else {
            let item = seq.get_item(k)?;
            let type_name = item.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "{name}[{k}] must be str, got {type_name}"
            )));
        };
        // SAFETY: `s` is a live `str` object; PyUnicode_GetLength only reads it.
        let len = unsafe { ffi::PyUnicode_GetLength(s.as_ptr()) };
        if len < 0 {
            return Err(PyErr::fetch(py));
        }
        total += len as i64;
        offsets.push(total);
        items.push(s);
    }
    let mut values = vec![0u32; total as usize];
    for (k, s) in items.iter().enumerate() {
        let (start, end) = (offsets[k] as usize, offsets[k + 1] as usize);
        if start == end {
            continue;
        }
        let buf = &mut values[start..end];
        // SAFETY: `buf` holds exactly `len` code points; copy_null = 0 writes no terminator.
        let ok = unsafe {
            ffi::PyUnicode_AsUCS4(
                s.as_ptr(),
                buf.as_mut_ptr() as *mut ffi::Py_UCS4,
                buf.len() as ffi::Py_ssize_t,
                0,
            )
        };
        if ok.is_null() {
            return Err(PyErr::fetch(py));
        }
        if let Some(pos) = buf.iter().position(|&c| (0xD800..=0xDFFF).contains(&c)) {
            return Err(PyValueError::new_err(format!(
                "{name}[{k}] contains a lone surrogate U+{:04X} at position {pos}; only Unicode scalar values can be scored",
                buf[pos]
            )));
        }
    }
    Ok((values.into_pyarray(py), offsets.into_pyarray(py)))
}
