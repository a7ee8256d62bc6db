//! Bindings of the `rover` kernel: argument conversion and validation, GIL release, and the
//! parallel run of a batch of problems. No alignment or voting logic lives here.
//!
//! Also the compiled reader of plain-text hypotheses ([`rover_read_texts`]), whose Python twin is
//! the unit reader of `scorekit.qe.rover`: it hands each `str` to the kernel's `WordIds`, which
//! splits it as `str.split()` does and interns the words in order of first appearance, so both
//! give the same arrays.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use pyo3::{ffi, Borrowed};
use rayon::prelude::*;
use scorekit_kernels::rover::words::WordIds;
use scorekit_kernels::rover::{self, RoverBatch, Workspace};

use crate::bootstrap::summation;
use crate::objects::prefetch;
use crate::parallel::{guarded, items_per_task, run_sized, slice, SERIAL_BELOW};

type RoverArrays<'py> = (
    Bound<'py, PyArray2<u32>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// ROVER over packed hypotheses: hypothesis `i` is `tokens[offsets[i]:offsets[i+1]]` (token ids
/// below 2**32 - 1, which is the NULL id) with `confs` alongside. `conf_weight` is the effective
/// confidence weight (0.0 for frequency-only voting); `max_tokens=None` disables the guard.
///
/// Returns `(slot_tokens uint32[S, N], slot_confs float64[S, N], winners uint32[S],
/// scores float64[S], vote_shares float64[S])`.
#[pyfunction]
#[pyo3(signature = (tokens, confs, offsets, conf_weight, null_conf, max_tokens=None))]
fn rover_align_vote<'py>(
    py: Python<'py>,
    tokens: PyReadonlyArray1<'py, u32>,
    confs: PyReadonlyArray1<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
    conf_weight: f64,
    null_conf: f64,
    max_tokens: Option<usize>,
) -> PyResult<RoverArrays<'py>> {
    guarded(|| {
        let (t, c, o) = (
            slice(&tokens, "tokens")?,
            slice(&confs, "confs")?,
            slice(&offsets, "offsets")?,
        );
        let r = py
            .detach(|| rover::rover(t, c, o, conf_weight, null_conf, max_tokens))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let (s, n) = (r.n_slots(), r.n_engines);
        let slot_tokens = r.tokens.into_pyarray(py).reshape([s, n])?;
        let slot_confs = r.confs.into_pyarray(py).reshape([s, n])?;
        Ok((
            slot_tokens,
            slot_confs,
            r.winners.into_pyarray(py),
            r.scores.into_pyarray(py),
            r.vote_shares.into_pyarray(py),
        ))
    })
}

/// Mean agreement of many independent ROVER problems: hypothesis `h` is
/// `tokens[engine_offsets[h]:engine_offsets[h+1]]` (with `confs`), item `k` the problem of the
/// hypotheses `item_offsets[k]:item_offsets[k+1]`. `compensated` adds the vote shares as
/// CPython >= 3.12's `sum` does (Neumaier), otherwise left to right. Items run in parallel on
/// `threads` threads (0 = every core); results do not depend on the thread count. An error names
/// the first bad item (`ValueError`).
///
/// Returns `float64[n_items]`.
#[pyfunction]
#[pyo3(signature = (tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf,
                    max_tokens, compensated, threads=0))]
#[allow(clippy::too_many_arguments)]
fn rover_mean_agreements<'py>(
    py: Python<'py>,
    tokens: PyReadonlyArray1<'py, u32>,
    confs: PyReadonlyArray1<'py, f64>,
    engine_offsets: PyReadonlyArray1<'py, i64>,
    item_offsets: PyReadonlyArray1<'py, i64>,
    conf_weight: f64,
    null_conf: f64,
    max_tokens: Option<usize>,
    compensated: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    guarded(|| {
        let t = slice(&tokens, "tokens")?;
        let c = slice(&confs, "confs")?;
        let e = slice(&engine_offsets, "engine_offsets")?;
        let i = slice(&item_offsets, "item_offsets")?;
        let summation = summation(compensated);
        // A batch too small to share out runs on the calling thread (no hand-off to the pool).
        let serial = i.len().saturating_sub(1) < SERIAL_BELOW;
        let means = run_sized(py, threads, serial, || {
            let batch = RoverBatch::new(t, c, e, i, conf_weight, null_conf, max_tokens, summation)?;
            let n = batch.len();
            if n < SERIAL_BELOW {
                let mut ws = Workspace::default();
                return Ok((0..n).map(|k| batch.mean_agreement(k, &mut ws)).collect());
            }
            Ok((0..n)
                .into_par_iter()
                .with_min_len(items_per_task(n, t.len()))
                .map_init(Workspace::default, |ws, k| batch.mean_agreement(k, ws))
                .collect::<Vec<f64>>())
        })?
        .map_err(|e: rover::BatchError| PyValueError::new_err(e.to_string()))?;
        Ok(means.into_pyarray(py))
    })
}

type TextTokens<'py> = (
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Option<Bound<'py, PyList>>,
);

/// How many objects ahead of use the reader asks the CPU to load: the hypotheses of a large batch
/// are small objects scattered over the heap, and their cache misses then overlap instead of
/// following one another.
const PREFETCH_AHEAD: usize = 16;

/// Read items of plain-text hypotheses (a list of lists of `str`): `(token ids uint32,
/// engine_offsets int64, item_offsets int64, vocabulary)` where hypothesis `h` is
/// `ids[engine_offsets[h]:engine_offsets[h+1]]` and item `k` the hypotheses
/// `item_offsets[k]:item_offsets[k+1]`. The words are those `str.split()` finds, interned in order
/// of first appearance over the whole batch; the vocabulary (the word of each id, a `list[str]`)
/// only when `vocab` is true. With `first` (a list as long as `items`), item `k`'s hypotheses are
/// `[first[k], *items[k]]`, read without building that list. `None`, before anything is consumed,
/// when some item is not exactly a `list` or some hypothesis not exactly a `str`, or holds a lone
/// surrogate: the Python reader handles those. The GIL is held throughout, and no Python code runs.
#[pyfunction]
#[pyo3(signature = (items, vocab, first=None))]
fn rover_read_texts<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyList>,
    vocab: bool,
    first: Option<&Bound<'py, PyList>>,
) -> PyResult<Option<TextTokens<'py>>> {
    guarded(|| {
        let items = items.as_borrowed();
        let first = first.map(|f| f.as_borrowed());
        if let Some(f) = first {
            if f.len() != items.len() {
                return Err(PyValueError::new_err(format!(
                    "{} first hypotheses for {} items",
                    f.len(),
                    items.len()
                )));
            }
        }
        let mut hypotheses = Vec::new();
        let mut item_offsets = Vec::with_capacity(items.len() + 1);
        item_offsets.push(0i64);
        for k in 0..items.len() {
            if k + PREFETCH_AHEAD < items.len() {
                prefetch(item(items, k + PREFETCH_AHEAD).as_ptr());
            }
            let Ok(engines) = item(items, k).cast_exact::<PyList>() else {
                return Ok(None);
            };
            if let Some(f) = first {
                hypotheses.push(item(f, k));
            }
            hypotheses.extend((0..engines.len()).map(|i| item(engines, i)));
            item_offsets.push(hypotheses.len() as i64);
        }
        let mut words = WordIds::new(vocab);
        let mut ids = Vec::new();
        let mut engine_offsets = Vec::with_capacity(hypotheses.len() + 1);
        engine_offsets.push(0i64);
        for (h, hypothesis) in hypotheses.iter().enumerate() {
            if let Some(ahead) = hypotheses.get(h + PREFETCH_AHEAD) {
                prefetch(ahead.as_ptr());
            }
            let Ok(string) = hypothesis.cast_exact::<PyString>() else {
                return Ok(None);
            };
            let Ok(text) = string.to_str() else {
                return Ok(None); // a lone surrogate
            };
            words
                .push_text(text, &mut ids)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            engine_offsets.push(ids.len() as i64);
        }
        let vocabulary = match words.into_words() {
            Some(list) => Some(PyList::new(py, list.iter().map(|w| &**w))?),
            None => None,
        };
        Ok(Some((
            ids.into_pyarray(py),
            engine_offsets.into_pyarray(py),
            item_offsets.into_pyarray(py),
            vocabulary,
        )))
    })
}

/// Item `k < list.len()` of `list`, borrowed as long as the list is.
fn item<'a, 'py>(list: Borrowed<'a, 'py, PyList>, k: usize) -> Borrowed<'a, 'py, PyAny> {
    debug_assert!(k < list.len());
    // SAFETY: `k` is in range (PyList_GetItem returns a borrowed, non-null reference), and the
    // readers run no Python code, so no list shrinks and no item is freed while it is borrowed.
    unsafe {
        Borrowed::from_ptr(
            list.py(),
            ffi::PyList_GetItem(list.as_ptr(), k as ffi::Py_ssize_t),
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rover_align_vote, m)?)?;
    m.add_function(wrap_pyfunction!(rover_mean_agreements, m)?)?;
    m.add_function(wrap_pyfunction!(rover_read_texts, m)?)?;
    Ok(())
}
