//! The compiled call reader of `scorekit.agents.trajectory`.
//!
//! [`CallPacker`] reads the tool calls of many trajectories (`Step` objects, `(tool, args)` pairs,
//! mappings), canonicalises string argument values, interns tools, argument names and values into
//! ids whose equality is the exact, transitive rule of `scorekit._interning` (Python's `==` wherever
//! that is transitive; numbers by exact value), and builds the call table of the Needleman–Wunsch
//! kernel.
//! `trajectory._Preparer` is its pure-Python twin and the reference: both give the same tool, name
//! and value ids, masses and weights for every step (only the numbering of table rows may differ).
//! Every input the fast path does not recognise is handed to the same Python helpers the twin
//! uses, so both accept and reject exactly the same inputs.

use foldhash::HashMap as FastMap;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use scorekit_kernels::align::{
    ranks_by_bytes, ranks_of_order, CallRows, CallScratch, CallTableBuilder, SortedArguments,
};
use scorekit_kernels::bootstrap::Summation;
use scorekit_kernels::canon::{canonicalize_ascii, AsciiStep};
use scorekit_kernels::interning::{Native, NativeIndex, Num};

use crate::bootstrap::summation;
use crate::objects::prefetch;
use crate::parallel::guarded;

/// A value as an interner keeps it (to give it back to Python).
enum Key {
    /// A string: where the interner's index keeps its text.
    Str(std::ops::Range<usize>),
    Int(i64),
    Float(f64),
    None,
    /// A value interned by the Python fallback, or one unequal to itself (a NaN).
    Object(Py<PyAny>),
}

impl Key {
    /// The value as a Python object (`index`: the interner's, which keeps the string texts).
    fn to_object(&self, py: Python<'_>, index: &NativeIndex) -> PyResult<Py<PyAny>> {
        Ok(match self {
            Key::Str(range) => PyString::new(py, index.text(range.clone()))
                .into_any()
                .unbind(),
            Key::Int(x) => x.into_pyobject(py)?.into_any().unbind(),
            Key::Float(x) => PyFloat::new(py, *x).into_any().unbind(),
            Key::None => py.None(),
            Key::Object(o) => o.clone_ref(py),
        })
    }
}

/// `Some(native)` for `str`, `int` within `i64`, `bool`, non-NaN `float` and `None`; `Err(())` for a
/// NaN float; `None` for everything else (interned by Python).
fn classify<'a>(v: &'a Bound<'_, PyAny>) -> Result<Option<Native<'a>>, ()> {
    if let Ok(s) = v.cast_exact::<PyString>() {
        return Ok(s.to_str().ok().map(Native::Str));
    }
    if v.is_none() {
        return Ok(Some(Native::None));
    }
    if let Ok(b) = v.cast_exact::<PyBool>() {
        return Ok(Some(Native::Num(Num::Int(b.is_true() as i64))));
    }
    if let Ok(i) = v.cast_exact::<PyInt>() {
        return Ok(i.extract::<i64>().ok().map(|x| Native::Num(Num::Int(x))));
    }
    if let Ok(f) = v.cast_exact::<PyFloat>() {
        // NaN equals nothing
        return Num::of_float(f.value())
            .map(|n| Some(Native::Num(n)))
            .ok_or(());
    }
    Ok(None)
}

/// A map with room for the distinct values of a typical pair (maps keep their room across chunks).
fn presized<K, V>() -> FastMap<K, V> {
    FastMap::with_capacity_and_hasher(64, Default::default())
}

/// Objects already seen, by address: their ids without hashing their contents. Only immutable
/// objects are remembered, and each is kept alive, so an address cannot be reused by another object.
/// A small direct-mapped cache in front of the map serves the few objects met over and over
/// (argument names, tools).
struct SeenObjects {
    recent: [(usize, u32); RECENT_SLOTS],
    ids: FastMap<usize, u32>,
    kept: Vec<Py<PyAny>>,
}

const RECENT_SLOTS: usize = 64;

impl Default for SeenObjects {
    fn default() -> Self {
        SeenObjects {
            recent: [(0, 0); RECENT_SLOTS],
            ids: presized(),
            kept: Vec::with_capacity(64),
        }
    }
}

impl SeenObjects {
    #[inline]
    fn slot(address: usize) -> usize {
        (address >> 4) % RECENT_SLOTS
    }

    #[inline]
    fn get(&mut self, v: &Bound<'_, PyAny>) -> Option<u32> {
        self.get_address(v.as_ptr() as usize)
    }

    /// The id of the remembered object at `address` (the object itself is not read).
    #[inline]
    fn get_address(&mut self, address: usize) -> Option<u32> {
        let slot = &mut self.recent[Self::slot(address)];
        if slot.0 == address {
            return Some(slot.1);
        }
        let id = self.ids.get(&address).copied()?;
        *slot = (address, id);
        Some(id)
    }

    /// Forget every object (and release them).
    fn reset(&mut self) {
        self.recent = [(0, 0); RECENT_SLOTS];
        self.ids.clear();
        self.kept.clear();
    }

    fn remember(&mut self, v: &Bound<'_, PyAny>, id: u32) {
        let address = v.as_ptr() as usize;
        self.ids.insert(address, id);
        self.recent[Self::slot(address)] = (address, id);
        self.kept.push(v.clone().unbind());
    }
}

/// Values → dense ids (`0, 1, 2, …` in first-seen order) under the equality rule of
/// `scorekit._interning` (native values are found by the kernel's `NativeIndex`, which compares
/// them exactly as that rule does).
///
/// Native values are indexed by value (and remembered by address); any other value goes to a
/// Python `ValueInterner` (the fallback). From the first fallback value on, every native value is registered with the fallback
/// too, so values equal across the two kinds (a NumPy integer and an `int`) share one id.
struct Interner {
    /// The native values interned, by value (and the texts of the strings).
    index: NativeIndex,
    seen: SeenObjects,
    keys: Vec<Key>,
    interner_type: Py<PyAny>,
    fallback: Option<Py<PyAny>>,
    /// Fallback id → id.
    fallback_ids: Vec<u32>,
}

impl Interner {
    fn new(interner_type: Py<PyAny>) -> Self {
        Interner {
            index: NativeIndex::default(),
            seen: SeenObjects::default(),
            keys: Vec::new(),
            interner_type,
            fallback: None,
            fallback_ids: Vec::new(),
        }
    }

    /// Forget every value (keeping the allocations).
    fn reset(&mut self) {
        self.index.clear();
        self.seen.reset();
        self.keys.clear();
        self.fallback = None;
        self.fallback_ids.clear();
    }

    fn push(&mut self, key: Key) -> u32 {
        self.keys.push(key);
        (self.keys.len() - 1) as u32
    }

    /// `(id, shared)`: the fallback's id of `obj` mapped to ours (`key` is kept if the value is
    /// new), and whether another value can ever get it (not for a value equal to nothing, a NaN).
    fn via_fallback(
        &mut self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        key: Key,
    ) -> PyResult<(u32, bool)> {
        let fallback = self.fallback(py)?;
        let (local, shared): (usize, bool) = fallback
            .call_method1(py, intern!(py, "id_shared"), (obj,))?
            .extract(py)?;
        if local < self.fallback_ids.len() {
            return Ok((self.fallback_ids[local], shared));
        }
        let id = self.push(key);
        self.fallback_ids.push(id);
        Ok((id, shared))
    }

    /// The fallback interner, created (and given every native value so far) on first use.
    fn fallback(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if let Some(f) = &self.fallback {
            return Ok(f.clone_ref(py));
        }
        let fallback = self.interner_type.call0(py)?;
        for id in 0..self.keys.len() {
            if matches!(self.keys[id], Key::Object(_)) {
                continue; // NaN-like values are never found again
            }
            let obj = self.keys[id].to_object(py, &self.index)?;
            let local: usize = fallback
                .call_method1(py, intern!(py, "id"), (obj,))?
                .extract(py)?;
            if local == self.fallback_ids.len() {
                self.fallback_ids.push(id as u32);
            }
        }
        self.fallback = Some(fallback.clone_ref(py));
        Ok(fallback)
    }

    /// The id of a native value; `v` is the object it was read from, if any.
    fn native_id(
        &mut self,
        py: Python<'_>,
        v: Option<&Bound<'_, PyAny>>,
        native: Native<'_>,
    ) -> PyResult<u32> {
        let absent = match self.index.find(&native) {
            Ok(id) => return Ok(id),
            Err(absent) => absent,
        };
        let key = match native {
            Native::Str(s) => Key::Str(self.index.keep_text(s)),
            Native::Num(Num::Int(x)) => Key::Int(x),
            Native::Num(Num::Float(bits)) => Key::Float(f64::from_bits(bits)),
            Native::None => Key::None,
        };
        let id = if self.fallback.is_some() {
            let obj = match v {
                Some(v) => v.clone(),
                None => key.to_object(py, &self.index)?.into_bound(py),
            };
            self.via_fallback(py, &obj, key)?.0
        } else {
            self.push(key)
        };
        match native {
            Native::Str(s) => {
                // the fallback may have matched an equal value of another kind: such a string is
                // not indexed here (the fallback answers it every time)
                if let Key::Str(range) = &self.keys[id as usize] {
                    if self.index.text(range.clone()) == s {
                        self.index.insert_text(range.clone(), id, absent);
                    }
                }
            }
            _ => self.index.insert(&native, id),
        }
        Ok(id)
    }

    /// The text of value `id` if it is a string kept here.
    #[inline]
    fn text_of(&self, id: u32) -> Option<&str> {
        match &self.keys[id as usize] {
            Key::Str(range) => Some(self.index.text(range.clone())),
            _ => None,
        }
    }

    /// Value `id` as a Python object.
    fn object(&self, py: Python<'_>, id: usize) -> PyResult<Py<PyAny>> {
        self.keys[id].to_object(py, &self.index)
    }

    /// The id of the canonical string `s`.
    fn str_id(&mut self, py: Python<'_>, s: &str) -> PyResult<u32> {
        self.native_id(py, None, Native::Str(s))
    }

    /// `(id, shared)` of any value (`shared` is false for a value equal to nothing, a NaN).
    #[inline]
    fn id(&mut self, py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<(u32, bool)> {
        match self.seen.get(v) {
            Some(id) => Ok((id, true)),
            None => self.new_object_id(py, v),
        }
    }

    /// [`Interner::id`] of an object not seen before.
    #[inline(never)]
    fn new_object_id(&mut self, py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<(u32, bool)> {
        match classify(v) {
            Ok(Some(native)) => {
                let id = self.native_id(py, Some(v), native)?;
                self.seen.remember(v, id);
                Ok((id, true))
            }
            Err(()) => Ok((self.push(Key::Object(v.clone().unbind())), false)),
            // a value equal to nothing gets a fresh id from the fallback, as in the twin
            Ok(None) => self.via_fallback(py, v, Key::Object(v.clone().unbind())),
        }
    }
}

/// `(tool, args)` of a `Step` whose `args` is a `dict` (the twin's fast path); `None` otherwise.
fn step_fields<'py>(
    step: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let py = step.py();
    let args = step.getattr(intern!(py, "args"))?;
    if !args.is_instance_of::<PyDict>() {
        return Ok(None);
    }
    Ok(Some((step.getattr(intern!(py, "tool"))?, args)))
}

/// `(tool, args)` of a call written as a `(tool, args)` tuple or list or a `{"tool": …, "args": …}`
/// dict whose tool is a `str` and whose arguments are a `dict`, which is what `as_call` reads from
/// them (its copy of the arguments has the same items); `None` for every other form.
fn plain_call<'py>(
    call: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let py = call.py();
    let (tool, args) = if let Ok(pair) = call.cast_exact::<PyTuple>() {
        if pair.len() != 2 {
            return Ok(None);
        }
        (pair.get_item(0)?, pair.get_item(1)?)
    } else if let Ok(pair) = call.cast_exact::<PyList>() {
        if pair.len() != 2 {
            return Ok(None);
        }
        (pair.get_item(0)?, pair.get_item(1)?)
    } else if let Ok(fields) = call.cast_exact::<PyDict>() {
        match (
            fields.get_item(intern!(py, "tool"))?,
            fields.get_item(intern!(py, "args"))?,
        ) {
            (Some(tool), Some(args)) => (tool, args),
            _ => return Ok(None),
        }
    } else {
        return Ok(None);
    };
    let plain = tool.is_exact_instance_of::<PyString>() && args.is_exact_instance_of::<PyDict>();
    Ok(plain.then_some((tool, args)))
}

/// Start loading the objects of a list or tuple of calls into cache, all at once (their headers,
/// and the words in front of them where CPython keeps an instance's attribute values): the reader
/// then finds them there instead of waiting for each in turn. Only addresses are used.
fn prefetch_items(calls: &Bound<'_, PyAny>) {
    let list = calls.cast_exact::<PyList>().ok();
    let n = match &list {
        Some(l) => l.len(),
        None => calls.cast_exact::<PyTuple>().map_or(0, |t| t.len()),
    };
    for k in 0..n {
        // SAFETY: `calls` is a live list or tuple of length > k; the item is borrowed and only its
        // address is used.
        let item = unsafe {
            if list.is_some() {
                ffi::PyList_GetItem(calls.as_ptr(), k as ffi::Py_ssize_t)
            } else {
                ffi::PyTuple_GetItem(calls.as_ptr(), k as ffi::Py_ssize_t)
            }
        } as *const i8;
        prefetch(item);
        prefetch(item.wrapping_sub(32));
    }
}

type TableArrays<'py> = (
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
);

/// One packed side of a batch: call ids and per-trajectory offsets.
struct Side {
    ids: Vec<u32>,
    offsets: Vec<i64>,
}

/// Most pairs per chunk of [`CallPacker::score_pairs`]: the call table of a chunk stays
/// cache-sized and a batch of any size runs in bounded memory.
const CHUNK_PAIRS: usize = 64;
/// Fewest pairs per chunk when a batch is cut finer so that packing overlaps scoring.
const MIN_CHUNK_PAIRS: usize = 8;

/// A chunk of a batch's pairs packed into their own call table, owned so that any thread can
/// score them.
struct PackedChunk {
    rows: CallRows,
    sorted: SortedArguments,
    a: Side,
    b: Side,
}

/// The predicted and the gold trajectories of a run of pairs.
type PairSides<'a, 'py> = (&'a [Bound<'py, PyAny>], &'a [Bound<'py, PyAny>]);

/// The distances of the pairs of a packed chunk (the kernel's
/// [`CallRows::pair_distances`]).
fn score_packed(
    rows: &CallRows,
    sorted: &SortedArguments,
    a: &Side,
    b: &Side,
    scratch: &mut CallScratch,
) -> Vec<f64> {
    rows.pair_distances(sorted, (&a.ids, &a.offsets), (&b.ids, &b.offsets), scratch)
}

type ScoredPairs<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
);

type Packed<'py> = (
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
);

/// Reads, canonicalises, interns and weighs the calls of trajectories for the NW kernel; one
/// instance serves one metric call (the pred and gold sides of a batch share its ids).
///
/// Arguments are the Python twin's helpers: `step_type` (`Step`), `calls_of`, `as_call`,
/// `norm_value` (`norm(v)` for values other than plain strings and numbers), `value_error(exc,
/// item, step, name)` (the error to raise when reading an argument value raised `exc`),
/// `interner_type` (`ValueInterner`, whose `id_shared` decides equality beyond native values),
/// the canonicaliser `canon` (`None`: none) with `ascii_steps`, the names of its built-in steps
/// when they fully describe it (ASCII strings are then canonicalised here), and
/// the weight functions `tool_weight(tool)`/`arg_weight(tool, name)` (`None`: unit weights), and
/// `compensated`, whether this Python's `sum` compensates (a call's mass adds its argument weights
/// as the twin's `sum` does).
#[pyclass(module = "scorekit._core")]
pub struct CallPacker {
    step_type: Py<PyAny>,
    calls_of: Py<PyAny>,
    as_call: Py<PyAny>,
    norm: Py<PyAny>,
    value_error: Py<PyAny>,
    canon: Option<Py<PyAny>>,
    ascii_steps: Option<Vec<AsciiStep>>,
    weights: Option<(Py<PyAny>, Py<PyAny>)>,
    summation: Summation,
    tools: Interner,
    names: Interner,
    values: Interner,
    /// Raw argument value (string, number, `None`) → id of its canonical form: by address, and by
    /// contents for strings the Python canonicaliser folds.
    raw_seen: SeenObjects,
    raw_strings: FastMap<Box<[u8]>, u32>,
    canon_buffer: Vec<u8>,
    /// The call table: one row per distinct `[tool, name, value, name, value, …]`.
    table: CallTableBuilder,
    /// The argument weights of the call being added.
    weights_buffer: Vec<f64>,
    /// Kernel buffers of batches scored on the calling thread.
    scratch: CallScratch,
}

impl CallPacker {
    /// `(id, shared)` of an argument value after canonicalisation.
    fn value_id(&mut self, py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<(u32, bool)> {
        if let Some(id) = self.raw_seen.get(v) {
            return Ok((id, true));
        }
        let Ok(s) = v.cast_exact::<PyString>() else {
            if let Ok(Some(Native::Num(_) | Native::None)) | Err(()) = classify(v) {
                // numbers and None are their own canonical form
                let (id, shared) = self.values.id(py, v)?;
                if shared {
                    self.raw_seen.remember(v, id);
                }
                return Ok((id, shared));
            }
            let normed = self.norm.call1(py, (v,))?;
            return self.values.id(py, normed.bind(py));
        };
        let Ok(text) = s.to_str() else {
            // a lone surrogate: not UTF-8, so not memoised by its bytes
            let normed = self.norm.call1(py, (v,))?;
            return self.values.id(py, normed.bind(py));
        };
        let id = match (&self.canon, &self.ascii_steps) {
            (None, _) => self.values.str_id(py, text)?,
            (Some(_), Some(steps)) if text.is_ascii() => {
                let mut canonical = std::mem::take(&mut self.canon_buffer);
                canonicalize_ascii(steps, text.as_bytes(), &mut canonical);
                debug_assert!(canonical.is_ascii());
                // SAFETY: every ASCII step maps ASCII to ASCII, and ASCII is valid UTF-8.
                let id = self
                    .values
                    .str_id(py, unsafe { std::str::from_utf8_unchecked(&canonical) });
                self.canon_buffer = canonical;
                id?
            }
            (Some(canon), _) => {
                // the Python canonicaliser runs once per distinct string
                if let Some(&id) = self.raw_strings.get(text.as_bytes()) {
                    self.raw_seen.remember(v, id);
                    return Ok((id, true));
                }
                let folded = canon.call1(py, (v,))?;
                let folded = folded.bind(py);
                if !folded.is_exact_instance_of::<PyString>() {
                    return self.values.id(py, folded);
                }
                let id = self.values.id(py, folded)?.0;
                self.raw_strings.insert(text.as_bytes().into(), id);
                id
            }
        };
        self.raw_seen.remember(v, id);
        Ok((id, true))
    }

    /// Read the entries of `args` once: the row of the call when its tool, argument names and raw
    /// values are all objects seen before (by address) and the combination is already in the
    /// table; otherwise `None`, with the items in `items` (as strong references). Runs no Python
    /// code while it holds the dict's borrowed entries.
    fn row_by_identity<'py>(
        &mut self,
        tool: &Bound<'py, PyAny>,
        args: &Bound<'py, PyDict>,
        key: &mut Vec<u32>,
        entries: &mut Vec<(usize, usize)>,
        items: &mut Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    ) -> Option<u32> {
        key.clear();
        entries.clear();
        let mut known = match self.tools.seen.get(tool) {
            Some(id) => {
                key.push(id);
                true
            }
            None => false,
        };
        let (mut pos, mut name, mut value): (
            ffi::Py_ssize_t,
            *mut ffi::PyObject,
            *mut ffi::PyObject,
        ) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `args` is a live dict and nothing in this loop runs Python code or changes it;
        // the borrowed entries are only compared as addresses here.
        while unsafe { ffi::PyDict_Next(args.as_ptr(), &mut pos, &mut name, &mut value) } != 0 {
            entries.push((name as usize, value as usize));
            if known {
                match (
                    self.names.seen.get_address(name as usize),
                    self.raw_seen.get_address(value as usize),
                ) {
                    (Some(n), Some(v)) => key.extend([n, v]),
                    _ => known = false,
                }
            }
        }
        if known {
            if let Ok(row) = self.table.find(key) {
                return Some(row);
            }
        }
        let py = args.py();
        items.clear();
        // SAFETY: still no Python code has run since PyDict_Next returned these entries, so the
        // dict (alive through `args`) still holds them; each becomes a strong reference here.
        items.extend(entries.iter().map(|&(name, value)| unsafe {
            (
                Bound::from_borrowed_ptr(py, name as *mut ffi::PyObject),
                Bound::from_borrowed_ptr(py, value as *mut ffi::PyObject),
            )
        }));
        None
    }

    /// The row of call `(tool, items)`, added to the table if new; `(item, step)` locate the call
    /// for the error of a bad argument value (made by the twin's `value_error`).
    fn row(
        &mut self,
        py: Python<'_>,
        tool: &Bound<'_, PyAny>,
        items: &[(Bound<'_, PyAny>, Bound<'_, PyAny>)],
        key: &mut Vec<u32>,
        (item, step): (usize, usize),
    ) -> PyResult<u32> {
        key.clear();
        key.push(self.tools.id(py, tool)?.0);
        let mut memoisable = true;
        for (name, value) in items {
            key.push(self.names.id(py, name)?.0);
            let (vid, shared) = self.value_id(py, value).map_err(|e| {
                match self.value_error.call1(py, (e.value(py), item, step, name)) {
                    Ok(named) => PyErr::from_value(named.into_bound(py)),
                    Err(failed) => failed,
                }
            })?;
            memoisable &= shared;
            key.push(vid);
        }
        // a call holding a value equal to nothing (a NaN) is not memoised
        let memo = if memoisable {
            match self.table.find(key) {
                Ok(row) => return Ok(row),
                Err(new) => Some(new),
            }
        } else {
            None
        };
        let (tool_weight, arg_weights) = match &self.weights {
            None => (1.0, None),
            Some((tool_weight, arg_weight)) => {
                let t: f64 = tool_weight.call1(py, (tool,))?.extract(py)?;
                self.weights_buffer.clear();
                for (name, _) in items {
                    let w: f64 = arg_weight.call1(py, (tool, name))?.extract(py)?;
                    self.weights_buffer.push(w);
                }
                (t, Some(&self.weights_buffer[..]))
            }
        };
        Ok(self
            .table
            .add(key, tool_weight, arg_weights, self.summation, memo))
    }

    /// Pack `pairs` (the batch's pairs from `first_item` on) into a fresh call table (this
    /// packer's), appending each side's total masses and lengths to its lists: `(pred side, gold
    /// side, arguments in the kernel's order)`.
    fn pack_pairs<'py>(
        &mut self,
        py: Python<'py>,
        (first_item, pairs): (usize, PairSides<'_, 'py>),
        (p_totals, p_lengths): (&Bound<'py, PyList>, &Bound<'py, PyList>),
        (g_totals, g_lengths): (&Bound<'py, PyList>, &Bound<'py, PyList>),
        name_key: &Bound<'py, PyAny>,
    ) -> PyResult<(Side, Side, SortedArguments)> {
        self.reset();
        let a = self.pack_side(
            py,
            pairs.0.iter().cloned().map(Ok),
            first_item,
            p_totals,
            p_lengths,
        )?;
        let b = self.pack_side(
            py,
            pairs.1.iter().cloned().map(Ok),
            first_item,
            g_totals,
            g_lengths,
        )?;
        Ok((a, b, self.sorted_arguments(py, name_key)?))
    }

    /// Forget everything packed so far, keeping the allocations (the start of every chunk of
    /// `score_pairs`, so one packer can serve many metric calls).
    fn reset(&mut self) {
        self.tools.reset();
        self.names.reset();
        self.values.reset();
        self.raw_seen.reset();
        self.raw_strings.clear();
        self.table.clear();
    }

    /// Read, intern and add to the table the calls of `trajectories`.
    fn pack_side<'py>(
        &mut self,
        py: Python<'py>,
        trajectories: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
        first_item: usize,
        totals: &Bound<'py, PyList>,
        lengths: &Bound<'py, PyList>,
    ) -> PyResult<Side> {
        let mut ids: Vec<u32> = Vec::new();
        let mut offsets: Vec<i64> = vec![0];
        let mut items: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new();
        let mut key: Vec<u32> = Vec::new();
        let mut entries: Vec<(usize, usize)> = Vec::new();
        let step_type = self.step_type.bind(py).clone();
        for (item, x) in (first_item..).zip(trajectories) {
            let x = x?;
            let calls = if x.is_exact_instance_of::<PyList>() || x.is_exact_instance_of::<PyTuple>()
            {
                x
            } else {
                self.calls_of.call1(py, (x,))?.into_bound(py)
            };
            let start = ids.len();
            let mut total = 0.0;
            prefetch_items(&calls);
            for (step, c) in calls.try_iter()?.enumerate() {
                let c = c?;
                let call = if c.get_type().is(&step_type) {
                    step_fields(&c)?
                } else {
                    plain_call(&c)?
                };
                let (tool, args) = match call {
                    Some(call) => call,
                    None => {
                        let pair = self.as_call.call1(py, (&c,))?.into_bound(py);
                        (pair.get_item(0)?, pair.get_item(1)?)
                    }
                };
                items.clear();
                if let Ok(dict) = args.cast_exact::<PyDict>() {
                    let found =
                        self.row_by_identity(&tool, dict, &mut key, &mut entries, &mut items);
                    if let Some(row) = found {
                        ids.push(row);
                        total += self.table.rows().mass[row as usize];
                        continue;
                    }
                } else {
                    for item in args.call_method0(intern!(py, "items"))?.try_iter()? {
                        let item = item?;
                        items.push((item.get_item(0)?, item.get_item(1)?));
                    }
                }
                let row = self.row(py, &tool, &items, &mut key, (item, step))?;
                ids.push(row);
                total += self.table.rows().mass[row as usize];
            }
            totals.append(total)?;
            lengths.append(ids.len() - start)?;
            offsets.push(ids.len() as i64);
        }
        Ok(Side { ids, offsets })
    }

    /// The arguments of every row sorted by the rank of their names under `name_key` (the twin's
    /// `_name_key`), names replaced by their ranks.
    fn sorted_arguments(
        &self,
        py: Python<'_>,
        name_key: &Bound<'_, PyAny>,
    ) -> PyResult<SortedArguments> {
        let rank = self.name_ranks(py, name_key)?;
        Ok(self.table.rows().sorted_arguments(&rank))
    }

    /// Rank of every argument-name id in the twin's `_name_key` order.
    fn name_ranks(&self, py: Python<'_>, name_key: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        let names = &self.names;
        let n = names.keys.len();
        let texts: Vec<&[u8]> = (0..n as u32)
            .filter_map(|id| names.text_of(id).map(str::as_bytes))
            .collect();
        if texts.len() == n {
            // strings sort by code point, which is the byte order of their UTF-8
            return Ok(ranks_by_bytes(&texts));
        }
        let sort_keys = PyList::empty(py);
        for id in 0..n {
            sort_keys.append(name_key.call1((names.object(py, id)?,))?)?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("key", sort_keys.getattr("__getitem__")?)?;
        let order: Vec<usize> = py
            .import("builtins")?
            .getattr("sorted")?
            .call((PyList::new(py, 0..n)?,), Some(&kwargs))?
            .extract()?;
        Ok(ranks_of_order(&order))
    }
}

#[pymethods]
impl CallPacker {
    #[new]
    #[pyo3(signature = (step_type, calls_of, as_call, norm, value_error, interner_type, canon, ascii_steps, tool_weight, arg_weight, compensated))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        step_type: Py<PyAny>,
        calls_of: Py<PyAny>,
        as_call: Py<PyAny>,
        norm: Py<PyAny>,
        value_error: Py<PyAny>,
        interner_type: Py<PyAny>,
        canon: Option<Py<PyAny>>,
        ascii_steps: Option<Vec<String>>,
        tool_weight: Option<Py<PyAny>>,
        arg_weight: Option<Py<PyAny>>,
        compensated: bool,
    ) -> PyResult<Self> {
        guarded(|| {
            let ascii_steps = match ascii_steps {
                None => None,
                Some(names) => Some(
                    names
                        .iter()
                        .map(|n| {
                            AsciiStep::from_name(n).ok_or_else(|| {
                                PyValueError::new_err(format!(
                                    "no ASCII rule for normaliser step {n:?}"
                                ))
                            })
                        })
                        .collect::<PyResult<Vec<_>>>()?,
                ),
            };
            let weights = match (tool_weight, arg_weight) {
                (Some(t), Some(a)) => Some((t, a)),
                (None, None) => None,
                _ => {
                    return Err(PyValueError::new_err(
                        "tool_weight and arg_weight must be given together",
                    ))
                }
            };
            Ok(CallPacker {
                step_type,
                calls_of,
                as_call,
                norm,
                value_error,
                canon,
                ascii_steps,
                weights,
                summation: summation(compensated),
                tools: Interner::new(interner_type.clone_ref(py)),
                names: Interner::new(interner_type.clone_ref(py)),
                values: Interner::new(interner_type),
                raw_seen: SeenObjects::default(),
                raw_strings: presized(),
                canon_buffer: Vec::new(),
                table: CallTableBuilder::default(),
                weights_buffer: Vec::new(),
                scratch: CallScratch::default(),
            })
        })
    }

    /// Forget everything packed so far (the packer can then serve another batch).
    #[pyo3(name = "reset")]
    fn py_reset(&mut self) {
        self.reset();
    }

    /// `(call_ids uint32, offsets int64, total_mass list[float], n_steps list[int])` of the
    /// trajectories, like the twin's `_Preparer.pack`.
    fn pack<'py>(
        &mut self,
        py: Python<'py>,
        trajectories: &Bound<'py, PyAny>,
    ) -> PyResult<Packed<'py>> {
        guarded(|| {
            let (totals, lengths) = (PyList::empty(py), PyList::empty(py));
            let side = self.pack_side(py, trajectories.try_iter()?, 0, &totals, &lengths)?;
            Ok((
                side.ids.into_pyarray(py),
                side.offsets.into_pyarray(py),
                totals,
                lengths,
            ))
        })
    }

    /// `(distances, pred total mass, pred n_steps, gold total mass, gold n_steps)` of every pair
    /// `(preds[k], golds[k])`, the twin's `_Preparer.score_pairs`. Pairs are taken in chunks: each
    /// starts from an empty table (a pair's distance depends on its own calls only), is packed,
    /// then scored by the Needleman–Wunsch kernel: this thread packs (with the GIL) while up to
    /// `threads - 1` others score the chunks already packed (`threads` 0: all cores); this thread
    /// joins them without the GIL once everything is packed. A batch of one chunk is packed and
    /// scored on this thread. Afterwards the packer holds the last chunk.
    fn score_pairs<'py>(
        &mut self,
        py: Python<'py>,
        preds: &Bound<'py, PyAny>,
        golds: &Bound<'py, PyAny>,
        name_key: &Bound<'py, PyAny>,
        threads: usize,
    ) -> PyResult<ScoredPairs<'py>> {
        guarded(|| {
            let preds: Vec<Bound<'py, PyAny>> = preds.try_iter()?.collect::<PyResult<_>>()?;
            let golds: Vec<Bound<'py, PyAny>> = golds.try_iter()?.collect::<PyResult<_>>()?;
            if preds.len() != golds.len() {
                return Err(PyValueError::new_err(format!(
                    "preds and golds must hold the same number of pairs ({} vs {})",
                    preds.len(),
                    golds.len()
                )));
            }
            let n = preds.len();
            let workers = crate::parallel::worker_count(threads);
            // several chunks per scoring thread, so that packing (this thread, with the GIL) overlaps
            // scoring (the others)
            let chunk_size = (n / (4 * workers)).clamp(MIN_CHUNK_PAIRS, CHUNK_PAIRS);
            let (p_totals, p_lengths) = (PyList::empty(py), PyList::empty(py));
            let (g_totals, g_lengths) = (PyList::empty(py), PyList::empty(py));
            if n <= chunk_size {
                let (a, b, sorted) = self.pack_pairs(
                    py,
                    (0, (&preds, &golds)),
                    (&p_totals, &p_lengths),
                    (&g_totals, &g_lengths),
                    name_key,
                )?;
                let raws = score_packed(self.table.rows(), &sorted, &a, &b, &mut self.scratch);
                return Ok((
                    PyList::new(py, raws)?,
                    p_totals,
                    p_lengths,
                    g_totals,
                    g_lengths,
                ));
            }
            let scored = crate::parallel::make_and_score(
                py,
                n,
                chunk_size,
                workers,
                |start, end| {
                    let (a, b, sorted) = self.pack_pairs(
                        py,
                        (start, (&preds[start..end], &golds[start..end])),
                        (&p_totals, &p_lengths),
                        (&g_totals, &g_lengths),
                        name_key,
                    )?;
                    Ok(PackedChunk {
                        rows: self.table.rows().clone(),
                        sorted,
                        a,
                        b,
                    })
                },
                CallScratch::default,
                |scratch, c: PackedChunk| score_packed(&c.rows, &c.sorted, &c.a, &c.b, scratch),
                "a trajectory scoring thread failed",
            )?;
            let mut raws = vec![0.0; n];
            for (start, distances) in scored {
                raws[start..start + distances.len()].copy_from_slice(&distances);
            }
            Ok((
                PyList::new(py, raws)?,
                p_totals,
                p_lengths,
                g_totals,
                g_lengths,
            ))
        })
    }

    /// `(tools, names, values)`: the interned objects in id order (for tests and debugging; numbers
    /// read natively come back as `int` when integral, else `float`).
    fn interned<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>)> {
        guarded(|| {
            let list = |interner: &Interner| -> PyResult<Bound<'py, PyList>> {
                let objects = (0..interner.keys.len())
                    .map(|id| interner.object(py, id))
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, objects)
            };
            Ok((list(&self.tools)?, list(&self.names)?, list(&self.values)?))
        })
    }

    /// The call table of everything packed so far, every row's arguments sorted by the rank of
    /// their names under `name_key` (the twin's `_name_key`).
    fn table<'py>(
        &self,
        py: Python<'py>,
        name_key: &Bound<'py, PyAny>,
    ) -> PyResult<TableArrays<'py>> {
        guarded(|| {
            let sorted = self.sorted_arguments(py, name_key)?;
            let rows = self.table.rows();
            Ok((
                rows.tools.clone().into_pyarray(py),
                rows.mass.clone().into_pyarray(py),
                rows.offsets.clone().into_pyarray(py),
                sorted.names.into_pyarray(py),
                sorted.values.into_pyarray(py),
                sorted.weights.into_pyarray(py),
            ))
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CallPacker>()
}
