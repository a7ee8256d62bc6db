//! Bindings of the Levenshtein family: batch distance, alignment breakdown, word alignment,
//! schwa-forgiving distance, single-pair edit operations and the best-substring batch (see
//! `scorekit._kernels.levenshtein`).
//! A kernel that runs out of memory raises `MemoryError` naming the item.

use std::collections::TryReserveError;
use std::sync::Mutex;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use scorekit_kernels::levenshtein::{
    align, best_substring, distance, editops, lcs_length, schwa_distance, word_alignment,
    AlignWorkspace, DistanceWorkspace, LcsWorkspace, SchwaError, SchwaWorkspace,
    SubstringWorkspace, WordWorkspace,
};

use crate::parallel::{
    check_offsets, guarded, item, items_per_task, run_here, run_sized, same_count, PairBatch,
    SERIAL_BELOW,
};

/// `MemoryError` for a kernel buffer that could not be allocated (`item` in a batch).
fn out_of_memory(item: Option<usize>, e: TryReserveError) -> PyErr {
    let at = item.map_or(String::new(), |k| format!("item {k}: "));
    PyMemoryError::new_err(format!("{at}out of memory ({e})"))
}

/// A zeroed result buffer of `len` entries, or `MemoryError`.
fn zeroed(len: usize) -> PyResult<Vec<i64>> {
    let mut out = Vec::new();
    out.try_reserve(len).map_err(|e| out_of_memory(None, e))?;
    out.resize(len, 0);
    Ok(out)
}

/// Whether [`fill_rows`] fills a batch of `n` items in tasks of `per_task` on this thread alone.
fn is_serial(n: usize, per_task: usize) -> bool {
    n < (2 * per_task).min(SERIAL_BELOW)
}

/// Fill `out` (`width` columns per item) with `f(workspace, k, row)` for every item `k`,
/// in parallel (tasks of `per_task` items, see [`items_per_task`]) unless the batch makes fewer
/// than two tasks or has fewer than `SERIAL_BELOW` items of short tasks. Results never depend on
/// the thread count: on failure, the error of the lowest failing item is returned.
pub(crate) fn fill_rows<W, E, F>(
    out: &mut [i64],
    width: usize,
    per_task: usize,
    init: fn() -> W,
    f: F,
) -> Result<(), (usize, E)>
where
    W: Send,
    E: Send,
    F: Fn(&mut W, usize, &mut [i64]) -> Result<(), E> + Sync + Send,
{
    let n = out.len() / width.max(1);
    if is_serial(n, per_task) {
        let mut ws = init();
        for (k, row) in out.chunks_mut(width).enumerate() {
            f(&mut ws, k, row).map_err(|e| (k, e))?;
        }
        return Ok(());
    }
    let first = Mutex::new(None::<(usize, E)>);
    // One workspace per pool thread, kept across that thread's tasks: small tasks of long pages
    // would otherwise regrow every buffer (masks, stored bit rows) from empty for each task.
    // Only its own thread locks a slot, once per task, so the locks are never contended.
    let workspaces: Vec<Mutex<Option<W>>> = (0..rayon::current_num_threads())
        .map(|_| Mutex::new(None))
        .collect();
    let per_task = per_task.max(1);
    out.par_chunks_mut(width * per_task)
        .enumerate()
        .for_each(|(task, rows)| {
            let slot = rayon::current_thread_index().unwrap_or(0) % workspaces.len();
            let mut ws = workspaces[slot].lock().unwrap_or_else(|p| p.into_inner());
            let ws = ws.get_or_insert_with(init);
            for (j, row) in rows.chunks_mut(width).enumerate() {
                let k = task * per_task + j;
                if let Err(e) = f(ws, k, row) {
                    // the task's later items come after this one: only its first failure counts
                    let mut first = first.lock().unwrap_or_else(|p| p.into_inner());
                    if first.as_ref().is_none_or(|(j, _)| k < *j) {
                        *first = Some((k, e));
                    }
                    break;
                }
            }
        });
    match first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
}

/// Validate a pair batch, then fill `width` result columns per pair with `f(workspace, a, b, row)`
/// with the GIL released.
#[allow(clippy::too_many_arguments)]
fn pair_rows<'py, W: Send>(
    py: Python<'py>,
    a: &PyReadonlyArray1<'py, u32>,
    a_offsets: &PyReadonlyArray1<'py, i64>,
    b: &PyReadonlyArray1<'py, u32>,
    b_offsets: &PyReadonlyArray1<'py, i64>,
    names: (&str, &str),
    threads: usize,
    width: usize,
    init: fn() -> W,
    f: impl Fn(&mut W, &[u32], &[u32], &mut [i64]) -> Result<(), TryReserveError> + Sync + Send,
) -> PyResult<(Vec<i64>, usize)> {
    let batch = PairBatch::new(
        a.as_slice()?,
        a_offsets.as_slice()?,
        b.as_slice()?,
        b_offsets.as_slice()?,
        names,
    )?;
    let n = batch.n;
    let per_task = items_per_task(n, batch.symbols());
    let mut out = zeroed(n * width)?;
    run_sized(py, threads, is_serial(n, per_task), || {
        fill_rows(&mut out, width, per_task, init, |ws, k, row| {
            let (x, y) = batch.pair(k);
            f(ws, x, y, row)
        })
    })?
    .map_err(|(k, e)| out_of_memory(Some(k), e))?;
    Ok((out, n))
}

/// One count per pair, `count(workspace, a, b)`, as an `int64` array: the distance and LCS batches.
#[allow(clippy::too_many_arguments)]
fn count_per_pair<'py, W: Send>(
    py: Python<'py>,
    a_values: PyReadonlyArray1<'py, u32>,
    a_offsets: PyReadonlyArray1<'py, i64>,
    b_values: PyReadonlyArray1<'py, u32>,
    b_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
    init: fn() -> W,
    count: impl Fn(&mut W, &[u32], &[u32]) -> Result<usize, TryReserveError> + Sync + Send,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    guarded(|| {
        let (out, _) = pair_rows(
            py,
            &a_values,
            &a_offsets,
            &b_values,
            &b_offsets,
            ("a", "b"),
            threads,
            1,
            init,
            |ws, a, b, row| {
                row[0] = count(ws, a, b)? as i64;
                Ok(())
            },
        )?;
        Ok(out.into_pyarray(py))
    })
}

#[pyfunction]
fn levenshtein_distance_batch<'py>(
    py: Python<'py>,
    a_values: PyReadonlyArray1<'py, u32>,
    a_offsets: PyReadonlyArray1<'py, i64>,
    b_values: PyReadonlyArray1<'py, u32>,
    b_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    count_per_pair(
        py,
        a_values,
        a_offsets,
        b_values,
        b_offsets,
        threads,
        DistanceWorkspace::new,
        distance,
    )
}

#[pyfunction]
fn lcs_length_batch<'py>(
    py: Python<'py>,
    a_values: PyReadonlyArray1<'py, u32>,
    a_offsets: PyReadonlyArray1<'py, i64>,
    b_values: PyReadonlyArray1<'py, u32>,
    b_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    count_per_pair(
        py,
        a_values,
        a_offsets,
        b_values,
        b_offsets,
        threads,
        LcsWorkspace::new,
        lcs_length,
    )
}

#[pyfunction]
fn best_substring_batch<'py>(
    py: Python<'py>,
    pattern_values: PyReadonlyArray1<'py, u32>,
    pattern_offsets: PyReadonlyArray1<'py, i64>,
    text_values: PyReadonlyArray1<'py, u32>,
    text_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let (out, n) = pair_rows(
            py,
            &pattern_values,
            &pattern_offsets,
            &text_values,
            &text_offsets,
            ("pattern", "text"),
            threads,
            3,
            SubstringWorkspace::new,
            |ws, p, t, row| {
                let (d, start, end) = best_substring(ws, p, t)?;
                row.copy_from_slice(&[d as i64, start as i64, end as i64]);
                Ok(())
            },
        )?;
        to_matrix(py, out, n, 3)
    })
}

#[pyfunction]
fn levenshtein_alignment_batch<'py>(
    py: Python<'py>,
    ref_values: PyReadonlyArray1<'py, u32>,
    ref_offsets: PyReadonlyArray1<'py, i64>,
    hyp_values: PyReadonlyArray1<'py, u32>,
    hyp_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let (out, n) = pair_rows(
            py,
            &ref_values,
            &ref_offsets,
            &hyp_values,
            &hyp_offsets,
            ("ref", "hyp"),
            threads,
            4,
            AlignWorkspace::new,
            |ws, r, h, row| {
                let c = align(ws, r, h)?;
                row.copy_from_slice(
                    &[c.hits, c.substitutions, c.deletions, c.insertions].map(|v| v as i64),
                );
                Ok(())
            },
        )?;
        to_matrix(py, out, n, 4)
    })
}

#[pyfunction]
fn word_alignment_batch<'py>(
    py: Python<'py>,
    ref_values: PyReadonlyArray1<'py, u32>,
    ref_offsets: PyReadonlyArray1<'py, i64>,
    hyp_values: PyReadonlyArray1<'py, u32>,
    hyp_offsets: PyReadonlyArray1<'py, i64>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let (out, n) = pair_rows(
            py,
            &ref_values,
            &ref_offsets,
            &hyp_values,
            &hyp_offsets,
            ("ref", "hyp"),
            threads,
            6,
            WordWorkspace::new,
            |ws, r, h, row| {
                let w = word_alignment(ws, r, h)?;
                let c = w.counts;
                row.copy_from_slice(
                    &[
                        c.hits,
                        c.substitutions,
                        c.deletions,
                        c.insertions,
                        w.ref_words,
                        w.hyp_words,
                    ]
                    .map(|v| v as i64),
                );
                Ok(())
            },
        )?;
        to_matrix(py, out, n, 6)
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn schwa_distance_batch<'py>(
    py: Python<'py>,
    gt_values: PyReadonlyArray1<'py, u32>,
    gt_offsets: PyReadonlyArray1<'py, i64>,
    pred_values: PyReadonlyArray1<'py, u32>,
    pred_offsets: PyReadonlyArray1<'py, i64>,
    gt_join_values: PyReadonlyArray1<'py, i64>,
    gt_join_offsets: PyReadonlyArray1<'py, i64>,
    pred_join_values: PyReadonlyArray1<'py, i64>,
    pred_join_offsets: PyReadonlyArray1<'py, i64>,
    schwa_chars: PyReadonlyArray1<'py, u32>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    guarded(|| {
        let (gv, go, pv, po) = (
            gt_values.as_slice()?,
            gt_offsets.as_slice()?,
            pred_values.as_slice()?,
            pred_offsets.as_slice()?,
        );
        let (gjv, gjo, pjv, pjo) = (
            gt_join_values.as_slice()?,
            gt_join_offsets.as_slice()?,
            pred_join_values.as_slice()?,
            pred_join_offsets.as_slice()?,
        );
        let schwa = schwa_chars.as_slice()?;
        let n = same_count(
            check_offsets(go, gv.len(), "gt_offsets")?,
            check_offsets(po, pv.len(), "pred_offsets")?,
            "gt",
            "pred",
        )?;
        same_count(
            n,
            check_offsets(gjo, gjv.len(), "gt_join_offsets")?,
            "gt",
            "gt_joins",
        )?;
        same_count(
            n,
            check_offsets(pjo, pjv.len(), "pred_join_offsets")?,
            "pred",
            "pred_joins",
        )?;
        let mut out = zeroed(n)?;
        let per_task = items_per_task(n, gv.len() + pv.len());
        run_sized(py, threads, is_serial(n, per_task), || {
            fill_rows(&mut out, 1, per_task, SchwaWorkspace::new, |ws, k, row| {
                row[0] = schwa_distance(
                    ws,
                    item(gv, go, k),
                    item(pv, po, k),
                    item(gjv, gjo, k),
                    item(pjv, pjo, k),
                    schwa,
                )? as i64;
                Ok(())
            })
        })?
        .map_err(|(k, e)| match e {
            SchwaError::BadJoin(message) => PyValueError::new_err(format!("item {k}: {message}")),
            SchwaError::OutOfMemory(e) => out_of_memory(Some(k), e),
        })?;
        Ok(out.into_pyarray(py))
    })
}

#[pyfunction]
fn levenshtein_editops<'py>(
    py: Python<'py>,
    reference: PyReadonlyArray1<'py, u32>,
    hypothesis: PyReadonlyArray1<'py, u32>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let (r, h) = (reference.as_slice()?, hypothesis.as_slice()?);
        let ops = run_here(py, || editops(&mut AlignWorkspace::new(), r, h))?
            .map_err(|e| out_of_memory(None, e))?;
        let mut flat = Vec::new();
        flat.try_reserve(3 * ops.len())
            .map_err(|e| out_of_memory(None, e))?;
        flat.extend(
            ops.iter()
                .flat_map(|op| [op.kind as i64, op.ref_pos as i64, op.hyp_pos as i64]),
        );
        to_matrix(py, flat, ops.len(), 3)
    })
}

fn to_matrix(
    py: Python<'_>,
    flat: Vec<i64>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'_, PyArray2<i64>>> {
    Array2::from_shape_vec((rows, cols), flat)
        .map(|a| a.into_pyarray(py))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(levenshtein_distance_batch, m)?)?;
    m.add_function(wrap_pyfunction!(levenshtein_alignment_batch, m)?)?;
    m.add_function(wrap_pyfunction!(word_alignment_batch, m)?)?;
    m.add_function(wrap_pyfunction!(schwa_distance_batch, m)?)?;
    m.add_function(wrap_pyfunction!(levenshtein_editops, m)?)?;
    m.add_function(wrap_pyfunction!(best_substring_batch, m)?)?;
    m.add_function(wrap_pyfunction!(lcs_length_batch, m)?)?;
    Ok(())
}
