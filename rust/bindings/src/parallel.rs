//! Shared plumbing for batch bindings: validated views of the packed batch layout and rayon
//! thread pools sized by the caller's `threads` argument (0 = rayon's global pool, all cores).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::ThreadPool;

/// Below this many items a batch runs on the calling thread (rayon would only add overhead).
pub const SERIAL_BELOW: usize = 32;
/// Items per rayon task: keeps scheduling overhead small next to short kernels.
pub const MIN_ITEMS_PER_TASK: usize = 128;

/// Worker threads meant by a `threads` argument: itself, or every core for 0. The core count is
/// read once (`available_parallelism` reads cgroup files on Linux, too slow for every call).
pub fn worker_count(threads: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    match threads {
        0 => *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |w| w.get())),
        t => t,
    }
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

fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut guard = pools
        .lock()
        .map_err(|_| PyRuntimeError::new_err("thread-pool cache poisoned"))?;
    if let Some(p) = guard.get(&threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start {threads} threads: {e}")))?;
    let p = Arc::new(p);
    guard.insert(threads, p.clone());
    Ok(p)
}

/// Run `work` with the GIL released, inside a pool of `threads` threads (0 = all cores).
pub fn run_detached<R, F>(py: Python<'_>, threads: usize, work: F) -> PyResult<R>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    let pool = if threads == 0 {
        None
    } else {
        Some(pool(threads)?)
    };
    Ok(py.detach(move || match pool {
        Some(p) => p.install(work),
        None => work(),
    }))
}
