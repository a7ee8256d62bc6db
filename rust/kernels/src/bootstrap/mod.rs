//! Percentile-bootstrap resampling with CPython's random stream (the agents' reliability and
//! cost-per-success intervals).
//!
//! This module owns the resampling and the two built-in statistics; sorting the statistics and
//! picking the percentiles is the caller's job. The resamples are exactly those of the Python
//! loop `[values[rng.randrange(n)] for _ in range(n)]`, repeated `resamples` times on one
//! `random.Random(seed)`:
//!
//! - the generator is CPython's MT19937 ([`Mt19937`]), started from the 624 state words and the
//!   position `random.Random(seed).getstate()` reports (which covers every kind of seed);
//! - `randrange(n)` keeps the top `n.bit_length()` bits of a 32-bit word and draws again while
//!   the value is `>= n` (rejection only skips words, so the accepted values in order are the
//!   index stream);
//! - each resample's statistic adds its values left to right as Python's `sum` does: plainly
//!   ([`Summation::Sequential`], CPython up to 3.11) or with CPython 3.12's Neumaier compensation
//!   ([`Summation::Compensated`]). Results are therefore bit-identical to the Python loop.
//!
//! Memory is `O(resamples + n)`: indices are consumed as they are drawn, eight resamples at a
//! time through a bounded buffer (their eight running sums are independent, so the additions of
//! different resamples overlap while each resample's own order is kept).

use crate::Join;

/// Words of MT19937 state.
pub const STATE_WORDS: usize = 624;
const SHIFT_M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;
/// Resamples summed side by side.
const LANES: usize = 8;
/// Most indices of one group buffered (4 bytes each); longer inputs resample one at a time.
const MAX_BUFFERED: usize = 1 << 21;
/// Indices drawn in one batch (when a group is shorter): a round of drawing and summing is long
/// enough that handing it to two threads costs little.
const BATCH: usize = 1 << 18;

/// Errors of the bootstrap kernels (the message names the argument).
#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapError(pub String);

impl std::fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// CPython's Mersenne Twister (`_randommodule.c`): state words and the index of the next word.
#[derive(Debug, Clone)]
pub struct Mt19937 {
    state: [u32; STATE_WORDS],
    pos: usize,
}

impl Mt19937 {
    /// The generator of `random.Random().getstate()[1]`: 624 words, then the position (0..=624).
    pub fn from_state(words: &[u32], pos: usize) -> Result<Self, BootstrapError> {
        if words.len() != STATE_WORDS {
            return Err(BootstrapError(format!(
                "state must hold {STATE_WORDS} words, got {}",
                words.len()
            )));
        }
        if pos > STATE_WORDS {
            return Err(BootstrapError(format!(
                "pos must be in [0, {STATE_WORDS}], got {pos}"
            )));
        }
        let mut state = [0u32; STATE_WORDS];
        state.copy_from_slice(words);
        Ok(Mt19937 { state, pos })
    }

    /// Regenerate all 624 words (`genrand_uint32`'s refill), in three runs that each read only
    /// words already final or not yet rewritten (so each run vectorises).
    #[inline(always)]
    fn twist(&mut self) {
        #[inline(always)]
        fn mix(upper: u32, lower: u32, far: u32) -> u32 {
            let y = (upper & UPPER_MASK) | (lower & LOWER_MASK);
            far ^ (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
        }
        const HALF: usize = STATE_WORDS - SHIFT_M; // 227
        let old = self.state;
        let mt = &mut self.state;
        // words 0..227 mix old words only
        for ((w, (&u, &l)), &far) in mt[..HALF]
            .iter_mut()
            .zip(old[..HALF].iter().zip(&old[1..=HALF]))
            .zip(&old[SHIFT_M..])
        {
            *w = mix(u, l, far);
        }
        // words 227..454 take their far word from 0..227, words 454..623 from 227..396
        for start in [HALF, 2 * HALF] {
            let end = (start + HALF).min(STATE_WORDS - 1);
            let (done, rest) = mt.split_at_mut(start);
            for ((w, (&u, &l)), &far) in rest[..end - start]
                .iter_mut()
                .zip(old[start..end].iter().zip(&old[start + 1..=end]))
                .zip(&done[start - HALF..])
            {
                *w = mix(u, l, far);
            }
        }
        mt[STATE_WORDS - 1] = mix(old[STATE_WORDS - 1], mt[0], mt[SHIFT_M - 1]);
    }

    /// The next 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.pos >= STATE_WORDS {
            self.twist();
            self.pos = 0;
        }
        let y = self.state[self.pos];
        self.pos += 1;
        temper(y)
    }
}

#[inline(always)]
fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

/// Write the `randrange(n)` values accepted among `mt`'s remaining words (after a twist when
/// none remain) to the front of `out`, which has room for all those words; returns their number.
/// `shift` is `32 - n.bit_length()`.
fn accept_into(mt: &mut Mt19937, n: u32, shift: u32, out: &mut [u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() && std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the processor supports AVX2 and POPCNT (checked just above)
        return unsafe { accept_into_avx2(mt, n, shift, out) };
    }
    accept_state(mt, n, shift, out, accept_words)
}

/// [`accept_into`] with `accept` taking the words to their accepted values.
#[inline(always)]
fn accept_state(
    mt: &mut Mt19937,
    n: u32,
    shift: u32,
    out: &mut [u32],
    accept: impl FnOnce(&[u32], u32, u32, &mut [u32]) -> usize,
) -> usize {
    if mt.pos >= STATE_WORDS {
        mt.twist();
        mt.pos = 0;
    }
    let words = &mt.state[mt.pos..];
    let len = accept(words, n, shift, &mut out[..words.len()]);
    mt.pos = STATE_WORDS;
    len
}

/// [`accept_into`] compiled for AVX2: the twist in wide vectors, and [`accept_words_avx2`].
///
/// # Safety
/// The processor supports AVX2 and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn accept_into_avx2(mt: &mut Mt19937, n: u32, shift: u32, out: &mut [u32]) -> usize {
    // SAFETY: (for the call) as this function's; `out` is as long as the words
    accept_state(mt, n, shift, out, |words, n, shift, out| unsafe {
        accept_words_avx2(words, n, shift, out)
    })
}

/// The accepted values of `words` (tempered, shifted, below `n`) written in order to the front
/// of `out` (as long as `words`); returns their number.
#[inline(always)]
fn accept_words(words: &[u32], n: u32, shift: u32, out: &mut [u32]) -> usize {
    let mut len = 0;
    for &word in words {
        let v = temper(word) >> shift;
        // branch-free compaction: always store, keep only when accepted (len < words.len())
        out[len] = v;
        len += (v < n) as usize;
    }
    len
}

/// [`accept_words`] eight words at a time: tempered and compared in one vector, the accepted
/// lanes moved to the front by a permutation looked up by the comparison's mask, all eight
/// stored, and the count advanced by the accepted ones.
///
/// # Safety
/// The processor supports AVX2 and POPCNT; `out` is at least as long as `words`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn accept_words_avx2(words: &[u32], n: u32, shift: u32, out: &mut [u32]) -> usize {
    use std::arch::x86_64::*;
    let below = _mm256_set1_epi32((n - 1) as i32); // (n >= 1: an empty input is refused)
    let shift_by = _mm_cvtsi32_si128(shift as i32);
    let (b, c) = (
        _mm256_set1_epi32(0x9d2c_5680_u32 as i32),
        _mm256_set1_epi32(0xefc6_0000_u32 as i32),
    );
    let mut len = 0;
    let mut chunks = words.chunks_exact(8);
    for chunk in &mut chunks {
        let mut y = _mm256_loadu_si256(chunk.as_ptr() as *const __m256i);
        y = _mm256_xor_si256(y, _mm256_srli_epi32::<11>(y));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32::<7>(y), b));
        y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32::<15>(y), c));
        y = _mm256_xor_si256(y, _mm256_srli_epi32::<18>(y));
        let v = _mm256_srl_epi32(y, shift_by);
        // v < n, unsigned: min(v, n - 1) == v
        let keep = _mm256_cmpeq_epi32(_mm256_min_epu32(v, below), v);
        let mask = _mm256_movemask_ps(_mm256_castsi256_ps(keep)) as usize;
        let order = _mm256_loadu_si256(LEFT_PACK[mask].as_ptr() as *const __m256i);
        // SAFETY: `len` is at most the words before this chunk, so the eight lanes stored fit
        // within `out`'s first `words.len()` values
        _mm256_storeu_si256(
            out.as_mut_ptr().add(len) as *mut __m256i,
            _mm256_permutevar8x32_epi32(v, order),
        );
        len += mask.count_ones() as usize;
    }
    let rest = chunks.remainder();
    len + accept_words(rest, n, shift, &mut out[len..len + rest.len()])
}

/// For each 8-bit mask of kept lanes, the lanes kept, in order, then the others: the
/// permutation that moves a vector's kept lanes to its front.
const LEFT_PACK: [[u32; 8]; 256] = {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut at, mut lane) = (0, 0);
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][at] = lane as u32;
                at += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// The stream of `randrange(n)` values of a generator, produced a state's worth of words at a time.
struct Draws {
    mt: Mt19937,
    n: u32,
    shift: u32,
    accepted: [u32; STATE_WORDS],
    len: usize,
    at: usize,
}

impl Draws {
    fn new(mt: Mt19937, n: u32) -> Self {
        Draws {
            mt,
            n,
            shift: n.leading_zeros(), // 32 - n.bit_length()
            accepted: [0; STATE_WORDS],
            len: 0,
            at: 0,
        }
    }

    /// Refill the queue of accepted values.
    fn refill(&mut self) {
        self.len = accept_into(&mut self.mt, self.n, self.shift, &mut self.accepted);
        self.at = 0;
    }

    /// The next `out.len()` values.
    fn fill(&mut self, out: &mut [u32]) {
        let mut done = 0;
        while done < out.len() {
            if self.at == self.len {
                if out.len() - done >= STATE_WORDS {
                    // room for a whole state: compact straight into `out`
                    done += accept_into(&mut self.mt, self.n, self.shift, &mut out[done..]);
                    continue;
                }
                self.refill();
            }
            let take = (out.len() - done).min(self.len - self.at);
            out[done..done + take].copy_from_slice(&self.accepted[self.at..self.at + take]);
            self.at += take;
            done += take;
        }
    }

    /// Feed the next `count` values to `each`.
    #[inline(always)]
    fn for_each(&mut self, mut count: usize, mut each: impl FnMut(usize)) {
        while count > 0 {
            if self.at == self.len {
                self.refill();
            }
            let take = count.min(self.len - self.at);
            for &i in &self.accepted[self.at..self.at + take] {
                each(i as usize);
            }
            self.at += take;
            count -= take;
        }
    }
}

/// How a resample's values are added: Python's `sum` of floats, by CPython version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summation {
    /// Left to right, one rounding per addition (CPython <= 3.11).
    Sequential,
    /// Left to right with Neumaier's running compensation, added at the end when it is finite and
    /// non-zero (CPython >= 3.12).
    Compensated,
}

/// A running sum in one [`Summation`] mode.
trait Sum: Copy {
    const ZERO: Self;
    fn add(&mut self, x: f64);
    fn total(self) -> f64;
}

#[derive(Clone, Copy)]
struct Plain(f64);

impl Sum for Plain {
    const ZERO: Self = Plain(0.0);
    #[inline(always)]
    fn add(&mut self, x: f64) {
        self.0 += x;
    }
    #[inline(always)]
    fn total(self) -> f64 {
        self.0
    }
}

#[derive(Clone, Copy)]
struct Neumaier {
    sum: f64,
    compensation: f64,
}

impl Sum for Neumaier {
    const ZERO: Self = Neumaier {
        sum: 0.0,
        compensation: 0.0,
    };
    #[inline(always)]
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }
    #[inline(always)]
    fn total(self) -> f64 {
        let c = self.compensation;
        if c != 0.0 && c.is_finite() {
            self.sum + c
        } else {
            self.sum
        }
    }
}

/// A running `sum` of Python floats, added one at a time in a [`Summation`] mode.
#[derive(Clone, Copy)]
pub struct RunningSum {
    summation: Summation,
    state: Neumaier,
}

impl RunningSum {
    pub fn new(summation: Summation) -> Self {
        RunningSum {
            summation,
            state: Neumaier::ZERO,
        }
    }

    #[inline]
    pub fn add(&mut self, x: f64) {
        match self.summation {
            Summation::Sequential => self.state.sum += x,
            Summation::Compensated => self.state.add(x),
        }
    }

    /// What `sum` returns for the values added so far (`0.0` for none).
    pub fn total(&self) -> f64 {
        match self.summation {
            Summation::Sequential => self.state.sum,
            Summation::Compensated => self.state.total(),
        }
    }
}

/// `sum(values)` of a list of Python floats, in `summation`'s way.
pub fn sum(values: &[f64], summation: Summation) -> f64 {
    let mut total = RunningSum::new(summation);
    for &x in values {
        total.add(x);
    }
    total.total()
}

/// Statistic of every resample of `rows` (`W` values per row, summed column by column), in
/// resample order: `finish` turns a resample's `W` column sums into its statistic.
///
/// Resamples go by groups of [`LANES`], whose indices are drawn into a buffer first; a batch of
/// groups is drawn while the batch before it is summed (`join` runs the two side by side, or one
/// after the other: the drawing and the sums do not depend on each other within a round). The
/// last resamples, fewer than a group, and inputs too long to buffer, are summed as they are drawn.
fn resample<S: Sum, const W: usize>(
    rows: &[[f64; W]],
    mut draws: Draws,
    resamples: usize,
    finish: impl Fn([f64; W]) -> f64 + Sync,
    join: impl Join,
) -> Vec<f64> {
    let n = rows.len();
    let mut stats = Vec::with_capacity(resamples);
    let group = n.saturating_mul(LANES);
    if group <= MAX_BUFFERED && resamples >= LANES {
        let mut groups_left = resamples / LANES;
        let per_batch = (BATCH / group).clamp(1, groups_left);
        let (mut drawn, mut next) = (vec![0u32; per_batch * group], vec![0u32; per_batch * group]);
        let mut in_drawn = per_batch.min(groups_left);
        draws.fill(&mut drawn[..in_drawn * group]);
        groups_left -= in_drawn;
        while in_drawn > 0 {
            let in_next = per_batch.min(groups_left);
            let (draw_next, sums) = (&mut draws, &mut stats);
            join(
                &mut || draw_next.fill(&mut next[..in_next * group]),
                &mut || {
                    for indices in drawn[..in_drawn * group].chunks_exact(group) {
                        sums.extend(
                            sum_group::<S, W>(rows, indices).map(|s| finish(s.map(S::total))),
                        );
                    }
                },
            );
            std::mem::swap(&mut drawn, &mut next);
            (in_drawn, groups_left) = (in_next, groups_left - in_next);
        }
    }
    while stats.len() < resamples {
        let mut sum = [S::ZERO; W];
        draws.for_each(n, |i| {
            let row = &rows[i];
            for w in 0..W {
                sum[w].add(row[w]);
            }
        });
        stats.push(finish(sum.map(S::total)));
    }
    stats
}

/// The column sums of [`LANES`] resamples whose indices are `indices` (`LANES` runs of `n`),
/// added side by side, each in its own order.
#[inline(always)]
fn sum_group<S: Sum, const W: usize>(rows: &[[f64; W]], indices: &[u32]) -> [[S; W]; LANES] {
    let n = rows.len();
    let mut sums = [[S::ZERO; W]; LANES];
    for j in 0..n {
        for (lane, sum) in sums.iter_mut().enumerate() {
            let row = &rows[indices[lane * n + j] as usize];
            for w in 0..W {
                sum[w].add(row[w]);
            }
        }
    }
    sums
}

fn draws_for(n: usize, mt: Mt19937) -> Result<Draws, BootstrapError> {
    if n == 0 {
        return Err(BootstrapError("values must not be empty".to_string()));
    }
    let n = u32::try_from(n).map_err(|_| {
        BootstrapError(format!(
            "at most {} values can be resampled, got {n}",
            u32::MAX
        ))
    })?;
    Ok(Draws::new(mt, n))
}

/// Mean (`sum(sample) / n`) of every resample of `values`, in resample order. `join` runs the
/// drawing of the next resamples beside the sums of the last ([`crate::one_thread`]: one thread);
/// the results do not depend on it.
pub fn bootstrap_means(
    values: &[f64],
    mt: Mt19937,
    resamples: usize,
    summation: Summation,
    join: impl Join,
) -> Result<Vec<f64>, BootstrapError> {
    let draws = draws_for(values.len(), mt)?;
    let rows = values.as_chunks::<1>().0;
    let n = values.len() as f64;
    let mean = move |[s]: [f64; 1]| s / n;
    Ok(match summation {
        Summation::Sequential => resample::<Plain, 1>(rows, draws, resamples, mean, join),
        Summation::Compensated => resample::<Neumaier, 1>(rows, draws, resamples, mean, join),
    })
}

/// Cost per success (`sum(costs) / sum(wins)`, `inf` when the wins sum to `<= 0`) of every
/// resample of the `(costs[i], wins[i])` pairs, in resample order; `join` as [`bootstrap_means`].
pub fn bootstrap_ratios(
    costs: &[f64],
    wins: &[f64],
    mt: Mt19937,
    resamples: usize,
    summation: Summation,
    join: impl Join,
) -> Result<Vec<f64>, BootstrapError> {
    if costs.len() != wins.len() {
        return Err(BootstrapError(format!(
            "wins must have one value per cost ({}), got {}",
            costs.len(),
            wins.len()
        )));
    }
    let draws = draws_for(costs.len(), mt)?;
    let rows: Vec<[f64; 2]> = costs.iter().zip(wins).map(|(&c, &w)| [c, w]).collect();
    let ratio = |[cost, wins]: [f64; 2]| {
        if wins <= 0.0 {
            f64::INFINITY
        } else {
            cost / wins
        }
    };
    Ok(match summation {
        Summation::Sequential => resample::<Plain, 2>(&rows, draws, resamples, ratio, join),
        Summation::Compensated => resample::<Neumaier, 2>(&rows, draws, resamples, ratio, join),
    })
}

#[cfg(test)]
mod tests;
