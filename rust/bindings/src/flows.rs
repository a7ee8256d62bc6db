//! The compiled fast path of `scorekit.flows`: decompose parsed workflow JSON (Python dicts, lists and
//! strings) into trees and compute FlowSim, TreeBLEU, Trigger Match and Component Match for a batch of
//! pairs.
//!
//! The decomposition rules are those of `python/scorekit/flows.py` (documented in `docs/flows.md`),
//! which stays the reference: any document this path does not recognise as a plain, valid workflow
//! (a non-`dict` mapping, a `str` subclass, an invalid or unusual shape) is flagged instead of scored,
//! and the Python side scores that pair itself (and produces the error message).
//!
//! Pipeline: the calling thread (holding the GIL) decomposes the pairs chunk by chunk into flat
//! arrays of label ids; `threads - 1` scoring threads take the finished chunks, without the GIL,
//! while the next ones are decomposed, and the calling thread joins them once it is done. On two
//! cores this keeps one core on the (serial) decomposition instead of sharing it three ways.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::Borrowed;
use scorekit_kernels::exact_i64;
use scorekit_kernels::tree::{zhang_shasha, CostModel, PostorderTree, Workspace};

use crate::objects::prefetch;
use crate::parallel::guarded;

/// Nesting depth of inline `children` lists beyond which a document is not a workflow.
const MAX_DEPTH: usize = 200;
/// Most pairs decomposed before their chunk is handed to the scoring threads.
const CHUNK: usize = 1024;
/// Marks "no node" in the tree arena and a null trigger.
const NONE: u32 = u32::MAX;
/// Deepest nesting, and most values, of a trigger object whose exact comparison runs here; a larger
/// one is compared by Python.
const MAX_TRIGGER_DEPTH: usize = 512;
const MAX_TRIGGER_VALUES: usize = 1 << 16;

/// The document is not handled here (invalid, or outside the plain-JSON fast path).
struct Fallback;

type Step<T> = Result<T, Fallback>;

// -- hashing and interning --------------------------------------------------------------------------

/// A multiply-rotate hasher for short keys (label bytes, small integers), seeded per batch.
#[derive(Clone, Copy)]
struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(23) ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }
}

/// Builds [`FastHasher`]s from one random seed (label texts come from model outputs).
#[derive(Clone, Copy)]
struct Seeded(u64);

impl Default for Seeded {
    fn default() -> Self {
        Seeded(std::collections::hash_map::RandomState::new().hash_one(0x5C0E_u64))
    }
}

impl BuildHasher for Seeded {
    type Hasher = FastHasher;

    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.0)
    }
}

/// Ids of label texts, shared by every flow of the batch: equal ids mean equal texts, exactly as
/// Python's string equality.
struct Interner {
    labels: HashMap<Box<[u8]>, u32, Seeded>,
}

impl Interner {
    fn new() -> Self {
        Interner {
            labels: HashMap::with_hasher(Seeded::default()),
        }
    }

    fn label(&mut self, text: &[u8]) -> u32 {
        if let Some(&id) = self.labels.get(text) {
            return id;
        }
        let id = self.labels.len() as u32;
        self.labels.insert(text.into(), id);
        id
    }
}

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
    let text = value.cast_exact::<PyString>().map_err(|_| Fallback)?;
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live exact str; the buffer it returns lives as long as the object.
    unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(text.as_ptr(), &mut size);
        if data.is_null() {
            ffi::PyErr_Clear();
            return Err(Fallback);
        }
        Ok(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
    }
}

/// Whether `value` is JSON made of exact types only (`dict` with `str` keys, `list`, `str`, `int`,
/// `float`, `bool`, `None`), within `depth` containers and `budget` values: comparing two such values
/// with Python's `==` runs C code only, never a Python `__eq__`.
fn plain_json(value: &Bound<'_, PyAny>, depth: usize, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let ptr = value.as_ptr();
    // SAFETY: `ptr` is a live object; only its type is read.
    let scalar = unsafe {
        let kind = ffi::Py_TYPE(ptr);
        ptr == ffi::Py_None()
            || kind == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
            || kind == std::ptr::addr_of_mut!(ffi::PyLong_Type)
            || kind == std::ptr::addr_of_mut!(ffi::PyFloat_Type)
            || kind == std::ptr::addr_of_mut!(ffi::PyBool_Type)
    };
    if scalar {
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

/// An `order` value under Python's equality: ints and integral floats compare as integers, other
/// floats by value, strings by content (NaN, huge ints and other types are left to Python).
#[derive(PartialEq, Eq, Hash)]
enum OrderKey {
    Int(i64),
    Float(u64),
    Str(Box<[u8]>),
}

fn order_key(value: &Bound<'_, PyAny>) -> Step<OrderKey> {
    let ptr = value.as_ptr();
    // SAFETY: `ptr` is a live object and the GIL is held; errors are cleared.
    unsafe {
        let kind = ffi::Py_TYPE(ptr);
        if kind == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
            let mut overflow = 0;
            let n = ffi::PyLong_AsLongLongAndOverflow(ptr, &mut overflow);
            if overflow != 0 || (n == -1 && !ffi::PyErr_Occurred().is_null()) {
                ffi::PyErr_Clear();
                return Err(Fallback);
            }
            return Ok(OrderKey::Int(n));
        }
        if kind == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
            let f = ffi::PyFloat_AsDouble(ptr);
            if f.is_nan() {
                return Err(Fallback);
            }
            return Ok(match exact_i64(f) {
                Some(n) => OrderKey::Int(n),
                None => OrderKey::Float(f.to_bits()),
            });
        }
    }
    Ok(OrderKey::Str(exact_str(value)?.into()))
}

// -- decomposition ----------------------------------------------------------------------------------

/// The tree of one flow under construction: labels and first-child / next-sibling links.
#[derive(Default)]
struct Arena {
    label: Vec<u32>,
    first_child: Vec<u32>,
    last_child: Vec<u32>,
    next_sibling: Vec<u32>,
}

impl Arena {
    fn clear(&mut self) {
        self.label.clear();
        self.first_child.clear();
        self.last_child.clear();
        self.next_sibling.clear();
    }

    fn len(&self) -> usize {
        self.label.len()
    }

    fn add(&mut self, label: u32) -> u32 {
        self.label.push(label);
        self.first_child.push(NONE);
        self.last_child.push(NONE);
        self.next_sibling.push(NONE);
        (self.label.len() - 1) as u32
    }

    /// Append `child` (not yet attached anywhere) to `parent`'s children.
    fn attach(&mut self, parent: u32, child: u32) {
        let (p, c) = (parent as usize, child as usize);
        match self.last_child[p] {
            NONE => self.first_child[p] = child,
            last => self.next_sibling[last as usize] = child,
        }
        self.last_child[p] = child;
        self.next_sibling[c] = NONE;
    }
}

/// Per-list scratch of [`Decomposer::forest`], reused across lists and flows.
#[derive(Default)]
struct Scope {
    nodes: Vec<u32>,
    by_order: HashMap<OrderKey, u32, Seeded>,
    block_keys: Vec<(u32, OrderKey)>,
    blocks: Vec<(u32, u32)>,
    parent_of: Vec<u32>,
}

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

/// The flat arrays of a chunk of decomposed flows, ready to score without the GIL.
#[derive(Default)]
struct Chunk {
    /// Two per pair (prediction, then reference); `None` when the flow falls back to Python.
    flows: Vec<Option<FlowSpan>>,
    /// Trigger Match of each pair, decided while decomposing (an exact match needs the objects).
    trigger_match: Vec<bool>,
    labels: Vec<u32>,
    lld: Vec<u32>,
    /// The 1-height subtrees (S(F), with repeats) of each flow: `[n, label, n child labels]` each.
    subtrees: Vec<u32>,
    /// Sorted, distinct component label ids of each flow.
    components: Vec<u32>,
}

/// Where one flow's data lies in its [`Chunk`]'s arrays.
#[derive(Clone, Copy)]
struct FlowSpan {
    nodes: (u32, u32),
    subtrees: (u32, u32),
    components: (u32, u32),
}

/// The trigger of a decomposed flow: its type's label id (or [`NONE`]) and the trigger itself.
type Trigger<'a, 'py> = (u32, Value<'a, 'py>);

/// Turns parsed documents into a [`Chunk`]; owns the interners and every scratch buffer.
struct Decomposer<'py> {
    keys: Keys<'py>,
    interner: Interner,
    max_nodes: usize,
    /// Trigger Match compares whole triggers (StarFlow's `==`), not only their types.
    exact_triggers: bool,
    arena: Arena,
    spare_scopes: Vec<Scope>,
    text: Vec<u8>,
    recent: RecentLabels,
    stack: Vec<(u32, u32, u32)>,
    fixed: [u32; 3],
}

impl<'py> Decomposer<'py> {
    fn new(py: Python<'py>, max_nodes: usize, exact_triggers: bool) -> Self {
        let mut interner = Interner::new();
        let fixed = [
            interner.label(b"flow"),
            interner.label(b"trigger"),
            interner.label(b"components"),
        ];
        Decomposer {
            keys: Keys::new(py),
            interner,
            max_nodes,
            exact_triggers,
            arena: Arena::default(),
            spare_scopes: Vec::new(),
            text: Vec::new(),
            recent: RecentLabels::new(),
            stack: Vec::new(),
            fixed,
        }
    }

    /// Decompose one document into `chunk`; its trigger, or `None` when the document falls back to
    /// Python.
    fn push<'a>(
        &mut self,
        flow: &'a Bound<'py, PyAny>,
        chunk: &mut Chunk,
    ) -> Option<Trigger<'a, 'py>> {
        let trigger = self.flow(flow).ok();
        let span = trigger.map(|_| self.emit(chunk));
        chunk.flows.push(span);
        trigger
    }

    /// Trigger Match of two decomposed flows: Python's `==` on the triggers (a missing trigger is
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
            (Some(p), Some(r)) => {
                // SAFETY: two live objects, plain JSON (`flow` checked), so no Python code runs.
                match unsafe { ffi::PyObject_RichCompareBool(p.as_ptr(), r.as_ptr(), ffi::Py_EQ) } {
                    -1 => {
                        // SAFETY: the GIL is held; the comparison's error is dropped.
                        unsafe { ffi::PyErr_Clear() };
                        Err(Fallback)
                    }
                    equal => Ok(equal == 1),
                }
            }
            _ => Ok(false),
        }
    }

    /// Read one document into the arena; returns its trigger.
    fn flow<'a>(&mut self, flow: &'a Bound<'py, PyAny>) -> Step<Trigger<'a, 'py>> {
        let dict = exact_dict(flow).ok_or(Fallback)?;
        let fields = self.keys.flow.scan(dict)?;
        if matches!(fields, [Value::Missing, Value::Missing]) {
            return Err(Fallback);
        }
        let trigger = match fields[TRIGGER].present() {
            None => NONE,
            Some(t) => match exact_dict(&t) {
                Some(object) => {
                    let kind = self.keys.trigger.scan(object)?[TRIGGER_TYPE]
                        .present()
                        .ok_or(Fallback)?;
                    let mut budget = MAX_TRIGGER_VALUES;
                    if self.exact_triggers && !plain_json(&t, MAX_TRIGGER_DEPTH, &mut budget) {
                        return Err(Fallback);
                    }
                    self.interner.label(exact_str(&kind)?)
                }
                None => self.interner.label(exact_str(&t)?),
            },
        };
        let [flow_label, trigger_label, components_label] = self.fixed;
        self.arena.clear();
        let root = self.arena.add(flow_label);
        let trigger_node = self.arena.add(trigger_label);
        self.arena.attach(root, trigger_node);
        if trigger != NONE {
            let leaf = self.arena.add(trigger);
            self.arena.attach(trigger_node, leaf);
        }
        let components_node = self.arena.add(components_label);
        self.arena.attach(root, components_node);
        if let Some(list) = fields[COMPONENTS].present() {
            self.forest(&list, 0, components_node)?;
        }
        if self.arena.len() > self.max_nodes {
            return Err(Fallback); // the size guard: Python reports it
        }
        Ok((trigger, fields[TRIGGER]))
    }

    /// The label id of one component: `category:definition` from its fields, or `action:<text>`
    /// for a bare string.
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
                    Value::Null => return Err(Fallback),
                    Value::Some(category) => Some(category),
                };
                let definition = match fields[DEFINITION] {
                    Value::Some(d) => d,
                    _ => fields[TYPE].present().ok_or(Fallback)?,
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
        self.text.clear();
        match category {
            None => self.text.extend_from_slice(b"action"),
            Some(category) => self.text.extend_from_slice(exact_str(&category)?),
        }
        self.text.push(b':');
        self.text.extend_from_slice(exact_str(&definition)?);
        let id = self.interner.label(&self.text);
        *self.recent.slot(key) = (key, id);
        Ok(id)
    }

    /// Add the forest of one component list under `parent`: `block` references resolved in the
    /// list, inline `children` lists as their own scope under their component.
    fn forest(&mut self, components: &Bound<'py, PyAny>, depth: usize, parent: u32) -> Step<()> {
        let list = components.cast_exact::<PyList>().map_err(|_| Fallback)?;
        if depth > MAX_DEPTH {
            return Err(Fallback);
        }
        // Lists nest, so their scratch is a stack of spares.
        let mut scope = self.spare_scopes.pop().unwrap_or_default();
        scope.nodes.clear();
        scope.by_order.clear();
        scope.block_keys.clear();
        scope.blocks.clear();
        let result = self.read_list(list, depth, &mut scope);
        let result = result.and_then(|()| self.resolve(&mut scope, parent));
        self.spare_scopes.push(scope);
        result
    }

    fn read_list(
        &mut self,
        list: &Bound<'py, PyList>,
        depth: usize,
        scope: &mut Scope,
    ) -> Step<()> {
        prefetch_items(list);
        for k in 0..list.len() {
            // SAFETY: `k` is in range and no code changes the list during a decomposition; the item
            // is borrowed from it.
            let component = unsafe {
                let item = ffi::PyList_GetItem(list.as_ptr(), k as ffi::Py_ssize_t);
                if item.is_null() {
                    ffi::PyErr_Clear();
                    return Err(Fallback);
                }
                Borrowed::from_ptr(list.py(), item)
            };
            let k = k as u32;
            let fields = match exact_dict(&component) {
                Some(dict) => Some(self.keys.component.scan(dict)?),
                None => None,
            };
            let label = self.component_label(fields.as_ref(), &component)?;
            let node = self.arena.add(label);
            if self.arena.len() > self.max_nodes {
                return Err(Fallback); // the size guard: Python reports it
            }
            scope.nodes.push(node);
            let Some(fields) = fields else {
                continue; // a bare string (component_label accepted only that)
            };
            if let Some(order) = fields[ORDER].present() {
                if scope.by_order.insert(order_key(&order)?, k).is_some() {
                    return Err(Fallback); // an order used twice
                }
            }
            if let Some(block) = fields[BLOCK].present() {
                // order_key rejects a bool (Python: True == 1, but a bool block is an error).
                scope.block_keys.push((k, order_key(&block)?));
            }
            if let Some(nested) = fields[CHILDREN].present() {
                self.forest(&nested, depth + 1, node)?;
            }
        }
        for (k, key) in scope.block_keys.drain(..) {
            let parent = *scope.by_order.get(&key).ok_or(Fallback)?;
            scope.blocks.push((k, parent));
        }
        Ok(())
    }

    /// Nest the blocked components under their parents and attach the rest to `parent`.
    fn resolve(&mut self, scope: &mut Scope, parent: u32) -> Step<()> {
        if scope.blocks.is_empty() {
            for &node in &scope.nodes {
                self.arena.attach(parent, node);
            }
            return Ok(());
        }
        scope.parent_of.clear();
        scope.parent_of.resize(scope.nodes.len(), NONE);
        for &(k, p) in &scope.blocks {
            scope.parent_of[k as usize] = p;
        }
        for &(k, _) in &scope.blocks {
            // A chain longer than the number of nested components goes round a cycle.
            let (mut at, mut steps) = (k, 0);
            while scope.parent_of[at as usize] != NONE {
                steps += 1;
                if steps > scope.blocks.len() {
                    return Err(Fallback);
                }
                at = scope.parent_of[at as usize];
            }
        }
        for &(k, p) in &scope.blocks {
            self.arena
                .attach(scope.nodes[p as usize], scope.nodes[k as usize]);
        }
        for (&node, &p) in scope.nodes.iter().zip(&scope.parent_of) {
            if p == NONE {
                self.arena.attach(parent, node);
            }
        }
        Ok(())
    }

    /// Walk the arena in post-order into `chunk`: labels, leftmost leaves, S(F) and the component
    /// label set.
    fn emit(&mut self, chunk: &mut Chunk) -> FlowSpan {
        let arena = &self.arena;
        let node_start = chunk.labels.len();
        let subtree_start = chunk.subtrees.len();
        // Frames: (node, next child, leftmost leaf of the first child), from the root (node 0).
        self.stack.clear();
        self.stack.push((0, arena.first_child[0], NONE));
        while let Some(frame) = self.stack.last_mut() {
            if frame.1 != NONE {
                let child = frame.1;
                frame.1 = arena.next_sibling[child as usize];
                self.stack
                    .push((child, arena.first_child[child as usize], NONE));
                continue;
            }
            let (node, _, first) = self.stack.pop().unwrap();
            let k = (chunk.labels.len() - node_start) as u32;
            let left = if first == NONE { k } else { first };
            let label = arena.label[node as usize];
            chunk.labels.push(label);
            chunk.lld.push(left);
            if let Some(parent) = self.stack.last_mut() {
                if parent.2 == NONE {
                    parent.2 = left;
                }
                let mut child = arena.first_child[node as usize];
                if child != NONE {
                    // Every 1-height subtree but the root's: (label, child labels...).
                    let at = chunk.subtrees.len();
                    chunk.subtrees.extend([0, label]);
                    while child != NONE {
                        chunk.subtrees.push(arena.label[child as usize]);
                        child = arena.next_sibling[child as usize];
                    }
                    chunk.subtrees[at] = (chunk.subtrees.len() - at - 2) as u32;
                }
            }
        }
        let node_end = chunk.labels.len();
        // Post-order ends with the components subtree, then the root: its nodes are components.
        let component_start = chunk.components.len();
        let first_component = node_start + chunk.lld[node_end - 2] as usize;
        chunk
            .components
            .extend_from_slice(&chunk.labels[first_component..node_end - 2]);
        sort_distinct(&mut chunk.components, component_start);
        FlowSpan {
            nodes: (node_start as u32, node_end as u32),
            subtrees: (subtree_start as u32, chunk.subtrees.len() as u32),
            components: (component_start as u32, chunk.components.len() as u32),
        }
    }
}

/// Sort `values[start..]` and drop its repeats.
fn sort_distinct(values: &mut Vec<u32>, start: usize) {
    values[start..].sort_unstable();
    let mut end = start;
    for k in start..values.len() {
        if end == start || values[k] != values[end - 1] {
            values[end] = values[k];
            end += 1;
        }
    }
    values.truncate(end);
}

// -- scoring ----------------------------------------------------------------------------------------

/// The S(F) sets of the two flows of a pair, as buffers reused across the pairs of a chunk.
type SubtreeSets<'a> = (Vec<&'a [u32]>, Vec<&'a [u32]>);

/// Size of the intersection of two sorted, distinct lists.
fn shared<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

impl Chunk {
    fn range(values: &[u32], (start, end): (u32, u32)) -> &[u32] {
        &values[start as usize..end as usize]
    }

    fn tree(&self, span: &FlowSpan) -> PostorderTree<'_> {
        PostorderTree {
            labels: Self::range(&self.labels, span.nodes),
            lld: Self::range(&self.lld, span.nodes),
        }
    }

    /// S(F) of one flow, sorted and without repeats, into `out`.
    fn subtree_set<'a>(&'a self, span: &FlowSpan, out: &mut Vec<&'a [u32]>) {
        out.clear();
        let mut rest = Self::range(&self.subtrees, span.subtrees);
        while let Some(&n) = rest.first() {
            let (subtree, tail) = rest[1..].split_at(n as usize + 1);
            out.push(subtree);
            rest = tail;
        }
        out.sort_unstable();
        out.dedup();
    }

    /// FlowSim, TreeBLEU, Trigger Match and Component Match of one decomposed pair.
    fn metrics<'a>(
        &'a self,
        p: &FlowSpan,
        r: &FlowSpan,
        trigger_match: bool,
        ws: &mut Workspace,
        (s1, s2): &mut SubtreeSets<'a>,
    ) -> [f64; 4] {
        let (t1, t2) = (self.tree(p), self.tree(r));
        let ted = zhang_shasha(&t1, &t2, &CostModel::UNIT, ws);
        let flowsim = 1.0 - ted / ((t1.len() + t2.len()) as f64);
        self.subtree_set(p, s1);
        self.subtree_set(r, s2);
        let treebleu = if s1.is_empty() {
            0.0
        } else {
            shared(s1, s2) as f64 / s1.len() as f64
        };
        let trigger_match = if trigger_match { 1.0 } else { 0.0 };
        let (c1, c2) = (
            Self::range(&self.components, p.components),
            Self::range(&self.components, r.components),
        );
        let both = shared(c1, c2);
        let union = c1.len() + c2.len() - both;
        let component_match = if union == 0 {
            0.0
        } else {
            both as f64 / union as f64
        };
        [flowsim, treebleu, trigger_match, component_match]
    }

    /// The metrics of every pair of the chunk (NaN for a pair left to Python), on this thread.
    fn score(&self, ws: &mut Workspace) -> Vec<[f64; 4]> {
        let mut sets = SubtreeSets::default();
        self.flows
            .chunks_exact(2)
            .zip(&self.trigger_match)
            .map(|(pair, &trigger_match)| match (&pair[0], &pair[1]) {
                (Some(p), Some(r)) => self.metrics(p, r, trigger_match, ws, &mut sets),
                _ => [f64::NAN; 4],
            })
            .collect()
    }
}

/// Decompose pairs `start..end` into a fresh chunk.
fn decompose_chunk<'py>(
    decomposer: &mut Decomposer<'py>,
    preds: &Bound<'py, PyList>,
    refs: &Bound<'py, PyList>,
    start: usize,
    end: usize,
) -> PyResult<Chunk> {
    let mut chunk = Chunk::default();
    chunk.flows.reserve(2 * (end - start));
    chunk.trigger_match.reserve(end - start);
    for k in start..end {
        let (pred, reference) = (preds.get_item(k)?, refs.get_item(k)?);
        let p = decomposer.push(&pred, &mut chunk);
        let r = decomposer.push(&reference, &mut chunk);
        let matched = match (p, r) {
            (Some(p), Some(r)) => decomposer.triggers_match(p, r),
            _ => Ok(false),
        };
        if matched.is_err() {
            chunk.flows[2 * (k - start)] = None;
        }
        chunk.trigger_match.push(matched.unwrap_or(false));
    }
    Ok(chunk)
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
                let chunk = decompose_chunk(&mut decomposer, preds, refs, start, end)?;
                for (k, pair) in chunk.flows.chunks_exact(2).enumerate() {
                    status[start + k] =
                        u8::from(pair[0].is_none()) | (u8::from(pair[1].is_none()) << 1);
                }
                Ok(chunk)
            },
            Workspace::new,
            |ws, chunk: Chunk| chunk.score(ws),
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
