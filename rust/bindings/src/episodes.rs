//! The episode reader of `scorekit.agents.cost`: conversion only.
//!
//! [`cost_columns`] reads, through ordinary attribute lookups (interned names, PyO3's safe API),
//! what a cost report needs of each episode of a list — its outcome, its `Cost`'s four token
//! counts and latency, and its run's model — into columns that `scorekit.agents.cost` prices and
//! totals with NumPy. It takes plain values only: an outcome `True`, `False` or `None`; a cost that
//! is `None` or exactly the given `Cost` type, with `int` counts within `i64` and a `float` or
//! `None` latency. For anything else, and on any error raised while reading, it returns `None`, and
//! the Python path (the reference these columns are tested against) reads the list again and
//! raises the reference's error (a `KeyboardInterrupt` and other non-`Exception` errors propagate).
//!
//! With `exact=(episode_type, run_type)` it reads only what cannot change once read (the columns
//! of `scorekit.agents.cost.RecordedEpisodes`, kept for later reports): every episode exactly of
//! `episode_type` (no property can run code while it is read), every costed episode's run `None`
//! or exactly of `run_type` (frozen), its model exactly a `str`.

use numpy::IntoPyArray;
use pyo3::exceptions::PyException;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyType};

use crate::parallel::guarded;

/// `Columns::outcomes` values.
const FAILED: u8 = 0;
const PASSED: u8 = 1;
const UNGRADED: u8 = 2;

/// What [`cost_columns`] reads, before it becomes NumPy arrays.
#[derive(Default)]
struct Columns {
    outcomes: Vec<u8>,
    costed: Vec<usize>,
    counts: Vec<i64>,
    latencies: Vec<f64>,
    model_ids: Vec<u32>,
}

/// The outcome code of `success`, or `None` for a value other than `True`, `False` and `None`.
fn outcome(success: &Bound<'_, PyAny>) -> Option<u8> {
    if success.is_none() {
        Some(UNGRADED)
    } else if let Ok(flag) = success.cast_exact::<PyBool>() {
        Some(if flag.is_true() { PASSED } else { FAILED })
    } else {
        None
    }
}

/// An exact `int` that fits `i64`, else `None`.
fn plain_count(value: &Bound<'_, PyAny>) -> Option<i64> {
    if !value.is_exact_instance_of::<PyInt>() {
        return None;
    }
    value.extract::<i64>().ok()
}

/// The types [`cost_columns`] requires with `exact`: the episode's, and its run's (or `None`).
type Exact<'py> = (Bound<'py, PyType>, Bound<'py, PyType>);

/// The model an episode is priced at, as the reference finds it: `(run.model if run else "") or ""`;
/// `None` when, with `exact`, the run or the model is not of the required type.
fn model_of<'py>(
    episode: &Bound<'py, PyAny>,
    exact: Option<&Exact<'py>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = episode.py();
    let run = episode.getattr(intern!(py, "run"))?;
    if let Some((_, run_type)) = exact {
        if !run.is_none() && !run.get_type().is(run_type) {
            return Ok(None);
        }
    }
    if run.is_none() || !run.is_truthy()? {
        return Ok(Some(PyString::new(py, "").into_any()));
    }
    let model = run.getattr(intern!(py, "model"))?;
    if exact.is_some() && !model.is_exact_instance_of::<PyString>() {
        return Ok(None);
    }
    Ok(Some(if model.is_truthy()? {
        model
    } else {
        PyString::new(py, "").into_any()
    }))
}

/// Reads `episodes` into `columns`; `Ok(false)` when an episode needs the Python path.
fn read<'py>(
    episodes: &Bound<'py, PyList>,
    cost_type: &Bound<'py, PyType>,
    models: Option<&Bound<'py, PyDict>>,
    exact: Option<&Exact<'py>>,
    columns: &mut Columns,
) -> PyResult<bool> {
    let py = episodes.py();
    let fields = [
        intern!(py, "input_tokens"),
        intern!(py, "output_tokens"),
        intern!(py, "cached_input_tokens"),
        intern!(py, "reasoning_tokens"),
    ];
    let mut k = 0;
    // the length is read again each time: Python code run by a lookup may change the list
    while k < episodes.len() {
        let episode = episodes.get_item(k)?;
        if let Some((episode_type, _)) = exact {
            if !episode.get_type().is(episode_type) {
                return Ok(false);
            }
        }
        let Some(code) = outcome(&episode.getattr(intern!(py, "success"))?) else {
            return Ok(false);
        };
        columns.outcomes.push(code);
        let cost = episode.getattr(intern!(py, "cost"))?;
        if !cost.is_none() {
            if !cost.get_type().is(cost_type) {
                return Ok(false);
            }
            for name in fields {
                match plain_count(&cost.getattr(name)?) {
                    Some(count) => columns.counts.push(count),
                    None => return Ok(false),
                }
            }
            let latency = cost.getattr(intern!(py, "latency_s"))?;
            if let Ok(seconds) = latency.cast_exact::<PyFloat>() {
                columns.latencies.push(seconds.value());
            } else if !latency.is_none() {
                return Ok(false);
            }
            if let Some(models) = models {
                let Some(model) = model_of(&episode, exact)? else {
                    return Ok(false);
                };
                let id = match models.get_item(&model)? {
                    Some(id) => id.extract::<u32>()?,
                    None => {
                        let id = models.len() as u32;
                        models.set_item(&model, id)?;
                        id
                    }
                };
                columns.model_ids.push(id);
            }
            columns.costed.push(k);
        }
        k += 1;
    }
    Ok(true)
}

/// The columns of a cost report over `episodes` (a list), or `None` when an episode needs the
/// Python path: `(outcomes, costed, counts, latencies, model_ids)` as NumPy arrays — outcomes
/// `0` failed, `1` passed, `2` ungraded, one per episode; the indices of the episodes with a cost;
/// their token counts (`len(costed) * 4`, in `Cost`'s field order); the latencies that are not
/// `None`, in order; and, when `models` (a dict, filled here with each model met and its id, in
/// order of first appearance) is given, the model id of each costed episode. `exact`: see the
/// module's documentation (`None` when an episode, run or model is not of the type it requires).
#[pyfunction]
#[pyo3(signature = (episodes, cost_type, models=None, exact=None))]
#[allow(clippy::type_complexity)]
fn cost_columns<'py>(
    py: Python<'py>,
    episodes: &Bound<'py, PyList>,
    cost_type: &Bound<'py, PyType>,
    models: Option<&Bound<'py, PyDict>>,
    exact: Option<Exact<'py>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    guarded(|| {
        let mut columns = Columns::default();
        match read(episodes, cost_type, models, exact.as_ref(), &mut columns) {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            // the Python path reads the list again and raises the reference's error, in its order
            Err(e) if e.is_instance_of::<PyException>(py) => return Ok(None),
            Err(e) => return Err(e), // KeyboardInterrupt and the like
        }
        let Columns {
            outcomes,
            costed,
            counts,
            latencies,
            model_ids,
        } = columns;
        let arrays = (
            outcomes.into_pyarray(py),
            costed.into_pyarray(py),
            counts.into_pyarray(py),
            latencies.into_pyarray(py),
            model_ids.into_pyarray(py),
        );
        Ok(Some(arrays.into_pyobject(py)?.into_any()))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cost_columns, m)?)
}
