//! The compiled fast path of `scorekit.flows`: read parsed workflow JSON (Python dicts, lists and
//! strings) into `scorekit_kernels::flows`, which builds the trees and computes FlowSim, TreeBLEU,
//! Trigger Match and Component Match for a batch of pairs. This module only converts: it reads the
//! documents' fields, turns labels and `order`/`block` values into kernel inputs, and decides
//! Trigger Match with Python's `==` (the one comparison that needs Python's semantics).
//!
//! The decomposition rules are those of `python/scorekit/flows.py` (documented in `docs/flows.md`),
//! which stays the reference: any document this path does not recognise as a plain, valid workflow
//! (a non-`dict` mapping, a `str` subclass, an invalid or unusual shape) is flagged instead of scored,
//! and the Python side scores that pair itself (and produces the error message).
//!
//! Pipeline: the calling thread (holding the GIL) decomposes the pairs chunk by chunk into
//! [`FlowBatch`]es; `threads - 1` scoring threads take the finished chunks, without the GIL,
//! while the next ones are decomposed, and the calling thread joins them once it is done. On two
//! cores this keeps one core on the (serial) decomposition instead of sharing it three ways.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use pyo3::Borrowed;
use scorekit_kernels::flows::{FlowBatch, FlowSpan, OrderKey, Rejected, TreeBuilder};
use scorekit_kernels::tree::Workspace;

use crate::objects::prefetch;
use crate::parallel::guarded;
use crate::tags::exact_str_bytes;

/// Most pairs decomposed before their chunk is handed to the scoring threads.
const CHUNK: usize = 1024;
/// Marks an empty slot of [`RecentLabels`].
const NONE: u32 = u32::MAX;
/// Deepest nesting, and most values, of a trigger object whose exact comparison runs here; a larger
/// one is compared by Python.
const MAX_TRIGGER_DEPTH: usize = 512;
const MAX_TRIGGER_VALUES: usize = 1 << 16;

/// `Err(Rejected)`: the document is not handled here (invalid, or outside the plain-JSON fast
/// path); the kernel rejects invalid trees the same way.
type Step<T> = Result<T, Rejected>;

// -- reading Python objects -------------------------------------------------------------------------

/// A value read from an exact `dict`: `Missing` key, JSON `Null`, or a reference borrowed from the
/// dict (valid while it is alive: no Python code runs during a decomposition, see [`scan`]).
#[derive(Clone, Copy)]
enum Value<'a, 'py> {
    Missing,
    Null,
    Some(Borrowed<'a, 'py, PyAny>),
}

impl<'a, 'py> Value<'a, 'py> {
    fn present(self) -> Option<Borrowed<'a, 'py, PyAny>> {
        match self {
            Value::Some(v) => Some(v),
            _ => None,
        }
    }
}

/// The fields of a flow, a trigger object and a component, as indices into [`scan`]'s result.
const TRIGGER: usize = 0;
const COMPONENTS: usize = 1;
const TRIGGER_TYPE: usize = 0;
const CATEGORY: usize = 0;
const DEFINITION: usize = 1;
const TYPE: usize = 2;
const ORDER: usize = 3;
const BLOCK: usize = 4;
const CHILDREN: usize = 5;
const FLOW_FIELDS: [&str; 2] = ["trigger", "components"];
const TRIGGER_FIELDS: [&str; 1] = ["type"];
const COMPONENT_FIELDS: [&str; 6] = [
    "category",
    "definition",
    "type",
    "order",
    "block",
    "children",
];

/// Field names as interned Python strings (matched by identity first, then by content).
struct Fields<'py, const N: usize> {
    names: [&'static str; N],
    keys: [Bound<'py, PyString>; N],
}

impl<'py, const N: usize> Fields<'py, N> {
    fn new(py: Python<'py>, names: [&'static str; N]) -> Self {
        Fields {
            names,
            keys: names.map(|name| PyString::intern(py, name)),
        }
    }

    /// Which field `key` names. A key that is not an exact `str` falls back: Python looks such
    /// dicts up itself (a key type's `__eq__` could run arbitrary code).
    fn field_of(&self, key: Borrowed<'_, 'py, PyAny>) -> Step<Option<usize>> {
        if let Some(field) = self.keys.iter().position(|k| k.as_ptr() == key.as_ptr()) {
            return Ok(Some(field));
        }
        let text = exact_str(&key)?;
        Ok(self.names.iter().position(|name| name.as_bytes() == text))
    }

    /// The fields of `dict`, read in one pass over its entries. Only C code that cannot call back
    /// into Python runs, so values borrowed from `dict` stay valid while it is alive.
    fn scan<'a>(&self, dict: &'a Bound<'py, PyDict>) -> Step<[Value<'a, 'py>; N]> {
        let mut fields = [Value::Missing; N];
        let (mut pos, mut key, mut value): (
            ffi::Py_ssize_t,
            *mut ffi::PyObject,
            *mut ffi::PyObject,
        ) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `dict` is a live dict, not mutated during the loop; entries are borrowed from it.
        unsafe {
            while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
                if let Some(field) = self.field_of(Borrowed::from_ptr(dict.py(), key))? {
                    fields[field] = if value == ffi::Py_None() {
                        Value::Null
                    } else {
                        Value::Some(Borrowed::from_ptr(dict.py(), value))
                    };
                }
            }
        }
        Ok(fields)
    }
}

/// The field tables of the three kinds of objects, created once per batch.
struct Keys<'py> {
    flow: Fields<'py, 2>,
    trigger: Fields<'py, 1>,
    component: Fields<'py, 6>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Self {
        Keys {
            flow: Fields::new(py, FLOW_FIELDS),
            trigger: Fields::new(py, TRIGGER_FIELDS),
            component: Fields::new(py, COMPONENT_FIELDS),
        }
    }
}

/// Start loading every item of `list` into the cache, and then the entry tables of its dicts, so
/// that the cache misses of one list overlap instead of following one another (the documents of a
/// large batch are far bigger than the caches). A prefetch never faults; the entry table's address
/// is read at the offset of `ma_keys` in CPython's `PyDictObject` (32 bytes on 64-bit builds since
/// 3.6), and a wrong guess would only make the hint useless.
fn prefetch_items(list: &Bound<'_, PyList>) {
    let n = list.len() as ffi::Py_ssize_t;
    // SAFETY: the items are live objects owned by `list`; reading `ob_type` (every object has it)
    // and, for an exact dict, its `ma_keys` field stays inside the object's allocation.
    unsafe {
        for k in 0..n {
            prefetch(ffi::PyList_GetItem(list.as_ptr(), k));
        }
        for k in 0..n {
            let item = ffi::PyList_GetItem(list.as_ptr(), k);
            if ffi::Py_TYPE(item) == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
                let keys = item.cast::<*const u8>().add(4).read();
                for line in 0..3 {
                    prefetch(keys.wrapping_add(64 * line));
                }
            }
        }
    }
}

fn exact_dict<'a, 'py>(value: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyDict>> {
    value.cast_exact::<PyDict>().ok()
}

/// The UTF-8 bytes of an exact `str` (a `str` subclass or unencodable text falls back).
fn exact_str<'a>(value: &'a Bound<'_, PyAny>) -> Step<&'a [u8]> {
    exact_str_bytes(value.as_borrowed()).ok_or(Rejected)
}

/// Whether `value` is JSON made of exact types only (`dict` with `str` keys, `list`, `str`, `int`,
/// `float`, `bool`, `None`), within `depth` containers and `budget` values: comparing two such values
/// with Python's `==` runs C code only, never a Python `__eq__`.
fn plain_json(value: &Bound<'_, PyAny>, depth: usize, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyFloat>()
        || value.is_exact_instance_of::<PyBool>()
    {
        return true;
    }
    if depth == 0 {
        return false;
    }
    if let Ok(list) = value.cast_exact::<PyList>() {
        return list.iter().all(|item| plain_json(&item, depth - 1, budget));
    }
    if let Some(dict) = exact_dict(value) {
        return dict.iter().all(|(key, item)| {
            key.is_exact_instance_of::<PyString>() && plain_json(&item, depth - 1, budget)
        });
    }
    false
}

/// The kernel key of an `order` or `block` value: an exact `int` within `i64`, `float` or `str`
/// (a huge int or another type is left to Python).
fn order_key(value: &Bound<'_, PyAny>) -> Step<OrderKey> {
    if value.is_exact_instance_of::<PyInt>() {
        let mut overflow = 0;
        // SAFETY: `value` is a live exact int and the GIL is held. The overflow flag reports a
        // huge int without raising, so no exception object is allocated (an allocation may start
        // a garbage collection, whose finalizers could change the documents borrowed from).
        // Reached by tests/test_flows.py (hostile `order`/`block` values around ±2**63).
        let n = unsafe { ffi::PyLong_AsLongLongAndOverflow(value.as_ptr(), &mut overflow) };
        return if overflow == 0 {
            Ok(OrderKey::Int(n))
        } else {
            Err(Rejected)
        };
    }
    if let Ok(float) = value.cast_exact::<PyFloat>() {
        return OrderKey::of_float(float.value());
    }
    Ok(OrderKey::Str(exact_str(value)?.into()))
}

// -- decomposition ----------------------------------------------------------------------------------

/// Label ids of recently seen `(category, definition)` string objects, by address: documents built
/// in Python share their label strings, and then a label costs no hashing of its text. Addresses
/// stay valid for a whole batch, since the GIL is held and no Python code runs while decomposing.
struct RecentLabels {
    slots: Vec<((usize, usize), u32)>,
}

impl RecentLabels {
    const SIZE: usize = 256;

    fn new() -> Self {
        RecentLabels {
            slots: vec![((0, 0), NONE); Self::SIZE],
        }
    }

    fn slot(&mut self, (a, b): (usize, usize)) -> &mut ((usize, usize), u32) {
        let mixed = (a ^ b.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &mut self.slots[mixed >> (usize::BITS - 8)]
    }
}

/// The trigger of a read flow: its type's label id (`None` without a trigger) and the trigger
/// itself.
type Trigger<'a, 'py> = (Option<u32>, Value<'a, 'py>);

/// Reads parsed documents into the kernel's [`TreeBuilder`], one [`FlowBatch`] per chunk.
struct Decomposer<'py> {
    keys: Keys<'py>,
    builder: TreeBuilder,
    /// Trigger Match compares whole triggers (StarFlow's `==`), not only their types.
    exact_triggers: bool,
    recent: RecentLabels,
}

impl<'py> Decomposer<'py> {
    fn new(py: Python<'py>, max_nodes: usize, exact_triggers: bool) -> Self {
        Decomposer {
            keys: Keys::new(py),
            builder: TreeBuilder::new(max_nodes),
            exact_triggers,
            recent: RecentLabels::new(),
        }
    }

    /// Read one document into `batch`: where it lies there and its trigger, or `None` when the
    /// document falls back to Python.
    fn push<'a>(
        &mut self,
        flow: &'a Bound<'py, PyAny>,
        batch: &mut FlowBatch,
    ) -> Option<(FlowSpan, Trigger<'a, 'py>)> {
        let trigger = self.flow(flow).ok()?;
        let span = self.builder.finish_flow(batch).ok()?;
        Some((span, trigger))
    }

    /// Trigger Match of two read flows: Python's `==` on the triggers (a missing trigger is
    /// `None`), or equal types; `Err` when Python's comparison raised (the pair goes to Python).
    fn triggers_match(
        &self,
        (p_type, p): Trigger<'_, 'py>,
        (r_type, r): Trigger<'_, 'py>,
    ) -> Step<bool> {
        if !self.exact_triggers {
            return Ok(p_type == r_type);
        }
        match (p.present(), r.present()) {
            (None, None) => Ok(true),
            // Plain JSON (`flow` checked), so the comparison runs no Python code.
            (Some(p), Some(r)) => p.eq(&*r).map_err(|_| Rejected),
            _ => Ok(false),
        }
    }

    /// Read one document into the builder; returns its trigger.
    fn flow<'a>(&mut self, flow: &'a Bound<'py, PyAny>) -> Step<Trigger<'a, 'py>> {
        let dict = exact_dict(flow).ok_or(Rejected)?;
        let fields = self.keys.flow.scan(dict)?;
        if matches!(fields, [Value::Missing, Value::Missing]) {
            return Err(Rejected);
        }
        let trigger = match fields[TRIGGER].present() {
            None => None,
            Some(t) => Some(match exact_dict(&t) {
                Some(object) => {
                    let kind = self.keys.trigger.scan(object)?[TRIGGER_TYPE]
                        .present()
                        .ok_or(Rejected)?;
                    let mut budget = MAX_TRIGGER_VALUES;
                    if self.exact_triggers && !plain_json(&t, MAX_TRIGGER_DEPTH, &mut budget) {
                        return Err(Rejected);
                    }
                    self.builder.label(exact_str(&kind)?)
                }
                None => self.builder.label(exact_str(&t)?),
            }),
        };
        let components_node = self.builder.start_flow(trigger);
        if let Some(list) = fields[COMPONENTS].present() {
            self.forest(&list, components_node)?;
        }
        Ok((trigger, fields[TRIGGER]))
    }

    /// The label id of one component: from its `category` and `definition` (or `type`) fields, or
    /// from a bare string.
    fn component_label(
        &mut self,
        fields: Option<&[Value<'_, 'py>; 6]>,
        component: &Bound<'py, PyAny>,
    ) -> Step<u32> {
        // The two `str` objects the label is made of (`None` for the default category).
        let (category, definition) = match fields {
            None => (None, component.as_borrowed()),
            Some(fields) => {
                let category = match fields[CATEGORY] {
                    Value::Missing => None,
                    Value::Null => return Err(Rejected),
                    Value::Some(category) => Some(category),
                };
                let definition = match fields[DEFINITION] {
                    Value::Some(d) => d,
                    _ => fields[TYPE].present().ok_or(Rejected)?,
                };
                (category, definition)
            }
        };
        let key = (
            category.map_or(0, |c| c.as_ptr() as usize),
            definition.as_ptr() as usize,
        );
        let slot = self.recent.slot(key);
        if slot.0 == key {
            return Ok(slot.1);
        }
        let category_text = match &category {
            None => None,
            Some(category) => Some(exact_str(category)?),
        };
        let id = self
            .builder
            .component_label(category_text, exact_str(&definition)?);
        *self.recent.slot(key) = (key, id);
        Ok(id)
    }

    /// Read one component list (an exact `list`) under `parent`, with the lists nested in its
    /// components.
    fn forest(&mut self, components: &Bound<'py, PyAny>, parent: u32) -> Step<()> {
        let list = components.cast_exact::<PyList>().map_err(|_| Rejected)?;
        self.builder.open_list()?;
        prefetch_items(list);
        for k in 0..list.len() {
            // SAFETY: `k` is in range and no code changes the list during a decomposition; the item
            // is borrowed from it.
            let component = unsafe {
                let item = ffi::PyList_GetItem(list.as_ptr(), k as ffi::Py_ssize_t);
                if item.is_null() {
                    ffi::PyErr_Clear();
                    return Err(Rejected);
                }
                Borrowed::from_ptr(list.py(), item)
            };
            let fields = match exact_dict(&component) {
                Some(dict) => Some(self.keys.component.scan(dict)?),
                None => None,
            };
            let label = self.component_label(fields.as_ref(), &component)?;
            let Some(fields) = fields else {
                // A bare string (component_label accepted only that).
                self.builder.add_component(label, None, None)?;
                continue;
            };
            // order_key rejects a bool (Python: True == 1, but a bool block is an error).
            let order = fields[ORDER].present().map(|v| order_key(&v)).transpose()?;
            let block = fields[BLOCK].present().map(|v| order_key(&v)).transpose()?;
            let node = self.builder.add_component(label, order, block)?;
            if let Some(nested) = fields[CHILDREN].present() {
                self.forest(&nested, node)?;
            }
        }
        self.builder.close_list(parent)
    }
}

/// Read pairs `start..end` into a fresh batch.
fn decompose_chunk<'py>(
    decomposer: &mut Decomposer<'py>,
    preds: &Bound<'py, PyList>,
    refs: &Bound<'py, PyList>,
    start: usize,
    end: usize,
) -> PyResult<FlowBatch> {
    let mut batch = FlowBatch::default();
    for k in start..end {
        let (pred, reference) = (preds.get_item(k)?, refs.get_item(k)?);
        let p = decomposer.push(&pred, &mut batch);
        let r = decomposer.push(&reference, &mut batch);
        let (p_span, r_span) = (p.map(|(span, _)| span), r.map(|(span, _)| span));
        match (p, r) {
            (Some((_, p)), Some((_, r))) => match decomposer.triggers_match(p, r) {
                Ok(matched) => batch.push_pair(p_span, r_span, matched),
                // Python's comparison raised: the prediction goes to Python.
                Err(Rejected) => batch.push_pair(None, r_span, false),
            },
            _ => batch.push_pair(p_span, r_span, false),
        }
    }
    Ok(batch)
}

/// The metric rows and the per-pair status of [`flow_metrics_batch`].
type MetricsAndStatus<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<u8>>);

/// FlowSim, TreeBLEU, Trigger Match and Component Match of every (pred, ref) pair of parsed flows.
///
/// Trigger Match compares whole triggers with Python's `==` (StarFlow's recipe), or only their
/// types when `exact_triggers` is false.
///
/// Returns `(float64[n, 4], uint8[n])`: the metrics in that column order, and a status per pair:
/// bit 1 = the prediction, bit 2 = the reference was not handled here, or has more than `max_nodes`
/// tree nodes (its row is NaN and the caller scores the pair with the Python reference path).
#[pyfunction]
#[pyo3(signature = (preds, refs, max_nodes, threads=0, exact_triggers=true))]
fn flow_metrics_batch<'py>(
    py: Python<'py>,
    preds: &Bound<'py, PyList>,
    refs: &Bound<'py, PyList>,
    max_nodes: usize,
    threads: usize,
    exact_triggers: bool,
) -> PyResult<MetricsAndStatus<'py>> {
    guarded(|| {
        let n = preds.len();
        if n != refs.len() {
            return Err(PyValueError::new_err(format!(
                "preds has {} flows but refs has {}",
                n,
                refs.len()
            )));
        }
        let workers = crate::parallel::worker_count(threads);
        // Small enough chunks that every scoring thread gets several, big enough to keep the hand-off
        // cheap.
        let chunk_size = (n / (4 * workers)).clamp(64, CHUNK);
        let mut decomposer = Decomposer::new(py, max_nodes, exact_triggers);
        let mut status = vec![0u8; n];
        let scored = crate::parallel::make_and_score(
            py,
            n,
            chunk_size,
            workers,
            |start, end| {
                let batch = decompose_chunk(&mut decomposer, preds, refs, start, end)?;
                for (k, (pred, reference)) in batch.missing().enumerate() {
                    status[start + k] = u8::from(pred) | (u8::from(reference) << 1);
                }
                Ok(batch)
            },
            Workspace::new,
            |ws, batch: FlowBatch| batch.score(ws),
            "a flow scoring thread failed",
        )?;
        let mut rows = vec![[f64::NAN; 4]; n];
        for (start, chunk_rows) in scored {
            rows[start..start + chunk_rows.len()].copy_from_slice(&chunk_rows);
        }
        let mut out = Array2::<f64>::zeros((n, 4));
        for (k, row) in rows.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                out[[k, c]] = v;
            }
        }
        Ok((out.into_pyarray(py), status.into_pyarray(py)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flow_metrics_batch, m)?)?;
    Ok(())
}
