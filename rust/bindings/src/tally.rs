//! Fields whose every write goes through the compiled core: sealed (write-once) slots, and the
//! cost slot of an episode, which keeps a copy of its cost's counts inside the episode object.
//!
//! The cost report reads, of every episode, its outcome, its run, and its cost's four counts and
//! latency. Read from the objects, the counts and latency are a `Cost` object and up to five
//! `int` and `float` objects more, scattered in memory: with a suite that is no longer in cache,
//! the report's time is the time to fetch them. An episode's [`Tally`] is what the report needs
//! of its cost, kept in the episode object itself next to its `success` and `run` slots, so the
//! report fetches one object an episode.
//!
//! The copy stays true because every way of changing what it copies goes through here:
//! - the episode's class derives from [`EpisodeTally`], and its `cost` attribute is a
//!   [`SlotField`] that stores the slot and refreshes the tally in the same call (plain
//!   assignment, `object.__setattr__`, `del`, unpickling: all of them call it);
//! - the `Cost` class's fields are sealed [`SlotField`]s: each is set once, while the object is
//!   built, and never again (not even through `object.__setattr__`), so a cost's counts cannot
//!   change under an episode that holds it. A cost assigned before all its fields were set is
//!   tallied as not plain, for good: the report then reads that episode attribute by attribute.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::objects::SlotLayout;

/// The cost fields a tally copies, in [`Tally::tokens`] order and then the latency.
pub const COST_FIELDS: [&str; 5] = [
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "latency_s",
];

/// What an episode's cost slot holds, as far as the cost report is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CostState {
    /// The slot is unset (reading it raises).
    Unset,
    /// `None`: no cost.
    Absent,
    /// An exact `Cost` whose counts are exact `int`s within `i64` and whose latency is an exact
    /// `float` or `None`.
    Plain {
        tokens: [i64; 4],
        latency: Option<f64>,
    },
    /// Anything else: a subclass, a duck-typed cost, a count of another type, an unset field.
    Other,
}

/// The addresses a cost is recognised by: the plain `Cost` class and its fields' slots.
#[derive(Clone, Copy)]
pub struct CostLayout {
    pub cost_type: usize,
    pub fields: SlotLayout<5>,
}

impl CostLayout {
    /// What `cost` is (a live object, or null for an unset slot).
    ///
    /// # Safety
    /// `cost` is null or live, and nothing changes it while this runs.
    pub unsafe fn state(&self, cost: *mut ffi::PyObject) -> CostState {
        if cost.is_null() {
            return CostState::Unset;
        }
        if cost == ffi::Py_None() {
            return CostState::Absent;
        }
        if ffi::Py_TYPE(cost) as usize != self.cost_type {
            return CostState::Other;
        }
        let fields = self.fields.fields(cost);
        let mut tokens = [0i64; 4];
        for (x, &count) in tokens.iter_mut().zip(&fields[..4]) {
            match int_value(count) {
                Some(v) => *x = v,
                None => return CostState::Other,
            }
        }
        let latency = match fields[4] {
            l if l.is_null() => return CostState::Other,
            l if l == ffi::Py_None() => None,
            // (an exact float's value cannot fail to convert)
            l if ffi::PyFloat_CheckExact(l) != 0 => Some(ffi::PyFloat_AsDouble(l)),
            _ => return CostState::Other,
        };
        CostState::Plain { tokens, latency }
    }
}

/// The value of an exact `int` within `i64`; `None` otherwise (null, a bool, a subclass, a
/// float, an int beyond `i64`).
///
/// # Safety
/// `object` is null or live (converting an exact `int` only reads it, and reports an overflow
/// without setting an error).
unsafe fn int_value(object: *mut ffi::PyObject) -> Option<i64> {
    if object.is_null() || ffi::PyLong_CheckExact(object) == 0 {
        return None;
    }
    let mut overflow = 0;
    let v = ffi::PyLong_AsLongLongAndOverflow(object, &mut overflow);
    (overflow == 0).then_some(v)
}

/// [`Tally::state`] codes.
const UNSET: u64 = 0;
const ABSENT: u64 = 1;
const PLAIN: u64 = 2;
const OTHER: u64 = 3;
/// [`Tally::state`] bit: a plain cost's latency is a float (not `None`).
const TIMED: u64 = 4;

/// An episode's copy of its cost: written (with the GIL held) only by the cost slot's
/// [`SlotField`], read by the cost report while no Python code runs. The atomics are plain loads
/// and stores; they only make the sharing with a reading thread sound.
#[repr(C)]
#[derive(Default)]
pub struct Tally {
    state: AtomicU64,
    tokens: [AtomicI64; 4],
    latency: AtomicU64,
}

impl Tally {
    fn store(&self, state: CostState) {
        let (code, tokens, latency) = match state {
            CostState::Unset => (UNSET, [0; 4], 0.0),
            CostState::Absent => (ABSENT, [0; 4], 0.0),
            CostState::Other => (OTHER, [0; 4], 0.0),
            CostState::Plain { tokens, latency } => (
                PLAIN | if latency.is_some() { TIMED } else { 0 },
                tokens,
                latency.unwrap_or(0.0),
            ),
        };
        for (slot, x) in self.tokens.iter().zip(tokens) {
            slot.store(x, Relaxed);
        }
        self.latency.store(latency.to_bits(), Relaxed);
        self.state.store(code, Relaxed);
    }

    /// The cost state this tally holds.
    #[inline(always)]
    pub fn load(&self) -> CostState {
        let code = self.state.load(Relaxed);
        match code & 3 {
            UNSET => CostState::Unset,
            ABSENT => CostState::Absent,
            PLAIN => CostState::Plain {
                tokens: self.tokens.each_ref().map(|x| x.load(Relaxed)),
                latency: (code & TIMED != 0).then(|| f64::from_bits(self.latency.load(Relaxed))),
            },
            _ => CostState::Other,
        }
    }
}

/// The compiled base of the `Episode` class: its instances carry a [`Tally`] of their cost
/// (kept by the class's `cost` [`SlotField`]); it adds nothing else and takes any arguments (the
/// class's own `__init__` takes them).
#[pyclass(subclass, frozen, module = "scorekit._core")]
#[derive(Default)]
pub struct EpisodeTally {
    tally: Tally,
}

#[pymethods]
impl EpisodeTally {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        Self::default()
    }
}

/// Where an [`EpisodeTally`]'s tally sits in the object, in bytes from its start (the same in
/// every subclass).
pub fn tally_offset(py: Python<'_>) -> PyResult<usize> {
    static OFFSET: OnceLock<usize> = OnceLock::new();
    if let Some(&offset) = OFFSET.get() {
        return Ok(offset);
    }
    let probe = Bound::new(py, EpisodeTally::default())?;
    let offset = &probe.get().tally as *const Tally as usize - probe.as_ptr() as usize;
    Ok(*OFFSET.get_or_init(|| offset))
}

/// The tally of an object whose type derives from [`EpisodeTally`].
///
/// # Safety
/// `object` is live and its type derives from [`EpisodeTally`]; `offset` is [`tally_offset`].
#[inline(always)]
pub unsafe fn tally_of<'a>(object: *mut ffi::PyObject, offset: usize) -> &'a Tally {
    &*((object as *const u8).add(offset) as *const Tally)
}

/// What a [`SlotField`] does beyond reading and writing its slot.
enum Role {
    /// Written once, while the object is built: assigning a set field or deleting one raises
    /// `error` (the dataclass's `FrozenInstanceError`).
    Sealed { error: Py<PyType> },
    /// An episode's cost: every write refreshes the episode's [`Tally`].
    EpisodeCost {
        tally_offset: usize,
        cost: CostLayout,
    },
}

/// A data descriptor over one object slot of `owner`'s instances, standing in for the slot's
/// member descriptor: reading gives what the member gives (the value, or `AttributeError` for an
/// unset slot); writing and deleting do what [`Role`] says.
#[pyclass(frozen, module = "scorekit._core")]
pub struct SlotField {
    name: Py<PyString>,
    owner: Py<PyType>,
    offset: usize,
    role: Role,
}

impl SlotField {
    /// Whether `descriptor` is a [`SlotField`] of `ty` (reading it reads `ty`'s slot).
    pub fn stands_for_slot_of(descriptor: &Bound<'_, PyAny>, ty: &Bound<'_, PyType>) -> bool {
        descriptor
            .cast::<SlotField>()
            .is_ok_and(|f| f.get().owner.bind(ty.py()).is(ty))
    }

    /// The slot in `instance`, after checking that its type (its real one, not a `__class__`
    /// that `isinstance` would believe) derives from the owner, as a member descriptor checks.
    fn slot(&self, instance: &Bound<'_, PyAny>) -> PyResult<*mut *mut ffi::PyObject> {
        let owner = self.owner.bind(instance.py());
        // SAFETY: both are live type objects
        let derives =
            unsafe { ffi::PyType_IsSubtype(ffi::Py_TYPE(instance.as_ptr()), owner.as_type_ptr()) };
        if derives == 0 {
            return Err(PyTypeError::new_err(format!(
                "descriptor '{}' for '{}' objects doesn't apply to a '{}' object",
                self.name.bind(instance.py()),
                owner.qualname()?,
                instance.get_type().name()?,
            )));
        }
        // SAFETY: an instance of the owner has the slot at this offset
        Ok(unsafe { (instance.as_ptr() as *mut u8).add(self.offset) } as *mut *mut ffi::PyObject)
    }

    fn missing(&self, instance: &Bound<'_, PyAny>) -> PyErr {
        let type_name = instance
            .get_type()
            .name()
            .map_or_else(|_| "object".to_owned(), |n| n.to_string());
        PyAttributeError::new_err(format!(
            "'{type_name}' object has no attribute '{}'",
            self.name.bind(instance.py())
        ))
    }

    /// Put `value` (null: unset) in the slot, refreshing the tally first; the old value is
    /// released last, once the object is consistent (releasing it may run Python code).
    fn replace(
        &self,
        instance: &Bound<'_, PyAny>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let slot = self.slot(instance)?;
        // SAFETY: the slot holds null or an owned reference; the GIL is held
        unsafe {
            match &self.role {
                Role::Sealed { error } => {
                    if !(*slot).is_null() || value.is_none() {
                        let verb = if value.is_some() {
                            "assign to"
                        } else {
                            "delete"
                        };
                        let message = format!(
                            "cannot {verb} field {}",
                            self.name.bind(instance.py()).repr()?
                        );
                        return Err(PyErr::from_type(error.bind(instance.py()).clone(), message));
                    }
                }
                Role::EpisodeCost { tally_offset, cost } => {
                    if value.is_none() && (*slot).is_null() {
                        return Err(self.missing(instance));
                    }
                    let state = cost.state(value.map_or(std::ptr::null_mut(), Bound::as_ptr));
                    tally_of(instance.as_ptr(), *tally_offset).store(state);
                }
            }
            let new = value.map_or(std::ptr::null_mut(), |v| v.clone().into_ptr());
            let old = std::ptr::replace(slot, new);
            if !old.is_null() {
                ffi::Py_DECREF(old);
            }
        }
        Ok(())
    }
}

#[pymethods]
impl SlotField {
    fn __get__(
        slf: &Bound<'_, Self>,
        instance: &Bound<'_, PyAny>,
        _owner: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if instance.is_none() {
            return Ok(slf.clone().into_any().unbind()); // read on the class: the descriptor
        }
        let this = slf.get();
        let slot = this.slot(instance)?;
        // SAFETY: the slot holds null or a reference owned by the live instance
        let value = unsafe { *slot };
        if value.is_null() {
            return Err(this.missing(instance));
        }
        // SAFETY: as above; the new reference is ours
        Ok(unsafe { Bound::from_borrowed_ptr(instance.py(), value) }.unbind())
    }

    fn __set__(&self, instance: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.replace(instance, Some(value))
    }

    fn __delete__(&self, instance: &Bound<'_, PyAny>) -> PyResult<()> {
        self.replace(instance, None)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let kind = match self.role {
            Role::Sealed { .. } => "sealed field",
            Role::EpisodeCost { .. } => "tallied field",
        };
        Ok(format!(
            "<{kind} '{}' of '{}' objects>",
            self.name.bind(py),
            self.owner.bind(py).qualname()?
        ))
    }
}

/// The slot offset of `name` in `cls` (which must be the class that declared it, with its own
/// member descriptor or [`SlotField`] still in place).
fn slot_offset(cls: &Bound<'_, PyType>, name: &str) -> PyResult<usize> {
    SlotLayout::<1>::of(cls, [name])
        .map(|layout| layout.offsets()[0])
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{} has no object slot {name:?} of its own",
                cls.qualname()
                    .map_or_else(|_| "the class".to_owned(), |n| n.to_string())
            ))
        })
}

/// Whether `cls`'s own attribute `name` is a [`SlotField`] of `cls` with the sealed role.
fn is_sealed(cls: &Bound<'_, PyType>, name: &str) -> bool {
    let py = cls.py();
    cls.getattr(intern!(py, "__dict__"))
        .and_then(|d| d.get_item(name))
        .ok()
        .and_then(|d| d.cast_into::<SlotField>().ok())
        .is_some_and(|f| {
            let f = f.get();
            f.owner.bind(py).is(cls) && matches!(f.role, Role::Sealed { .. })
        })
}

/// Seal the object slots `names` of the `__slots__` class `cls`: each can be set once (while an
/// instance is built, or unpickled) and never assigned again or deleted; doing so raises
/// `error`.
#[pyfunction]
fn seal_fields(
    cls: &Bound<'_, PyType>,
    names: Vec<String>,
    error: Bound<'_, PyType>,
) -> PyResult<()> {
    let py = cls.py();
    for name in &names {
        if is_sealed(cls, name) {
            continue;
        }
        let field = SlotField {
            name: PyString::new(py, name).unbind(),
            owner: cls.clone().unbind(),
            offset: slot_offset(cls, name)?,
            role: Role::Sealed {
                error: error.clone().unbind(),
            },
        };
        cls.setattr(name.as_str(), Bound::new(py, field)?)?;
    }
    Ok(())
}

/// Make `episode`'s `cost` slot keep the episode's [`Tally`]: `episode` derives from
/// [`EpisodeTally`] and declares a `cost` slot; `cost` is the plain cost class, whose
/// [`COST_FIELDS`] are sealed (see [`seal_fields`]).
#[pyfunction]
fn tally_episode_cost(episode: &Bound<'_, PyType>, cost: &Bound<'_, PyType>) -> PyResult<()> {
    let py = episode.py();
    if !episode.is_subclass_of::<EpisodeTally>()? {
        return Err(PyTypeError::new_err(
            "tally_episode_cost: the episode class must derive from EpisodeTally",
        ));
    }
    if let Some(name) = COST_FIELDS.iter().find(|name| !is_sealed(cost, name)) {
        return Err(PyTypeError::new_err(format!(
            "tally_episode_cost: the cost class's field {name:?} must be sealed first"
        )));
    }
    let fields = SlotLayout::of(cost, COST_FIELDS)
        .ok_or_else(|| PyTypeError::new_err("tally_episode_cost: the cost class has no slots"))?;
    let field = SlotField {
        name: intern!(py, "cost").clone().unbind(),
        owner: episode.clone().unbind(),
        offset: slot_offset(episode, "cost")?,
        role: Role::EpisodeCost {
            tally_offset: tally_offset(py)?,
            cost: CostLayout {
                cost_type: cost.as_type_ptr() as usize,
                fields,
            },
        },
    };
    episode.setattr("cost", Bound::new(py, field)?)
}

/// The tally offset and cost layout of `episode`'s tallied `cost` slot, when `episode` has one
/// of its own for the cost class `cost`.
pub fn tallied(
    episode: &Bound<'_, PyType>,
    cost: &Bound<'_, PyType>,
) -> Option<(usize, CostLayout)> {
    let py = episode.py();
    let field = episode
        .getattr(intern!(py, "__dict__"))
        .and_then(|d| d.get_item("cost"))
        .ok()?
        .cast_into::<SlotField>()
        .ok()?;
    let field = field.get();
    match field.role {
        Role::EpisodeCost {
            tally_offset,
            cost: layout,
        } if field.owner.bind(py).is(episode)
            && layout.cost_type == cost.as_type_ptr() as usize =>
        {
            Some((tally_offset, layout))
        }
        _ => None,
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EpisodeTally>()?;
    m.add_class::<SlotField>()?;
    m.add_function(wrap_pyfunction!(seal_fields, m)?)?;
    m.add_function(wrap_pyfunction!(tally_episode_cost, m)?)?;
    Ok(())
}
