//! Bindings of the Arrow text path (`scorekit.arrow`): pairs of UTF-8 columns in Arrow's layout
//! (byte buffer, `int32` or `int64` offsets, optional validity bitmap) scored in parallel with the
//! GIL released, without a Python object per item; the sums of those rows per slice
//! (`group_sums`); and the normaliser alone, for tests.
//!
//! Rows of `utf8_pair_counts` are `(ref_len, substitutions, deletions, insertions, status)`;
//! `status` is 0 (counted), 1 (the caller scores the pair: see `text_columns`), 2 (prediction not
//! UTF-8) or 3 (gold not UTF-8). A malformed column or table is a `ValueError`; running out of
//! memory is a `MemoryError` naming the row.

use std::collections::TryReserveError;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use scorekit_kernels::groups;
use scorekit_kernels::text_columns::{
    normalize_column, score_pair, CodePointSet, FoldTable, KnownUtf8, LayoutError, Level,
    NormalizedColumn, PairOutcome, PairWorkspace, Side, Step, TextColumn, UnicodeTables,
};

use crate::levenshtein::fill_rows;
use crate::parallel::{guarded, items_per_task, run_detached, run_here, same_count};

/// Result columns of `utf8_pair_counts`.
const WIDTH: usize = 5;
const NEEDS_CALLER: i64 = 1;
const INVALID_PRED: i64 = 2;
const INVALID_GOLD: i64 = 3;

/// A column argument: `(data uint8, offsets int32|int64, validity uint8 | None, validity_offset)`.
type ColumnArg<'py> = (
    PyReadonlyArray1<'py, u8>,
    Bound<'py, PyAny>,
    Option<PyReadonlyArray1<'py, u8>>,
    usize,
);

/// The tables argument: `(fold_keys uint32, fold_offsets int64, fold_values uint32,
/// punctuation uint8 bitmap, unassigned uint8 bitmap)`.
type TablesArg<'py> = (
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, u8>,
);

enum OffsetArray<'py> {
    Narrow(PyReadonlyArray1<'py, i32>),
    Wide(PyReadonlyArray1<'py, i64>),
}

/// A column's arrays, held while its borrowed view is in use.
struct ColumnArrays<'py> {
    data: PyReadonlyArray1<'py, u8>,
    offsets: OffsetArray<'py>,
    validity: Option<(PyReadonlyArray1<'py, u8>, usize)>,
}

impl<'py> ColumnArrays<'py> {
    fn extract(arg: ColumnArg<'py>, name: &str) -> PyResult<Self> {
        let (data, offsets, validity, validity_offset) = arg;
        let offsets = if let Ok(o) = offsets.extract::<PyReadonlyArray1<'py, i32>>() {
            OffsetArray::Narrow(o)
        } else if let Ok(o) = offsets.extract::<PyReadonlyArray1<'py, i64>>() {
            OffsetArray::Wide(o)
        } else {
            return Err(PyValueError::new_err(format!(
                "column {name}: offsets must be a 1-D int32 or int64 array"
            )));
        };
        Ok(ColumnArrays {
            data,
            offsets,
            validity: validity.map(|v| (v, validity_offset)),
        })
    }

    fn view(&self, name: &str) -> PyResult<Column<'_>> {
        let data = self.data.as_slice()?;
        let validity = match &self.validity {
            Some((bits, start)) => Some((bits.as_slice()?, *start)),
            None => None,
        };
        let layout = |e: LayoutError| PyValueError::new_err(e.0);
        Ok(match &self.offsets {
            OffsetArray::Narrow(o) => Column::Narrow(
                TextColumn::new(name, data, o.as_slice()?, validity).map_err(layout)?,
            ),
            OffsetArray::Wide(o) => {
                Column::Wide(TextColumn::new(name, data, o.as_slice()?, validity).map_err(layout)?)
            }
        })
    }
}

/// A checked column with either offset width.
#[derive(Clone, Copy)]
enum Column<'a> {
    Narrow(TextColumn<'a, i32>),
    Wide(TextColumn<'a, i64>),
}

impl<'a> Column<'a> {
    fn len(&self) -> usize {
        match self {
            Column::Narrow(c) => c.len(),
            Column::Wide(c) => c.len(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Column::Narrow(c) => c.bytes(),
            Column::Wide(c) => c.bytes(),
        }
    }

    fn is_utf8(&self) -> bool {
        match self {
            Column::Narrow(c) => c.is_utf8(),
            Column::Wide(c) => c.is_utf8(),
        }
    }

    #[inline]
    fn item(&self, k: usize) -> &'a [u8] {
        match self {
            Column::Narrow(c) => c.item(k),
            Column::Wide(c) => c.item(k),
        }
    }
}

/// The normaliser steps named by `steps`; a name without a compiled rule is a `ValueError`.
fn parse_steps(steps: &[String]) -> PyResult<Vec<Step>> {
    steps
        .iter()
        .map(|name| {
            Step::from_name(name).ok_or_else(|| {
                PyValueError::new_err(format!("no compiled rule for the normalizer '{name}'"))
            })
        })
        .collect()
}

/// Checked tables; `None` is allowed only when no step needs them.
fn unicode_tables<'a>(
    tables: &'a Option<TablesArg<'_>>,
    steps: &[Step],
) -> PyResult<UnicodeTables<'a>> {
    let Some((keys, offsets, values, punctuation, unassigned)) = tables else {
        if steps.is_empty() {
            return Ok(UnicodeTables::default());
        }
        return Err(PyValueError::new_err(
            "tables are required when normalizer steps are given",
        ));
    };
    let fold = FoldTable {
        keys: keys.as_slice()?,
        offsets: offsets.as_slice()?,
        values: values.as_slice()?,
    };
    fold.check().map_err(|e| PyValueError::new_err(e.0))?;
    Ok(UnicodeTables {
        fold,
        punctuation: CodePointSet {
            bits: punctuation.as_slice()?,
        },
        unassigned: CodePointSet {
            bits: unassigned.as_slice()?,
        },
    })
}

/// The level of a metric name.
fn level(mode: &str) -> PyResult<Level> {
    match mode {
        "cer" => Ok(Level::Characters),
        "wer" => Ok(Level::Words),
        _ => Err(PyValueError::new_err(format!(
            "mode must be 'cer' or 'wer', got {mode:?}"
        ))),
    }
}

/// Counts of every (pred, gold) pair of two UTF-8 columns: `int64[n, 5]` rows of
/// `(ref_len, substitutions, deletions, insertions, status)`.
#[pyfunction]
#[pyo3(signature = (pred, gold, mode, steps, tables, threads))]
fn utf8_pair_counts<'py>(
    py: Python<'py>,
    pred: ColumnArg<'py>,
    gold: ColumnArg<'py>,
    mode: &str,
    steps: Vec<String>,
    tables: Option<TablesArg<'py>>,
    threads: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let level = level(mode)?;
        let steps = parse_steps(&steps)?;
        let tables = unicode_tables(&tables, &steps)?;
        let (pred, gold) = (
            ColumnArrays::extract(pred, "pred")?,
            ColumnArrays::extract(gold, "gold")?,
        );
        let (pred, gold) = (pred.view("pred")?, gold.view("gold")?);
        let n = same_count(pred.len(), gold.len(), "pred", "gold")?;
        let mut out = Vec::new();
        out.try_reserve(n * WIDTH)
            .map_err(|e| PyMemoryError::new_err(format!("out of memory ({e})")))?;
        out.resize(n * WIDTH, 0i64);
        let per_task = items_per_task(n, pred.bytes() + gold.bytes());
        run_detached(py, threads, || {
            let known = KnownUtf8 {
                pred: pred.is_utf8(),
                gold: gold.is_utf8(),
            };
            fill_rows(
                &mut out,
                WIDTH,
                per_task,
                PairWorkspace::new,
                |ws, k, row| {
                    let (p, g) = (pred.item(k), gold.item(k));
                    row[4] = match score_pair(ws, level, &steps, &tables, known, p, g)? {
                        PairOutcome::Counts(c) => {
                            row[..4].copy_from_slice(
                                &[c.ref_len, c.substitutions, c.deletions, c.insertions]
                                    .map(|v| v as i64),
                            );
                            0
                        }
                        PairOutcome::NeedsCaller => NEEDS_CALLER,
                        PairOutcome::InvalidUtf8(Side::Pred) => INVALID_PRED,
                        PairOutcome::InvalidUtf8(Side::Gold) => INVALID_GOLD,
                    };
                    Ok(())
                },
            )
        })?
        .map_err(|(k, e): (usize, TryReserveError)| {
            PyMemoryError::new_err(format!("row {k}: out of memory ({e})"))
        })?;
        Array2::from_shape_vec((n, WIDTH), out)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    })
}

/// Every item of a UTF-8 column through `steps`: `(data uint8, offsets int64, status int8)`, the
/// normalised texts in UTF-8 and a status per item (0 normalised, 1 left to the caller with its
/// text unchanged, 2 not UTF-8 with an empty text).
#[pyfunction]
#[pyo3(signature = (column, steps, tables))]
#[allow(clippy::type_complexity)]
fn utf8_normalize<'py>(
    py: Python<'py>,
    column: ColumnArg<'py>,
    steps: Vec<String>,
    tables: Option<TablesArg<'py>>,
) -> PyResult<(
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i8>>,
)> {
    guarded(|| {
        let steps = parse_steps(&steps)?;
        let tables = unicode_tables(&tables, &steps)?;
        let arrays = ColumnArrays::extract(column, "column")?;
        let column = arrays.view("column")?;
        let NormalizedColumn {
            data,
            offsets,
            status,
        } = run_here(py, || {
            normalize_column((0..column.len()).map(|k| column.item(k)), &steps, &tables)
        })?
        .map_err(|(k, e)| PyMemoryError::new_err(format!("row {k}: out of memory ({e})")))?;
        Ok((
            data.into_pyarray(py),
            offsets.into_pyarray(py),
            status.into_pyarray(py),
        ))
    })
}

/// Column sums of `rows` per group (the kernel's `groups::group_sums`): `int64[groups + 1, w + 2]`
/// for `w` columns; row `g` sums the rows whose code is `g`, the last row sums every row; column
/// `w` counts the rows and column `w + 1` holds the first of them (-1 when there is none), so that
/// the caller can list the groups in order of first appearance. A code of -1 (or no `codes`) puts
/// a row in no group; any other code outside `0..groups` is a `ValueError`. Sums wrap around as
/// NumPy's `int64` does.
#[pyfunction]
#[pyo3(signature = (rows, codes, groups))]
fn group_sums<'py>(
    py: Python<'py>,
    rows: PyReadonlyArray2<'py, i64>,
    codes: Option<PyReadonlyArray1<'py, i64>>,
    groups: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    guarded(|| {
        let rows = rows.as_array();
        let (n, w) = rows.dim();
        let rows = rows.as_standard_layout();
        let codes = codes.as_ref().map(|c| c.as_array().to_vec());
        if let Some(codes) = &codes {
            same_count(n, codes.len(), "rows", "codes")?;
        }
        let rows = rows.as_slice().expect("a standard-layout array");
        let sums = py
            .detach(|| groups::group_sums(rows, (n, w), codes.as_deref(), groups))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Array2::from_shape_vec((groups + 1, w + 2), sums)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(group_sums, m)?)?;
    m.add_function(wrap_pyfunction!(utf8_pair_counts, m)?)?;
    m.add_function(wrap_pyfunction!(utf8_normalize, m)?)?;
    Ok(())
}
