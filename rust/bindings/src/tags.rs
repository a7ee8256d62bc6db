//! The compiled reader of tag sequences for span F1 ([`span_read_tags`]), whose Python twin is
//! `_TagTable.encode` in `scorekit.metrics.spans`: it turns the tag strings of a batch of
//! sentences into integer ids, extending a known tag → id mapping in order of first appearance,
//! so both give the same arrays.

use foldhash::HashMap as FastMap;
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};
use pyo3::{ffi, Borrowed};

use crate::objects::prefetch;
use crate::parallel::guarded;

/// How many sentences ahead of use the reader asks the CPU to load: the sentences of a large batch
/// are small objects scattered over the heap, and their cache misses then overlap instead of
/// following one another.
const PREFETCH_AHEAD: usize = 8;

/// Slots of the cache of tag objects already read (a power of two).
const CACHE_SLOTS: usize = 1 << 10;

/// Tags a `uint8` id array can hold.
const NARROW_TAGS: usize = 256;

/// Ids of the tags (`uint8` while the known and new tags number at most 256, else `int32`).
enum Ids {
    Narrow(Vec<u8>),
    Wide(Vec<i32>),
}

impl Ids {
    fn push(&mut self, id: u32) {
        match self {
            Ids::Narrow(ids) => ids.push(id as u8),
            Ids::Wide(ids) => ids.push(id as i32),
        }
    }

    /// Called while the tags number `count`: widens the ids when they no longer fit a byte.
    fn fit(&mut self, count: usize) {
        if count > NARROW_TAGS {
            if let Ids::Narrow(ids) = self {
                *self = Ids::Wide(ids.iter().map(|&id| i32::from(id)).collect());
            }
        }
    }
}

/// Tag → id over the UTF-8 bytes of the tags, with a direct-mapped cache by object address in
/// front: a tag object met again is found without reading it (the objects stay alive, and so keep
/// their address, for the whole call, since no Python code runs).
struct Interner<'a, 'py> {
    ids: FastMap<&'a [u8], u32>,
    cache: Vec<(usize, u32)>,
    /// The tags not known at the start, in order of first appearance.
    new: Vec<Borrowed<'a, 'py, PyAny>>,
    count: usize,
}

impl<'a, 'py> Interner<'a, 'py> {
    fn new(known: usize) -> Self {
        Interner {
            ids: FastMap::with_capacity_and_hasher(known * 2, Default::default()),
            cache: vec![(0, 0); CACHE_SLOTS],
            new: Vec::new(),
            count: known,
        }
    }

    /// The id of `tag`, the next one when it is new; `None` when `tag` is not a tag
    /// [`tag_bytes`] reads.
    fn id(&mut self, tag: Borrowed<'a, 'py, PyAny>) -> PyResult<Option<u32>> {
        let address = tag.as_ptr() as usize;
        let slot = (address >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (usize::BITS - CACHE_SLOTS.trailing_zeros());
        let (cached, cached_id) = self.cache[slot];
        if cached == address {
            return Ok(Some(cached_id));
        }
        let Some(bytes) = tag_bytes(tag) else {
            return Ok(None);
        };
        let id = match self.ids.get(bytes) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.count)
                    .ok()
                    .filter(|&id| id <= i32::MAX as u32)
                    .ok_or_else(|| PyValueError::new_err("more than 2**31 distinct tags"))?;
                self.ids.insert(bytes, id);
                self.new.push(tag);
                self.count += 1;
                id
            }
        };
        self.cache[slot] = (address, id);
        Ok(Some(id))
    }
}

/// The UTF-8 bytes of an exact `str` other than `""`, borrowed as long as the object is; `None`
/// for anything else, a lone surrogate included.
fn tag_bytes<'a>(tag: Borrowed<'a, '_, PyAny>) -> Option<&'a [u8]> {
    exact_str_bytes(tag).filter(|bytes| !bytes.is_empty())
}

/// The UTF-8 bytes of an exact `str`, borrowed as long as the object is; `None` for anything
/// else, a lone surrogate included.
pub(crate) fn exact_str_bytes<'a>(text: Borrowed<'a, '_, PyAny>) -> Option<&'a [u8]> {
    let string = text.cast_exact::<PyString>().ok()?;
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `string` is a live `str`; the UTF-8 buffer CPython returns (or caches in the object)
    // lives as long as the object, which outlives the call.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(string.as_ptr(), &mut size) };
    if data.is_null() {
        // SAFETY: the GIL is held; the failed conversion left an exception set, which is dropped.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    // SAFETY: CPython returned `size` bytes at `data`, alive as long as the object.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) })
}

/// A sentence: an exact `list` or `tuple`, read by index.
#[derive(Clone, Copy)]
enum Sentence<'a, 'py> {
    List(Borrowed<'a, 'py, PyList>),
    Tuple(Borrowed<'a, 'py, PyTuple>),
}

impl<'a, 'py> Sentence<'a, 'py> {
    fn of(object: Borrowed<'a, 'py, PyAny>) -> Option<Self> {
        if let Ok(list) = object.cast_exact::<PyList>() {
            return Some(Sentence::List(list));
        }
        object.cast_exact::<PyTuple>().ok().map(Sentence::Tuple)
    }

    fn len(self) -> usize {
        match self {
            Sentence::List(list) => list.len(),
            Sentence::Tuple(tuple) => tuple.len(),
        }
    }

    /// Item `k < self.len()`, borrowed as long as the sentence is.
    fn get(self, k: usize) -> Borrowed<'a, 'py, PyAny> {
        debug_assert!(k < self.len());
        // SAFETY: `k` is in range (the getters return a borrowed, non-null reference), and the
        // reader runs no Python code, so no list shrinks and no item is freed while borrowed.
        unsafe {
            let item = match self {
                Sentence::List(list) => ffi::PyList_GetItem(list.as_ptr(), k as ffi::Py_ssize_t),
                Sentence::Tuple(tuple) => {
                    ffi::PyTuple_GetItem(tuple.as_ptr(), k as ffi::Py_ssize_t)
                }
            };
            Borrowed::from_ptr(self.py(), item)
        }
    }

    fn py(self) -> Python<'py> {
        match self {
            Sentence::List(list) => list.py(),
            Sentence::Tuple(tuple) => tuple.py(),
        }
    }
}

type TagIds<'py> = (Bound<'py, PyAny>, Bound<'py, PyList>);

/// Read the tags of `sentences` (a list of lists or tuples of `str`) into ids: `(ids, new tags)`,
/// the ids of every sentence's tags one after the other, `uint8` when the known
/// and new tags number at most 256, else `int32`. `known` maps the tags met before to their ids
/// `0..len(known)`; a tag not in it takes the next id, and the new tags come back in order of
/// first appearance (the `str` objects met first). `None`, before anything is consumed, when
/// `sentences` is not exactly a `list`, some sentence not exactly a `list` or `tuple`, or some
/// tag (known ones included) not exactly a non-empty `str` or holding a lone surrogate: the
/// Python reader handles those. The GIL is held throughout, and no Python code runs.
#[pyfunction]
fn span_read_tags<'py>(
    py: Python<'py>,
    sentences: &Bound<'py, PyAny>,
    known: &Bound<'py, PyDict>,
) -> PyResult<Option<TagIds<'py>>> {
    guarded(|| {
        let Ok(sentences) = sentences.as_borrowed().cast_exact::<PyList>() else {
            return Ok(None);
        };
        let known = known.as_borrowed();
        let mut interner = Interner::new(known.len());
        let mut position = 0;
        let mut key = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: `known` is a live dict (its type checked by PyO3), held by the caller; the GIL is
        // held and the loop runs no Python code (exact-type casts, C conversions), so the dict is
        // not resized while iterated. Reached by tests/test_span_tags.py.
        while unsafe { ffi::PyDict_Next(known.as_ptr(), &mut position, &mut key, &mut value) } != 0
        {
            // SAFETY: PyDict_Next returned non-null borrowed references to an entry of `known`,
            // which keeps them alive for the whole call (it is not changed, see above).
            let (tag, id) = unsafe { (Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, value)) };
            // Exactly an `int`, so that reading it runs no Python code (an `__index__`).
            let id: u32 = id
                .cast_exact::<PyInt>()
                .map_err(|_| PyValueError::new_err("known tag ids must be int"))?
                .extract()?;
            let Some(bytes) = tag_bytes(tag) else {
                return Ok(None); // a tag the Python reader interned (a `str` subclass, say)
            };
            if id as usize >= known.len() || interner.ids.insert(bytes, id).is_some() {
                return Err(PyValueError::new_err(
                    "known tag ids must be 0..len(known), once each",
                ));
            }
        }

        let mut lengths = Vec::with_capacity(sentences.len());
        let mut rows = Vec::with_capacity(sentences.len());
        let outer = Sentence::List(sentences);
        for k in 0..sentences.len() {
            if k + PREFETCH_AHEAD < sentences.len() {
                prefetch(outer.get(k + PREFETCH_AHEAD).as_ptr());
            }
            let Some(sentence) = Sentence::of(outer.get(k)) else {
                return Ok(None);
            };
            lengths.push(sentence.len());
            rows.push(sentence);
        }
        let total = lengths.iter().sum();
        let mut ids = if interner.count <= NARROW_TAGS {
            Ids::Narrow(Vec::with_capacity(total))
        } else {
            Ids::Wide(Vec::with_capacity(total))
        };
        for (sentence, &length) in rows.iter().zip(&lengths) {
            for j in 0..length {
                let Some(id) = interner.id(sentence.get(j))? else {
                    return Ok(None);
                };
                ids.fit(interner.count);
                ids.push(id);
            }
        }
        let array = match ids {
            Ids::Narrow(ids) => ids.into_pyarray(py).into_any(),
            Ids::Wide(ids) => ids.into_pyarray(py).into_any(),
        };
        Ok(Some((array, PyList::new(py, interner.new)?)))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(span_read_tags, m)?)?;
    Ok(())
}
