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
//! The time goes to fetching scattered objects from memory, not to arithmetic, so:
//! - the classes keep their fields in `__slots__`, and the reader takes them at their offsets
//!   ([`SlotLayout`]); an `Episode` also keeps its cost's counts and latency in a [`Tally`] inside
//!   the object, next to its `success` and `run` slots, so the reader fetches one object an
//!   episode (runs are few, and stay in cache); episodes of other classes (subclasses,
//!   duck-typed episodes) are read with `getattr`;
//! - it starts loading the episodes ahead while it reads one ([`Layout::prefetch_ahead`]);
//! - on a machine with more than one core, long lists are read a chunk at a time by this thread,
//!   which keeps the GIL, and a helper from the pool, each claiming the next block of the chunk
//!   ([`Chunk`]). The helper only reads memory, which changes nothing; no Python code runs
//!   anywhere meanwhile, and this thread returns only once every block the helper claimed is
//!   read. Each block adds up into a [`Part`], whose dollars and latencies are then summed in
//!   episode order. Wherever an episode needs Python (a model met for the first time, an episode
//!   read by `getattr`), this thread reads on alone from that episode.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use numpy::IntoPyArray;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};
use scorekit_kernels::bootstrap::RunningSum;

use crate::bootstrap::summation;
use crate::objects::{prefetch, SlotLayout};
use crate::parallel::{guarded, spawn_on_pool, worker_count};
use crate::tally::{tallied, tally_of, CostLayout, CostState, Tally, COST_FIELDS};

/// Slots of [`Reader::recent_models`].
const RECENT_MODELS: usize = 4;
/// How far ahead of the reader episodes are fetched, and the items of the list taken.
const LEAD: usize = 16;
/// Size of the ring of items [`Window`] keeps.
const RING: usize = (LEAD + 1).next_power_of_two();
/// Lists shorter than this are read by this thread alone (handing work over costs more).
const PARALLEL_FROM: usize = 1 << 14;
/// Episodes read by two threads at once, and added up by this thread between folds.
const CHUNK: usize = 1 << 15;
/// Episodes this thread reads alone at the start, and after an episode that needed it: they meet
/// the models (whose rates only this thread may ask for) before two threads read on.
const PILOT: usize = 1 << 10;

/// `Row::flags` bit: the outcome is true.
const SUCCESS: u8 = 1;
/// `Row::flags` bit: the outcome is `None` (ungraded).
const UNGRADED: u8 = 2;
/// `Row::flags` bit: the episode has a cost.
const COST: u8 = 4;
/// `Row::flags` bit: the cost has a latency.
const LATENCY: u8 = 8;

/// What the report needs of one episode.
#[derive(Clone, Copy, Default)]
struct Row {
    flags: u8,
    tokens: [i64; 4],
    latency: f64,
    /// the address of the run's model string (of `""` for a run of `None`), when runs are read
    model: usize,
}

/// An episode read from memory.
enum Read {
    Row(Row),
    /// Not of the slotted `Episode` class: read with `getattr`.
    Other,
    /// Not plain: the one-by-one path decides.
    NotPlain,
}

/// An episode the columns do not take: the one-by-one path decides.
struct NotPlain;

/// The addresses and slot layouts the readers compare with and read through: plain numbers, so
/// that a helper thread can share them.
#[derive(Clone, Copy)]
struct Layout {
    episode_type: usize,
    /// the `success` and `run` slots of the `Episode` class and where its instances keep their
    /// cost's [`Tally`], when the class keeps one
    episode: Option<EpisodeLayout>,
    /// the plain cost class (to read costs got with `getattr`)
    cost: Option<CostLayout>,
    run_type: usize,
    run: Option<SlotLayout<1>>,
    none: usize,
    yes: usize,
    no: usize,
    /// the interned `""`: the model of a run of `None`
    empty: usize,
    read_runs: bool,
}

/// Where an `Episode` keeps what the report reads of it.
#[derive(Clone, Copy)]
struct EpisodeLayout {
    /// `success` and `run`
    slots: SlotLayout<2>,
    tally: usize,
    /// the last byte read, from the object's start: the reader fetches the object's lines up to it
    last_byte: usize,
}

impl Layout {
    /// The row of `episode`, when it is of the `Episode` class with a tally.
    ///
    /// # Safety
    /// `episode` is live, and nothing changes or frees the objects it reaches while this runs.
    #[inline(always)]
    unsafe fn read(&self, episode: *mut ffi::PyObject) -> Read {
        match self.episode {
            Some(layout) if ffi::Py_TYPE(episode) as usize == self.episode_type => {
                let [success, run] = layout.slots.fields(episode);
                self.row(success, tally_of(episode, layout.tally).load(), run)
            }
            _ => Read::Other,
        }
    }

    /// What `cost` (a field got with `getattr`: null when it raised) is.
    ///
    /// # Safety
    /// `cost` is null or live, and nothing changes it while this runs.
    unsafe fn cost_state(&self, cost: *mut ffi::PyObject) -> CostState {
        match self.cost {
            Some(layout) => layout.state(cost),
            None if cost.is_null() => CostState::Unset,
            None if cost as usize == self.none => CostState::Absent,
            None => CostState::Other,
        }
    }

    /// The row of an episode with these fields (a null one is an unset slot, which `getattr`
    /// would raise for: not plain).
    ///
    /// # Safety
    /// As [`Layout::read`], for the fields.
    #[inline(always)]
    unsafe fn row(
        &self,
        success: *mut ffi::PyObject,
        cost: CostState,
        run: *mut ffi::PyObject,
    ) -> Read {
        if success.is_null() {
            return Read::NotPlain;
        }
        let mut row = Row::default();
        match success as usize {
            s if s == self.yes => row.flags = SUCCESS,
            s if s == self.none => row.flags = UNGRADED,
            s if s == self.no => {}
            _ => return Read::NotPlain,
        }
        let (tokens, latency) = match cost {
            CostState::Absent => return Read::Row(row),
            CostState::Plain { tokens, latency } => (tokens, latency),
            CostState::Unset | CostState::Other => return Read::NotPlain,
        };
        row.flags |= COST;
        row.tokens = tokens;
        if let Some(latency) = latency {
            row.latency = latency;
            row.flags |= LATENCY;
        }
        if self.read_runs {
            let model = if run.is_null() {
                return Read::NotPlain;
            } else if run as usize == self.none {
                self.empty as *mut ffi::PyObject
            } else {
                match self.run {
                    Some(slots) if ffi::Py_TYPE(run) as usize == self.run_type => {
                        slots.fields(run)[0]
                    }
                    _ => return Read::NotPlain,
                }
            };
            if model.is_null() || ffi::PyUnicode_CheckExact(model) == 0 {
                return Read::NotPlain;
            }
            row.model = model as usize;
        }
        Read::Row(row)
    }

    /// Start loading the episode `LEAD` ahead of episode `k` (`item`: an episode's address, for
    /// indices below `len`): the lines of the object up to its last byte read. Its run is one of
    /// a few, already in cache. An episode then costs about one memory latency shared among the
    /// episodes in flight, rather than one in a row.
    ///
    /// # Safety
    /// The items below `len` are live and unchanged while this runs.
    #[inline(always)]
    unsafe fn prefetch_ahead(
        &self,
        k: usize,
        len: usize,
        item: impl Fn(usize) -> *mut ffi::PyObject,
    ) {
        if let (Some(layout), true) = (self.episode, k + LEAD < len) {
            let episode = item(k + LEAD) as *const u8;
            prefetch(episode);
            prefetch(episode.wrapping_add(layout.last_byte));
        }
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

/// What a stretch of episodes adds up: counts, and the dollars and latencies to be summed in
/// episode order.
#[derive(Default)]
struct Part {
    n_success: usize,
    ungraded: Vec<usize>,
    n_timed: usize,
    tokens: i128,
    /// every episode's dollars, when priced
    usd: Vec<f64>,
    /// the latencies of the timed episodes
    latency: Vec<f64>,
}

impl Part {
    /// Add episode `k`'s row, priced at `rates` (for an episode with a cost, when `priced`).
    #[inline(always)]
    fn add(
        &mut self,
        row: &Row,
        k: usize,
        rates: Option<[f64; 4]>,
        priced: bool,
    ) -> Result<(), NotPlain> {
        if row.flags & COST != 0 && priced && row.tokens.iter().any(|&x| x < 0) {
            return Err(NotPlain); // the reference raises its error for a negative count
        }
        self.n_success += usize::from(row.flags & SUCCESS != 0);
        if row.flags & UNGRADED != 0 {
            self.ungraded.push(k);
        }
        if row.flags & LATENCY != 0 {
            self.latency.push(row.latency);
            self.n_timed += 1;
        }
        self.tokens += row.tokens.iter().map(|&x| x as i128).sum::<i128>();
        if priced {
            self.usd.push(match rates {
                // count * rate per kind, then ((input + output) + cached) + reasoning, as
                // dollars() adds them
                Some(r) if row.flags & COST != 0 => {
                    let t = row.tokens.map(|x| x as f64);
                    (t[0] * r[0] + t[1] * r[1]) + t[2] * r[2] + t[3] * r[3]
                }
                _ => 0.0, // no cost: 0.0, as the reference adds
            });
        }
        Ok(())
    }
}

/// The totals of the episodes read so far.
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

impl Totals {
    /// Add the next stretch of episodes, emptying `part`.
    fn fold(&mut self, part: &mut Part) {
        self.n_success += std::mem::take(&mut part.n_success);
        self.ungraded.append(&mut part.ungraded);
        self.n_timed += std::mem::take(&mut part.n_timed);
        self.tokens += std::mem::take(&mut part.tokens);
        for x in part.latency.drain(..) {
            self.latency.add(x);
        }
        for &x in &part.usd {
            self.dollars.add(x);
        }
        if let Some(all) = &mut self.per_episode {
            all.extend_from_slice(&part.usd);
        }
        part.usd.clear();
    }
}

/// The items of the list being read by this thread, taken `LEAD` ahead of the reader into a ring
/// (borrowed addresses, valid while no Python code runs; taken afresh after some ran).
struct Window<'a, 'py> {
    list: &'a Bound<'py, PyList>,
    end: usize,
    ring: [*mut ffi::PyObject; RING],
}

impl<'a, 'py> Window<'a, 'py> {
    /// The window over items `start..end`.
    fn new(list: &'a Bound<'py, PyList>, start: usize, end: usize) -> Self {
        let mut window = Window {
            list,
            end,
            ring: [std::ptr::null_mut(); RING],
        };
        window.refill(start);
        window
    }

    /// Take items `from..from + LEAD` afresh (after Python code ran).
    fn refill(&mut self, from: usize) {
        for i in from..(from + LEAD).min(self.end) {
            self.ring[i % RING] = self.take(i);
        }
    }

    fn take(&self, i: usize) -> *mut ffi::PyObject {
        // SAFETY: a live list; `i < end`, within its length while no Python code runs; the item
        // is borrowed
        unsafe { ffi::PyList_GetItem(self.list.as_ptr(), i as ffi::Py_ssize_t) }
    }

    /// Item `k` (borrowed), after starting the loads of the items ahead of it.
    #[inline(always)]
    fn advance(&mut self, k: usize, layout: &Layout) -> *mut ffi::PyObject {
        if k + LEAD < self.end {
            self.ring[(k + LEAD) % RING] = self.take(k + LEAD);
        }
        let ring = &self.ring;
        // SAFETY: the ring holds the items up to `LEAD` ahead, taken since Python code last ran
        unsafe { layout.prefetch_ahead(k, self.end, |i| ring[i % RING]) };
        self.ring[k % RING]
    }
}

/// A block of a chunk read from memory alone: its part, and where it stopped (the first episode
/// that needs the GIL-holding thread, or the block's end).
struct Block {
    part: Part,
    stop: usize,
}

/// Read `items` (episodes `first..`), pricing an episode with a cost at its model's rates in
/// `known` (by the model string's address) or at `fixed`, up to the first episode that needs the
/// GIL-holding thread.
///
/// # Safety
/// The items are live, and nothing changes or frees what they reach while this runs.
unsafe fn read_block(
    layout: &Layout,
    known: &[(usize, [f64; 4])],
    fixed: Option<[f64; 4]>,
    priced: bool,
    items: &[usize],
    first: usize,
) -> Block {
    let mut part = Part {
        usd: Vec::with_capacity(if priced { items.len() } else { 0 }),
        latency: Vec::with_capacity(items.len()),
        ..Part::default()
    };
    for k in 0..items.len() {
        layout.prefetch_ahead(k, items.len(), |i| items[i] as *mut ffi::PyObject);
        let Read::Row(row) = layout.read(items[k] as *mut ffi::PyObject) else {
            return Block {
                part,
                stop: first + k,
            };
        };
        let rates = if layout.read_runs && row.flags & COST != 0 {
            match known.iter().find(|(model, _)| *model == row.model) {
                Some((_, rates)) => Some(*rates),
                None => {
                    return Block {
                        part,
                        stop: first + k,
                    }
                }
            }
        } else {
            fixed
        };
        if part.add(&row, first + k, rates, priced).is_err() {
            return Block {
                part,
                stop: first + k,
            };
        }
    }
    Block {
        part,
        stop: first + items.len(),
    }
}

/// Episodes of a block of [`Chunk`].
const BLOCK: usize = 1 << 11;

/// A chunk of the list read by this thread and a helper from the pool, block by block: each
/// claims the next block until none is left. The helper may start late, or never (when it wakes
/// after every block was claimed, it reads nothing); this thread waits only for the blocks the
/// helper claimed, so no object is read once it returns.
struct Chunk {
    /// the list (its address; its items are read only while a claimed block is)
    list: usize,
    start: usize,
    end: usize,
    layout: Layout,
    known: Vec<(usize, [f64; 4])>,
    fixed: Option<[f64; 4]>,
    priced: bool,
    /// the next block to claim
    next: AtomicUsize,
    /// the blocks read (`None` for a block whose reading panicked)
    blocks: Mutex<Vec<Option<Option<Block>>>>,
    /// how many blocks are read
    done: AtomicUsize,
}

impl Chunk {
    fn blocks(&self) -> usize {
        (self.end - self.start).div_ceil(BLOCK)
    }

    /// Claim and read blocks until none is left, calling `after_block` after each. A panic is
    /// recorded as a missing block, so that the GIL-holding thread still waits for the other
    /// thread's blocks before it raises.
    fn work(&self, mut after_block: impl FnMut()) {
        let mut items = vec![0usize; BLOCK];
        loop {
            let b = self.next.fetch_add(1, Ordering::AcqRel);
            if b >= self.blocks() {
                return;
            }
            let first = self.start + b * BLOCK;
            let items = &mut items[..BLOCK.min(self.end - first)];
            // SAFETY: the block was claimed before every block was, so the thread that keeps the
            // GIL is still waiting for it: the list is as long as `end`, its items are live and no
            // Python code runs; taking an item in range only reads the list
            let read = || unsafe {
                for (i, item) in items.iter_mut().enumerate() {
                    let at = (first + i) as ffi::Py_ssize_t;
                    *item = ffi::PyList_GetItem(self.list as *mut ffi::PyObject, at) as usize;
                }
                read_block(
                    &self.layout,
                    &self.known,
                    self.fixed,
                    self.priced,
                    items,
                    first,
                )
            };
            let block = std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).ok();
            self.blocks.lock().unwrap_or_else(PoisonError::into_inner)[b] = Some(block);
            self.done.fetch_add(1, Ordering::AcqRel);
            after_block();
        }
    }

    /// Add the blocks read from `*folded` on, in order, to `totals`, up to the first not read
    /// yet or the first that stopped short (whose stop `*stop` becomes; nothing is added after
    /// it).
    fn fold_ready(
        &self,
        folded: &mut usize,
        stop: &mut Option<usize>,
        totals: &mut Totals,
    ) -> PyResult<()> {
        while stop.is_none() && *folded < self.blocks() {
            let Some(block) =
                self.blocks.lock().unwrap_or_else(PoisonError::into_inner)[*folded].take()
            else {
                return Ok(());
            };
            let mut block =
                block.ok_or_else(|| PyRuntimeError::new_err("a cost reading thread failed"))?;
            totals.fold(&mut block.part);
            *folded += 1;
            if block.stop < self.end.min(self.start + *folded * BLOCK) {
                *stop = Some(block.stop); // the blocks after it are read in vain
            }
        }
        Ok(())
    }
}

/// The reader of one call.
struct Reader<'py> {
    py: Python<'py>,
    layout: Layout,
    rates: Rates<'py>,
    /// model → index in `model_rates`
    model_index: Bound<'py, PyDict>,
    model_rates: Vec<[f64; 4]>,
    /// every model object met (held, so that its address stays its own) with its rates: runs
    /// usually share a few model strings, found here by address without `model_index`
    known: Vec<(usize, [f64; 4])>,
    held: Vec<Bound<'py, PyAny>>,
    /// the slots of `known` looked at first, most recent first
    recent: [usize; RECENT_MODELS],
    /// set when Python code ran (`getattr`, `rates_of`): the list may have changed
    python_ran: bool,
}

/// How many model objects [`Reader::known`] keeps at most (beyond, they are looked up by value).
const KNOWN_MODELS: usize = 16;

impl<'py> Reader<'py> {
    fn priced(&self) -> bool {
        !matches!(self.rates, Rates::None)
    }

    /// The one price's rates, or `None` (without pricing, or with rates per model).
    fn fixed_rates(&self) -> Option<[f64; 4]> {
        match self.rates {
            Rates::One(rates) => Some(rates),
            _ => None,
        }
    }

    /// Read episodes `start..end` of `list` (`n` long) on this thread and add them to `totals`.
    fn sequential(
        &mut self,
        list: &Bound<'py, PyList>,
        (start, end, n): (usize, usize, usize),
        totals: &mut Totals,
    ) -> PyResult<Result<(), NotPlain>> {
        let mut window = Window::new(list, start, end);
        let mut part = Part::default();
        for k in start..end {
            let episode = window.advance(k, &self.layout);
            if self.add(episode, k, &mut part)?.is_err() {
                return Ok(Err(NotPlain));
            }
            if std::mem::take(&mut self.python_ran) {
                // `rates_of` or a property may have changed the list
                if list.len() != n {
                    return Ok(Err(NotPlain));
                }
                window.refill(k + 1);
            }
            if (k - start) % CHUNK == CHUNK - 1 {
                totals.fold(&mut part);
            }
        }
        totals.fold(&mut part);
        Ok(Ok(()))
    }

    /// Read episodes `start..end` of `list` on this thread and a helper, and add them to
    /// `totals` up to the first that needs this thread alone; returns the index of that episode
    /// (`end` when none does).
    fn parallel_chunk(
        &mut self,
        list: &Bound<'py, PyList>,
        (start, end): (usize, usize),
        totals: &mut Totals,
    ) -> PyResult<usize> {
        let blocks = (end - start).div_ceil(BLOCK);
        let chunk = Arc::new(Chunk {
            list: list.as_ptr() as usize,
            start,
            end,
            layout: self.layout,
            known: self.known.clone(),
            fixed: self.fixed_rates(),
            priced: self.priced(),
            next: AtomicUsize::new(0),
            blocks: Mutex::new((0..blocks).map(|_| None).collect()),
            done: AtomicUsize::new(0),
        });
        let helper = chunk.clone();
        spawn_on_pool(move || helper.work(|| {}))?;
        // this thread adds up the blocks read so far after each of its own (the additions run
        // while the next block's objects arrive), and any error waits for every block
        let (mut folded, mut stop, mut failed) = (0, None, Ok(()));
        chunk.work(|| {
            if failed.is_ok() {
                failed = chunk.fold_ready(&mut folded, &mut stop, totals);
            }
        });
        // every block is claimed; wait for those the helper is reading
        while chunk.done.load(Ordering::Acquire) < blocks {
            std::thread::yield_now();
        }
        failed?;
        chunk.fold_ready(&mut folded, &mut stop, totals)?;
        Ok(stop.unwrap_or(end))
    }

    /// Add one episode to `part` (`k`: its index). `episode` is borrowed from the list: no Python
    /// code runs before its fields are read, except through `getattr` on an owned reference;
    /// [`Reader::python_ran`] tells the caller when any ran.
    fn add(
        &mut self,
        episode: *mut ffi::PyObject,
        k: usize,
        part: &mut Part,
    ) -> PyResult<Result<(), NotPlain>> {
        let py = self.py;
        let read_runs = self.layout.read_runs;
        // `getattr` results stay alive here while the row's model is looked up
        let owned: [Option<Bound<'py, PyAny>>; 3];
        // SAFETY: `episode` is a live item of the list, and no Python code runs while it is read
        let read = match unsafe { self.layout.read(episode) } {
            Read::Other => {
                self.python_ran = true;
                // SAFETY: as above; the reference taken keeps it alive while `getattr` runs
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
                let [success, cost, run] = owned
                    .each_ref()
                    .map(|f| f.as_ref().map_or(std::ptr::null_mut(), Bound::as_ptr));
                // SAFETY: the fields are held by `owned`
                unsafe {
                    let cost = self.layout.cost_state(cost);
                    self.layout.row(success, cost, run)
                }
            }
            read => read,
        };
        let Read::Row(row) = read else {
            return Ok(Err(NotPlain));
        };
        let rates = if read_runs && row.flags & COST != 0 {
            match self.model_rates(row.model)? {
                Some(rates) => Some(rates),
                None => return Ok(Err(NotPlain)),
            }
        } else {
            self.fixed_rates()
        };
        Ok(part.add(&row, k, rates, self.priced()))
    }

    /// The rates of a model (an exact `str`, alive while this runs), asking `rates_of` for a new
    /// one; `None` when it has no plain rates.
    #[inline(always)]
    fn model_rates(&mut self, model: usize) -> PyResult<Option<[f64; 4]>> {
        // one comparison per recent slot, without an early exit to mispredict
        let hits = self
            .recent
            .iter()
            .enumerate()
            .fold(0u32, |hits, (i, &slot)| {
                hits | (u32::from(self.known.get(slot).is_some_and(|k| k.0 == model)) << i)
            });
        if hits != 0 {
            return Ok(Some(
                self.known[self.recent[hits.trailing_zeros() as usize]].1,
            ));
        }
        self.other_model_rates(model)
    }

    /// [`Reader::model_rates`] for a model object not among the recent ones.
    #[inline(never)]
    fn other_model_rates(&mut self, model: usize) -> PyResult<Option<[f64; 4]>> {
        let slot = match self.known.iter().position(|k| k.0 == model) {
            Some(slot) => slot,
            None => {
                // SAFETY: `model` is a live exact `str`; the reference taken keeps it alive
                // while `rates_of` runs
                let model =
                    unsafe { Bound::from_borrowed_ptr(self.py, model as *mut ffi::PyObject) };
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
                            PyValueError::new_err(
                                "episode_costs: rates_of must return 4 floats or None",
                            )
                        })?;
                        self.model_index.set_item(&model, self.model_rates.len())?;
                        self.model_rates.push(rates);
                        rates
                    }
                };
                if self.known.len() == KNOWN_MODELS {
                    return Ok(Some(rates)); // (many distinct objects: looked up by value)
                }
                self.known.push((model.as_ptr() as usize, rates));
                self.held.push(model);
                self.known.len() - 1
            }
        };
        self.recent.rotate_right(1);
        self.recent[0] = slot;
        Ok(Some(self.known[slot].1))
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
        let summation = summation(compensated);
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
        // SAFETY: the singletons are only compared by address
        let (none, yes, no) = unsafe { (ffi::Py_None(), ffi::Py_True(), ffi::Py_False()) };
        let episode = match (
            SlotLayout::of(&episode_type, ["success", "run"]),
            tallied(&episode_type, &cost_type),
        ) {
            (Some(slots), Some((tally, _))) => {
                let [success, run] = slots.offsets();
                let tally_end = tally + std::mem::size_of::<Tally>();
                Some(EpisodeLayout {
                    slots,
                    tally,
                    last_byte: (success + 8).max(run + 8).max(tally_end) - 1,
                })
            }
            _ => None,
        };
        let layout = Layout {
            episode_type: episode_type.as_type_ptr() as usize,
            episode,
            cost: SlotLayout::of(&cost_type, COST_FIELDS).map(|fields| CostLayout {
                cost_type: cost_type.as_type_ptr() as usize,
                fields,
            }),
            run_type: run_type.as_type_ptr() as usize,
            run: SlotLayout::of(&run_type, ["model"]),
            none: none as usize,
            yes: yes as usize,
            no: no as usize,
            empty: intern!(py, "").as_ptr() as usize,
            read_runs: matches!(rates, Rates::PerModel(_)),
        };
        let mut reader = Reader {
            py,
            layout,
            rates,
            model_index: PyDict::new(py),
            model_rates: Vec::new(),
            known: Vec::new(),
            held: Vec::new(),
            recent: [usize::MAX; RECENT_MODELS],
            python_ran: false,
        };
        let parallel = n >= PARALLEL_FROM && worker_count(0) > 1 && layout.episode.is_some();
        // this thread alone reads up to `alone_to`, then two threads a chunk at a time; after a
        // chunk stopped short, this thread reads on alone for twice as long as the last time
        // (episodes that keep stopping the helpers cost little more than reading them alone)
        let mut pilot = PILOT;
        let (mut k, mut alone_to) = (0, if parallel { pilot } else { n });
        while k < n {
            if k < alone_to || n - k < PILOT {
                let end = if n - k < PILOT { n } else { alone_to.min(n) };
                if reader
                    .sequential(episodes, (k, end, n), &mut totals)?
                    .is_err()
                {
                    return Ok(None);
                }
                k = end;
            } else {
                let end = n.min(k + CHUNK);
                let stop = reader.parallel_chunk(episodes, (k, end), &mut totals)?;
                if stop < end {
                    pilot *= 2;
                    alone_to = stop + pilot;
                }
                k = stop;
            }
        }
        let priced = reader.priced();
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
