//! The compiled episode reader of `scorekit.agents.cost`.
//!
//! [`episode_cost_columns`] reads, in one pass over a list of episodes, what a cost report needs:
//! each episode's outcome, its `Cost` (four token counts and the latency) and, on request, the
//! model of its run, interned. It reads plain episodes only: an outcome `True`, `False` or
//! `None`; a cost that is `None` or exactly the given `Cost` type, with `int` counts within `i64`
//! and a `float` or `None` latency; a run that is `None` or exactly the given `RunProvenance` type,
//! with a `str` model. For anything else it returns `None`, and `scorekit.agents.cost` takes its
//! one-episode-at-a-time path, the reference that the columns must reproduce (the tests compare
//! the two on random episodes).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyType};

use crate::parallel::guarded;

/// `flags` bit: the outcome is true.
const SUCCESS: u8 = 1;
/// `flags` bit: the outcome is `None` (ungraded).
const UNGRADED: u8 = 2;
/// `flags` bit: the episode has a cost.
const COST: u8 = 4;
/// `flags` bit: the cost has a latency.
const LATENCY: u8 = 8;

type Columns<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray2<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyList>,
);

/// The columns read so far.
struct Reader<'py> {
    cost_type: Bound<'py, PyType>,
    run_type: Option<Bound<'py, PyType>>,
    flags: Vec<u8>,
    tokens: Vec<i64>,
    latency: Vec<f64>,
    model_ids: Vec<i32>,
    /// model → id; `models` in order of first appearance
    model_index: Bound<'py, PyDict>,
    models: Bound<'py, PyList>,
    /// the last model object read and its id: runs usually share one model string
    last_model: Option<(Bound<'py, PyAny>, i32)>,
}

impl<'py> Reader<'py> {
    /// Append one episode's columns; `None` when it is not plain.
    fn read(&mut self, episode: &Bound<'py, PyAny>) -> PyResult<Option<()>> {
        let py = episode.py();
        let (Ok(success), Ok(cost)) = (
            episode.getattr(intern!(py, "success")),
            episode.getattr(intern!(py, "cost")),
        ) else {
            return Ok(None);
        };
        let mut flags = if success.is_none() {
            UNGRADED
        } else if let Ok(b) = success.cast_exact::<PyBool>() {
            if b.is_true() {
                SUCCESS
            } else {
                0
            }
        } else {
            return Ok(None);
        };
        let (mut row, mut latency, mut model_id) = ([0i64; 4], f64::NAN, -1i32);
        if !cost.is_none() {
            if !cost.get_type().is(&self.cost_type) {
                return Ok(None);
            }
            flags |= COST;
            let names = [
                intern!(py, "input_tokens"),
                intern!(py, "output_tokens"),
                intern!(py, "cached_input_tokens"),
                intern!(py, "reasoning_tokens"),
            ];
            for (slot, name) in row.iter_mut().zip(names) {
                let count = cost.getattr(name).ok().and_then(|v| {
                    v.cast_exact::<PyInt>()
                        .ok()
                        .and_then(|i| i.extract::<i64>().ok())
                });
                match count {
                    Some(x) => *slot = x,
                    None => return Ok(None),
                }
            }
            let Ok(l) = cost.getattr(intern!(py, "latency_s")) else {
                return Ok(None);
            };
            if let Ok(f) = l.cast_exact::<PyFloat>() {
                flags |= LATENCY;
                latency = f.value();
            } else if !l.is_none() {
                return Ok(None);
            }
            if let Some(run_type) = &self.run_type {
                let Ok(run) = episode.getattr(intern!(py, "run")) else {
                    return Ok(None);
                };
                let model = if run.is_none() {
                    intern!(py, "").clone().into_any()
                } else if let (true, Ok(model)) = (
                    run.get_type().is(run_type),
                    run.getattr(intern!(py, "model")),
                ) {
                    model
                } else {
                    return Ok(None);
                };
                if !model.is_exact_instance_of::<PyString>() {
                    return Ok(None);
                }
                model_id = self.model_id(model)?;
            }
        }
        self.flags.push(flags);
        self.tokens.extend_from_slice(&row);
        self.latency.push(latency);
        self.model_ids.push(model_id);
        Ok(Some(()))
    }

    /// The id of a model string (equal strings, one id).
    fn model_id(&mut self, model: Bound<'py, PyAny>) -> PyResult<i32> {
        if let Some((last, id)) = &self.last_model {
            if last.is(&model) {
                return Ok(*id);
            }
        }
        let id = match self.model_index.get_item(&model)? {
            Some(id) => id.extract::<i32>()?,
            None => {
                let id = self.models.len() as i32;
                self.model_index.set_item(&model, id)?;
                self.models.append(&model)?;
                id
            }
        };
        self.last_model = Some((model, id));
        Ok(id)
    }
}

/// The cost-report columns of `episodes`: `(flags uint8[n], tokens int64[n, 4], latency
/// float64[n], model_ids int32[n], models list[str])`, or `None` when an episode is not plain.
///
/// `flags` holds bits 1 (succeeded), 2 (ungraded), 4 (has a cost) and 8 (the cost has a
/// latency); `tokens` the input, output, cached-input and reasoning counts (zeros without a
/// cost); `latency` the latency (NaN without one). With `run_type` given, `model_ids[i]` is the
/// index in `models` of the episode's `run.model` (`""` for a run of `None`), and -1 for an
/// episode without a cost; without it, every id is -1 and `models` is empty.
#[pyfunction]
#[pyo3(signature = (episodes, cost_type, run_type=None))]
fn episode_cost_columns<'py>(
    episodes: &Bound<'py, PyList>,
    cost_type: Bound<'py, PyType>,
    run_type: Option<Bound<'py, PyType>>,
) -> PyResult<Option<Columns<'py>>> {
    guarded(|| {
        let py = episodes.py();
        let n = episodes.len();
        let mut reader = Reader {
            cost_type,
            run_type,
            flags: Vec::with_capacity(n),
            tokens: Vec::with_capacity(4 * n),
            latency: Vec::with_capacity(n),
            model_ids: Vec::with_capacity(n),
            model_index: PyDict::new(py),
            models: PyList::empty(py),
            last_model: None,
        };
        for episode in episodes.iter() {
            if reader.read(&episode)?.is_none() {
                return Ok(None);
            }
        }
        let rows = reader.flags.len();
        Ok(Some((
            reader.flags.into_pyarray(py),
            reader.tokens.into_pyarray(py).reshape([rows, 4])?,
            reader.latency.into_pyarray(py),
            reader.model_ids.into_pyarray(py),
            reader.models,
        )))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(episode_cost_columns, m)?)?;
    Ok(())
}
