//! Shared plumbing for batch bindings: validated views of arrays and of the packed batch layout,
//! the rayon thread pools that run them, and the make-on-this-thread, score-on-the-others pipeline
//! of batches whose chunks need the GIL to build ([`make_and_score`]).
//!
//! `threads` is capped at the machine's parallelism: 0, or any larger value, means every core.
//! Pools are made on first use, one per worker count, and kept: at most one pool per count from 1
//! to the number of cores, whatever values callers pass. A thread the OS refuses to start is a
//! `RuntimeError`; a panic inside a kernel is caught at this boundary (`RuntimeError`, or
//! `MemoryError` for a kernel that reports running out of memory by panicking), and so is one in
//! the GIL-holding part of any entry point, which every binding wraps in [`guarded`].

use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, OnceLock, PoisonError};

use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::ThreadPool;

/// Below this many items a batch runs on the calling thread (rayon would only add overhead).
pub const SERIAL_BELOW: usize = 32;
/// Items per rayon task: keeps scheduling overhead small next to short kernels.
pub const MIN_ITEMS_PER_TASK: usize = 128;
/// Symbols a rayon task of a batch of sequences should hold at least: tasks of long items (pages)
/// are smaller, down to one item, so a few hundred of them still spread over every thread.
pub const MIN_SYMBOLS_PER_TASK: usize = 16_384;

/// Items per rayon task for a batch of `n` items holding `symbols` symbols in all (both sides of
/// a pair): enough for [`MIN_SYMBOLS_PER_TASK`], between 1 and [`MIN_ITEMS_PER_TASK`].
pub fn items_per_task(n: usize, symbols: usize) -> usize {
    let mean = (symbols / n.max(1)).max(1);
    (MIN_SYMBOLS_PER_TASK / mean).clamp(1, MIN_ITEMS_PER_TASK)
}

/// Worker threads meant by a `threads` argument: itself, capped at the number of cores; 0 means
/// every core. The core count is read once (`available_parallelism` reads cgroup files on Linux,
/// too slow for every call).
pub fn worker_count(threads: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |w| w.get()));
    match threads {
        0 => cores,
        t => t.min(cores),
    }
}

/// A 1-D NumPy array as a slice; named in the error when it is not contiguous.
pub fn slice<'a, T: numpy::Element>(
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name} must be a contiguous 1-D array")))
}

/// Check Arrow-style offsets: `n + 1` non-decreasing entries from 0 to `values_len`.
pub fn check_offsets(offsets: &[i64], values_len: usize, name: &str) -> PyResult<usize> {
    let Some((&first, _)) = offsets.split_first() else {
        return Err(PyValueError::new_err(format!(
            "{name} must have at least one entry (n + 1 offsets)"
        )));
    };
    if first != 0 {
        return Err(PyValueError::new_err(format!(
            "{name} must start at 0, got {first}"
        )));
    }
    if let Some(w) = offsets.windows(2).find(|w| w[1] < w[0]) {
        return Err(PyValueError::new_err(format!(
            "{name} must be non-decreasing, got {} after {}",
            w[1], w[0]
        )));
    }
    let last = *offsets.last().unwrap_or(&0);
    if last as usize != values_len || last < 0 {
        return Err(PyValueError::new_err(format!(
            "{name} must end at the values length {values_len}, got {last}"
        )));
    }
    Ok(offsets.len() - 1)
}

/// Check that two packed sides hold the same number of items; returns it.
pub fn same_count(a: usize, b: usize, a_name: &str, b_name: &str) -> PyResult<usize> {
    if a != b {
        return Err(PyValueError::new_err(format!(
            "{a_name} has {a} items but {b_name} has {b}"
        )));
    }
    Ok(a)
}

/// Two validated packed sides of a batch of pairs.
pub struct PairBatch<'a> {
    a: &'a [u32],
    a_offsets: &'a [i64],
    b: &'a [u32],
    b_offsets: &'a [i64],
    pub n: usize,
}

impl<'a> PairBatch<'a> {
    /// Check both sides' offsets and that they hold the same number of items; `names` name the
    /// two sides in error messages (e.g. `("ref", "hyp")`).
    pub fn new(
        a: &'a [u32],
        a_offsets: &'a [i64],
        b: &'a [u32],
        b_offsets: &'a [i64],
        names: (&str, &str),
    ) -> PyResult<Self> {
        let n = same_count(
            check_offsets(a_offsets, a.len(), &format!("{}_offsets", names.0))?,
            check_offsets(b_offsets, b.len(), &format!("{}_offsets", names.1))?,
            names.0,
            names.1,
        )?;
        Ok(PairBatch {
            a,
            a_offsets,
            b,
            b_offsets,
            n,
        })
    }

    /// Symbols of both sides in all.
    pub fn symbols(&self) -> usize {
        self.a.len() + self.b.len()
    }

    /// Pair `k`.
    #[inline]
    pub fn pair(&self, k: usize) -> (&'a [u32], &'a [u32]) {
        (
            item(self.a, self.a_offsets, k),
            item(self.b, self.b_offsets, k),
        )
    }
}

/// Item `k` of a packed batch.
#[inline]
pub fn item<'a, T>(values: &'a [T], offsets: &[i64], k: usize) -> &'a [T] {
    &values[offsets[k] as usize..offsets[k + 1] as usize]
}

/// The pool of `workers` threads (`1..=cores`), started on first use.
fn pool(workers: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut guard = pools.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = guard.get(&workers) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|k| format!("scorekit-{k}"))
        .build()
        .map_err(|e| {
            PyRuntimeError::new_err(format!("cannot start {workers} worker threads: {e}"))
        })?;
    let p = Arc::new(p);
    guard.insert(workers, p.clone());
    Ok(p)
}

/// The Python error for a panic caught at the binding boundary.
fn panic_error(payload: Box<dyn Any + Send>) -> PyErr {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    if message.starts_with("out of memory") {
        PyMemoryError::new_err(message)
    } else {
        PyRuntimeError::new_err(format!("internal error in scorekit._core: {message}"))
    }
}

/// Below this many rows a kernel that splits its work in two halves runs them on one thread (a
/// thread hand-off costs more).
pub const TWO_THREADS_FROM: usize = 1 << 16;

/// A [`scorekit_kernels::Join`] as a plain function ([`two_threads`] or the kernels' `one_thread`).
pub type JoinFn = fn(&mut (dyn FnMut() + Send), &mut (dyn FnMut() + Send));

/// The kernels' `Join` on two rayon threads (when the pool has them): for kernels that split
/// their work in two halves.
pub fn two_threads(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    rayon::join(first, second);
}

/// Run `entry` (the body of a binding entry point, holding the GIL) and turn a panic into a
/// Python exception, as [`run_detached`] does for the work it runs: no panic crosses into Python,
/// not even as PyO3's `PanicException`.
pub fn guarded<R>(entry: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    catch_unwind(AssertUnwindSafe(entry)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

/// A batch of `n` items made into chunks on this thread (which holds the GIL) and scored on
/// others: `workers - 1` helper threads score chunks from a queue while this thread makes the next
/// ones (`make(start, end)` for items `start..end`, `chunk_size` at a time), then this thread
/// scores what is left with them, without the GIL. Each scorer keeps one workspace (`init`).
/// Returns every chunk's result with its first item, in no particular order. An error of `make`
/// stops making chunks and is returned once the chunks already made are scored; a helper that
/// panicked is a `RuntimeError` naming `what` ("a flow scoring thread failed").
#[allow(clippy::too_many_arguments)]
pub fn make_and_score<C, W, R>(
    py: Python<'_>,
    n: usize,
    chunk_size: usize,
    workers: usize,
    mut make: impl FnMut(usize, usize) -> PyResult<C>,
    init: fn() -> W,
    score: impl Fn(&mut W, C) -> R + Sync,
    what: &str,
) -> PyResult<Vec<(usize, R)>>
where
    C: Send,
    R: Send,
{
    let (sender, receiver) = mpsc::channel::<(usize, C)>();
    let queue = Mutex::new(receiver);
    let score_queue = || {
        let mut ws = init();
        let mut scored = Vec::new();
        // (the lock is held only while receiving, so no scorer's panic can poison it)
        while let Ok((start, chunk)) = queue.lock().unwrap_or_else(PoisonError::into_inner).recv() {
            scored.push((start, score(&mut ws, chunk)));
        }
        scored
    };
    std::thread::scope(|scope| {
        // no helper for a single chunk, and never more helpers than chunks after the first
        let helpers: Vec<_> = (1..workers)
            .take(n.div_ceil(chunk_size.max(1)).saturating_sub(1))
            // a thread the OS refuses to start is one helper fewer (this thread scores the rest)
            .map_while(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, score_queue)
                    .ok()
            })
            .collect();
        let mut made = Ok(());
        for start in (0..n).step_by(chunk_size.max(1)) {
            match make(start, n.min(start + chunk_size.max(1))) {
                // the receiver lives until the end of this scope, so sending cannot fail
                Ok(chunk) => drop(sender.send((start, chunk))),
                Err(e) => {
                    made = Err(e);
                    break;
                }
            }
        }
        drop(sender);
        let scored = py.detach(|| {
            let mut scored = score_queue();
            for helper in helpers {
                scored.extend(helper.join().ok()?);
            }
            Some(scored)
        });
        made?;
        scored.ok_or_else(|| PyRuntimeError::new_err(what.to_string()))
    })
}

/// Run sequential `work` on this thread with the GIL released (no hand-off to a pool thread, whose
/// wake-up costs more than scoring a short pair); a panic becomes a Python exception.
pub fn run_here<R, F>(py: Python<'_>, work: F) -> PyResult<R>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    py.detach(move || catch_unwind(AssertUnwindSafe(work)))
        .map_err(panic_error)
}

/// [`run_here`] when the work is `serial` (a batch too small to share out), else [`run_detached`].
pub fn run_sized<R, F>(py: Python<'_>, threads: usize, serial: bool, work: F) -> PyResult<R>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    if serial {
        run_here(py, work)
    } else {
        run_detached(py, threads, work)
    }
}

/// Run `work` with the GIL released, inside the pool of [`worker_count`]`(threads)` threads; a
/// panic becomes a Python exception instead of crossing into Python.
pub fn run_detached<R, F>(py: Python<'_>, threads: usize, work: F) -> PyResult<R>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    let pool = pool(worker_count(threads))?;
    py.detach(move || catch_unwind(AssertUnwindSafe(|| pool.install(work))))
        .map_err(panic_error)
}
