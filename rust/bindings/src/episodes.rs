//! The compiled episode reader of `scorekit.agents.cost`.
//!
//! [`episode_costs`] reads, in one pass over a list of episodes, what a cost report needs (each
//! episode's outcome, its `Cost`: four token counts and the latency, and the model of its run) and
//! totals it: successes, ungraded episodes, tokens, latency and, at the rates it is given, dollars,
//! added the way the reference adds them. It reads plain episodes only: an outcome `True`, `False`
//! or `None`; a cost that is `None` or exactly the given `Cost` type, with `int` counts within
//! `i64` and a `float` or `None` latency; a run that is `None` or exactly the given
//! `RunProvenance` type, with a `str` model. For anything else it returns `None`, and
//! `scorekit.agents.cost` takes its one-episode-at-a-time path, the reference that these totals
//! must reproduce (the tests compare the two on random episodes).
//!
//! The three classes keep their fields in `__slots__`: the reader takes them at their offsets
//! ([`SlotLayout`]) and starts loading the next episodes' objects while it reads one, since the
//! time goes to fetching scattered objects from memory, not to arithmetic. Episodes of other
//! classes (subclasses, duck-typed episodes) are read with `getattr`.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};
use scorekit_kernels::bootstrap::{RunningSum, Summation};

use crate::objects::{prefetch, SlotLayout};
use crate::parallel::guarded;

/// Slots of [`Reader::recent_models`].
const RECENT_MODELS: usize = 4;
/// Episodes between the stages of [`prefetch_ahead`].
const STAGE: usize = 8;

/// One class the reader knows, with its slot layout when it has one.
struct Class<'py, const N: usize> {
    ty: Bound<'py, PyType>,
    slots: Option<SlotLayout<N>>,
}

impl<'py, const N: usize> Class<'py, N> {
    fn new(ty: Bound<'py, PyType>, names: [&str; N]) -> Self {
        let slots = SlotLayout::of(&ty, names);
        Class { ty, slots }
    }

    /// `object`'s slots when it is exactly this class and the class has a slot layout.
    #[inline]
    fn slots_of(&self, object: *mut ffi::PyObject) -> Option<[*mut ffi::PyObject; N]> {
        let slots = self.slots?;
        // SAFETY: `object` is live (borrowed by the caller); its type was just checked to be
        // exactly the class the layout belongs to.
        unsafe { (ffi::Py_TYPE(object) == self.ty.as_type_ptr()).then(|| slots.fields(object)) }
    }
}

/// The rates an episode's cost is priced at.
enum Rates<'py> {
    /// No pricing: the dollars are not computed and runs are not read.
    None,
    /// One price for every episode (runs are not read).
    One([f64; 4]),
    /// A rate per model, asked of `rates_of(model)` the first time a model is met (`None` from it
    /// sends the whole report to the one-by-one path).
    PerModel(Bound<'py, PyAny>),
}

/// What the pass over the episodes adds up.
struct Totals {
    n_success: usize,
    ungraded: Vec<usize>,
    n_timed: usize,
    latency: RunningSum,
    tokens: i128,
    dollars: RunningSum,
    /// every episode's dollars, when asked for
    per_episode: Option<Vec<f64>>,
}

/// The reader of one call.
struct Reader<'py> {
    episode: Class<'py, 3>,
    cost: Class<'py, 5>,
    run: Class<'py, 1>,
    rates: Rates<'py>,
    /// model → index in `model_rates`
    model_index: Bound<'py, PyDict>,
    model_rates: Vec<[f64; 4]>,
    /// the addresses of model objects met lately and their rates: runs usually share a few model
    /// strings, found here without `model_index` (`recent_held` holds each object, so that its
    /// address stays its own)
    recent_models: [*mut ffi::PyObject; RECENT_MODELS],
    recent_rates: [[f64; 4]; RECENT_MODELS],
    recent_held: [Option<Bound<'py, PyAny>>; RECENT_MODELS],
    /// set when Python code ran (`getattr`, `rates_of`): the list may have changed
    python_ran: bool,
}

/// An episode the columns do not take: the one-by-one path decides.
struct NotPlain;

impl<'py> Reader<'py> {
    /// Add one episode to `totals` (`k`: its index). `episode` is borrowed from the list: no
    /// Python code runs before its fields are read, except through `getattr` on an owned
    /// reference; [`Reader::python_ran`] tells the caller when any ran.
    fn add(
        &mut self,
        episode: *mut ffi::PyObject,
        k: usize,
        totals: &mut Totals,
    ) -> PyResult<Result<(), NotPlain>> {
        let py = self.episode.ty.py();
        let read_runs = matches!(self.rates, Rates::PerModel(_));
        // `getattr` results stay alive here while their pointers are used
        let owned: [Option<Bound<'py, PyAny>>; 3];
        let [success, cost, run] = match self.episode.slots_of(episode) {
            Some(fields) => fields,
            None => {
                self.python_ran = true;
                // SAFETY: `episode` is a live item of the list; the reference taken keeps it alive
                // while `getattr` runs Python code
                let episode = unsafe { Bound::from_borrowed_ptr(py, episode) };
                let get = |name: &Bound<'py, PyString>| episode.getattr(name).ok();
                owned = [
                    get(intern!(py, "success")),
                    get(intern!(py, "cost")),
                    if read_runs {
                        get(intern!(py, "run"))
                    } else {
                        None
                    },
                ];
                if owned[0].is_none() || owned[1].is_none() || (read_runs && owned[2].is_none()) {
                    return Ok(Err(NotPlain));
                }
                owned
                    .each_ref()
                    .map(|f| f.as_ref().map_or(std::ptr::null_mut(), Bound::as_ptr))
            }
        };
        // an unset slot is an AttributeError of `getattr`: the one-by-one path raises it
        if success.is_null() || cost.is_null() || (read_runs && run.is_null()) {
            return Ok(Err(NotPlain));
        }
        // SAFETY: the borrowed singletons are only compared by address
        let (none, yes, no) = unsafe { (ffi::Py_None(), ffi::Py_True(), ffi::Py_False()) };
        if success == yes {
            totals.n_success += 1;
        } else if success == none {
            totals.ungraded.push(k);
        } else if success != no {
            return Ok(Err(NotPlain));
        }
        if cost == none {
            if let Some(usd) = &mut totals.per_episode {
                usd.push(0.0);
            }
            if !matches!(self.rates, Rates::None) {
                totals.dollars.add(0.0);
            }
            return Ok(Ok(()));
        }
        let Some([input, output, cached, reasoning, latency]) = self.cost.slots_of(cost) else {
            return Ok(Err(NotPlain));
        };
        let counts = [input, output, cached, reasoning];
        let mut row = [0i64; 4];
        for (x, &count) in row.iter_mut().zip(&counts) {
            match int_value(count) {
                Some(v) => *x = v,
                None => return Ok(Err(NotPlain)),
            }
        }
        if latency.is_null() {
            return Ok(Err(NotPlain));
        }
        if latency != none {
            // SAFETY: `latency` is live; an exact float's value cannot fail to convert
            unsafe {
                if ffi::PyFloat_CheckExact(latency) == 0 {
                    return Ok(Err(NotPlain));
                }
                totals.latency.add(ffi::PyFloat_AsDouble(latency));
            }
            totals.n_timed += 1;
        }
        totals.tokens += row.iter().map(|&x| x as i128).sum::<i128>();
        let rates = match &self.rates {
            Rates::None => return Ok(Ok(())),
            Rates::One(rates) => *rates,
            Rates::PerModel(_) => match self.run_rates(run)? {
                Some(rates) => rates,
                None => return Ok(Err(NotPlain)),
            },
        };
        if row.iter().any(|&x| x < 0) {
            return Ok(Err(NotPlain)); // the reference raises its error for a negative count
        }
        // count * rate per kind, then ((input + output) + cached) + reasoning, as dollars() adds
        let usd = (row[0] as f64 * rates[0] + row[1] as f64 * rates[1])
            + row[2] as f64 * rates[2]
            + row[3] as f64 * rates[3];
        totals.dollars.add(usd);
        if let Some(all) = &mut totals.per_episode {
            all.push(usd);
        }
        Ok(Ok(()))
    }

    /// The rates of `run`'s model (`""` for a run of `None`), or `None` when the run is not plain
    /// or `rates_of` has no plain rates for the model.
    #[inline(always)]
    fn run_rates(&mut self, run: *mut ffi::PyObject) -> PyResult<Option<[f64; 4]>> {
        let py = self.run.ty.py();
        // SAFETY: `run` is a live object borrowed from its episode.
        let model = unsafe {
            if run == ffi::Py_None() {
                intern!(py, "").as_ptr()
            } else if let Some([model]) = self.run.slots_of(run) {
                model
            } else {
                return Ok(None);
            }
        };
        if model.is_null() {
            return Ok(None); // an unset slot: `getattr` would raise
        }
        // one comparison per slot, without an early exit to mispredict
        let hits = (0..RECENT_MODELS).fold(0u32, |hits, i| {
            hits | (u32::from(self.recent_models[i] == model) << i)
        });
        if hits != 0 {
            return Ok(Some(self.recent_rates[hits.trailing_zeros() as usize]));
        }
        self.model_rates(model)
    }

    /// [`Reader::run_rates`] for a model object not among the recent ones.
    #[inline(never)]
    fn model_rates(&mut self, model: *mut ffi::PyObject) -> PyResult<Option<[f64; 4]>> {
        let py = self.run.ty.py();
        // SAFETY: `model` is live, held by its run or interned; the reference taken keeps it
        // alive while `rates_of` runs
        if unsafe { ffi::PyUnicode_CheckExact(model) } == 0 {
            return Ok(None);
        }
        let model = unsafe { Bound::from_borrowed_ptr(py, model) };
        let rates = match self.model_index.get_item(&model)? {
            Some(index) => self.model_rates[index.extract::<usize>()?],
            None => {
                let Rates::PerModel(rates_of) = &self.rates else {
                    unreachable!("runs are read only to price them per model")
                };
                self.python_ran = true;
                let rates = rates_of.call1((&model,))?;
                if rates.is_none() {
                    return Ok(None);
                }
                let rates: [f64; 4] = rates.extract().map_err(|_| {
                    PyValueError::new_err("episode_costs: rates_of must return 4 floats or None")
                })?;
                self.model_index.set_item(&model, self.model_rates.len())?;
                self.model_rates.push(rates);
                rates
            }
        };
        // the oldest entry makes way
        self.recent_models.rotate_right(1);
        self.recent_rates.rotate_right(1);
        self.recent_held.rotate_right(1);
        self.recent_models[0] = model.as_ptr();
        self.recent_rates[0] = rates;
        self.recent_held[0] = Some(model);
        Ok(Some(rates))
    }
}

/// The value of an exact `int` within `i64`; `None` otherwise (a bool, a subclass, a float, an
/// int beyond `i64`, an unset field).
#[inline]
fn int_value(object: *mut ffi::PyObject) -> Option<i64> {
    // SAFETY: `object` is null or live; on overflow the conversion sets no error.
    unsafe {
        if object.is_null() || ffi::PyLong_CheckExact(object) == 0 {
            return None;
        }
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(object, &mut overflow);
        (overflow == 0).then_some(v)
    }
}

/// The items of the list being read, taken `LEAD` ahead of the reader into a ring (borrowed
/// pointers, valid while no Python code runs), and the objects the reader will read of them,
/// loaded into cache in three stages: the episode object `3 * STAGE` episodes ahead, its cost and
/// run `2 * STAGE` ahead (their addresses are then in cache), the cost's counts and latency
/// `STAGE` ahead. Each episode then costs about one memory latency spread over the episodes in
/// flight, rather than five in a row.
struct Window<'a, 'py> {
    list: &'a Bound<'py, PyList>,
    n: usize,
    ring: [*mut ffi::PyObject; RING],
}

const LEAD: usize = 3 * STAGE;
const RING: usize = (LEAD + 1).next_power_of_two();

impl<'a, 'py> Window<'a, 'py> {
    fn new(list: &'a Bound<'py, PyList>) -> Self {
        let mut window = Window {
            list,
            n: list.len(),
            ring: [std::ptr::null_mut(); RING],
        };
        window.refill(0);
        window
    }

    /// Take items `from..from + LEAD` afresh (after Python code ran).
    fn refill(&mut self, from: usize) {
        for i in from..(from + LEAD).min(self.n) {
            self.ring[i % RING] = self.take(i);
        }
    }

    fn take(&self, i: usize) -> *mut ffi::PyObject {
        // SAFETY: a live list; `i < n`, its length while no Python code runs; the item is borrowed
        unsafe { ffi::PyList_GetItem(self.list.as_ptr(), i as ffi::Py_ssize_t) }
    }

    /// Item `k` (borrowed), after starting the loads of the items ahead of it.
    #[inline]
    fn advance(&mut self, k: usize, reader: &Reader<'_>) -> *mut ffi::PyObject {
        let ahead = k + LEAD;
        if ahead < self.n {
            self.ring[ahead % RING] = self.take(ahead);
            prefetch(self.ring[ahead % RING]);
        }
        if k + 2 * STAGE < self.n {
            if let Some([_, cost, run]) = reader.episode.slots_of(self.ring[(k + 2 * STAGE) % RING])
            {
                prefetch(cost);
                prefetch(run);
            }
        }
        if k + STAGE < self.n {
            if let Some([_, cost, _]) = reader.episode.slots_of(self.ring[(k + STAGE) % RING]) {
                // (the cost is null when unset, else live, held by its episode)
                if let Some(fields) = (!cost.is_null()).then(|| reader.cost.slots_of(cost)).flatten() {
                    for field in fields {
                        prefetch(field);
                    }
                }
            }
        }
        self.ring[k % RING]
    }
}

/// The totals of a list of episodes: `(n_success, ungraded, n_timed, latency, tokens, dollars,
/// per_episode)`, or `None` when an episode (or a model's rates) is not plain.
///
/// `types` is `(Episode, Cost, RunProvenance)`. `rates` is `None` (no dollars: `dollars` is
/// `None`), 4 floats (input, output, cached-input and reasoning USD per token, for every
/// episode), or a callable taking a model name (a run's `model`; `""` for a run of `None`) and
/// returning its 4 rates, or `None` to leave the columns. `ungraded` lists the indices of
/// episodes whose outcome is `None`; `latency` and `dollars` are sums as Python's `sum` adds
/// floats (`compensated`: CPython >= 3.12), `tokens` an exact `int`; `per_episode` (on request,
/// with rates) the dollars of every episode, 0.0 without a cost.
#[pyfunction]
#[pyo3(signature = (episodes, types, rates, compensated, per_episode=false))]
fn episode_costs<'py>(
    episodes: &Bound<'py, PyList>,
    types: (Bound<'py, PyType>, Bound<'py, PyType>, Bound<'py, PyType>),
    rates: Option<Bound<'py, PyAny>>,
    compensated: bool,
    per_episode: bool,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    guarded(|| {
        let py = episodes.py();
        let rates = match rates {
            None => Rates::None,
            Some(r) if r.is_callable() => Rates::PerModel(r),
            Some(r) => Rates::One(r.extract().map_err(|_| {
                PyValueError::new_err("episode_costs: rates must be None, 4 floats or a callable")
            })?),
        };
        if per_episode && matches!(rates, Rates::None) {
            return Err(PyValueError::new_err(
                "episode_costs: per-episode dollars need rates",
            ));
        }
        let summation = if compensated {
            Summation::Compensated
        } else {
            Summation::Sequential
        };
        let n = episodes.len();
        let mut totals = Totals {
            n_success: 0,
            ungraded: Vec::new(),
            n_timed: 0,
            latency: RunningSum::new(summation),
            tokens: 0,
            dollars: RunningSum::new(summation),
            per_episode: per_episode.then(|| Vec::with_capacity(n)),
        };
        let (episode_type, cost_type, run_type) = types;
        let mut reader = Reader {
            episode: Class::new(episode_type, ["success", "cost", "run"]),
            cost: Class::new(
                cost_type,
                [
                    "input_tokens",
                    "output_tokens",
                    "cached_input_tokens",
                    "reasoning_tokens",
                    "latency_s",
                ],
            ),
            run: Class::new(run_type, ["model"]),
            rates,
            model_index: PyDict::new(py),
            model_rates: Vec::new(),
            recent_models: [std::ptr::null_mut(); RECENT_MODELS],
            recent_rates: [[0.0; 4]; RECENT_MODELS],
            recent_held: Default::default(),
            python_ran: false,
        };
        let mut window = Window::new(episodes);
        for k in 0..n {
            let episode = window.advance(k, &reader);
            if reader.add(episode, k, &mut totals)?.is_err() {
                return Ok(None);
            }
            if std::mem::take(&mut reader.python_ran) {
                // `rates_of` or a property may have changed the list
                if episodes.len() != n {
                    return Ok(None);
                }
                window.refill(k + 1);
            }
        }
        let priced = !matches!(reader.rates, Rates::None);
        let out = (
            totals.n_success,
            totals.ungraded,
            totals.n_timed,
            totals.latency.total(),
            totals.tokens,
            priced.then(|| totals.dollars.total()),
            totals.per_episode.map(|v| v.into_pyarray(py)),
        );
        Ok(Some(out.into_pyobject(py)?))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(episode_costs, m)?)?;
    Ok(())
}
