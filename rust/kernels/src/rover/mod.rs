//! ROVER: progressive alignment of N hypotheses into slots, then a vote per slot (docs/decisions.md#rover).
//!
//! This module owns the slot network, the unit-cost alignment with its pinned traceback
//! preference, and the voting arithmetic. Tokens arrive interned as `u32` ids (never
//! [`NULL`]); turning text or OCR results into tokens is the Python layer's job.
//!
//! Algorithm, for hypotheses `h_0 .. h_{N-1}`:
//! 1. one slot per token of `h_0`;
//! 2. for each later engine `i`: the *spine* is the majority non-NULL token of every slot (ties:
//!    the token that occurs first in the slot; all-NULL: [`NULL`]); the spine is aligned with `h_i`
//!    by unit-cost edit distance ([`align_ops`]); a diagonal appends `h_i`'s token to its slot, a
//!    deletion appends NULL, an insertion creates a new slot (NULL for engines `0..i`);
//! 3. every slot votes ([`vote`]).
//!
//! The traceback prefers the diagonal, then a deletion, then an insertion, exactly as the
//! reference; the alignment runs bit-parallel (64 rows per word operation) and keeps two bits per
//! cell for the traceback (see [`align_ops`]).
//!
//! [`RoverBatch`] runs many independent problems from one packed input and returns each one's
//! mean agreement (the agreement signal of a corpus, without a call per problem).

use crate::bootstrap::{sum, Summation};

pub mod words;

/// Token id of a NULL entry (an engine with no token in that slot).
pub const NULL: u32 = u32::MAX;

/// Alignment operation: spine slot `s` takes hypothesis token `h` (equal or substituted).
pub const OP_MATCH: u8 = 0;
/// Alignment operation: spine slot `s` gets a NULL.
pub const OP_DELETE: u8 = 1;
/// Alignment operation: hypothesis token `h` opens a new slot.
pub const OP_INSERT: u8 = 2;

/// The slot network and the vote of every slot.
#[derive(Debug, Clone, PartialEq)]
pub struct RoverResult {
    /// Number of engines (columns of the entry matrices).
    pub n_engines: usize,
    /// Slot entries' tokens, `n_slots × n_engines` row-major ([`NULL`] for a NULL entry).
    pub tokens: Vec<u32>,
    /// Slot entries' confidences, same shape (0.0 for a NULL entry).
    pub confs: Vec<f64>,
    /// Winning token per slot ([`NULL`] when NULL won).
    pub winners: Vec<u32>,
    /// Winning score per slot.
    pub scores: Vec<f64>,
    /// Fraction of engines that voted for the winner, per slot.
    pub vote_shares: Vec<f64>,
}

impl RoverResult {
    /// Number of slots.
    pub fn n_slots(&self) -> usize {
        self.winners.len()
    }
}

/// Errors of [`rover`].
#[derive(Debug, Clone, PartialEq)]
pub enum RoverError {
    /// A hypothesis is longer than the `max_tokens` guard.
    TooLong { longest: usize, max_tokens: usize },
    /// The packed input is malformed (the message names the argument).
    Invalid(String),
}

impl std::fmt::Display for RoverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoverError::TooLong { longest, max_tokens } => write!(
                f,
                "ROVER hypothesis has {longest} tokens (> max_tokens={max_tokens}); the O(N*l*L*L') aligner is \
                 designed for a handful of short-to-medium sequences. Pass max_tokens=<larger> (or None) to \
                 override deliberately."
            ),
            RoverError::Invalid(msg) => f.write_str(msg),
        }
    }
}

/// Validate packed hypotheses (`offsets` has `N + 1` entries) and apply the `max_tokens` guard.
pub fn validate(
    tokens: &[u32],
    confs: &[f64],
    offsets: &[i64],
    max_tokens: Option<usize>,
) -> Result<(), RoverError> {
    check_lengths(tokens, confs)?;
    check_offsets(offsets, tokens.len(), "offsets", "tokens")?;
    check_values(tokens, confs)?;
    check_longest(offsets, max_tokens)
}

fn check_lengths(tokens: &[u32], confs: &[f64]) -> Result<(), RoverError> {
    if confs.len() != tokens.len() {
        return Err(RoverError::Invalid(format!(
            "confs must have one value per token ({}), got {}",
            tokens.len(),
            confs.len()
        )));
    }
    Ok(())
}

/// `offsets` (named `name`) must run from 0 to `end` (the number of `what`) without decreasing.
fn check_offsets(offsets: &[i64], end: usize, name: &str, what: &str) -> Result<(), RoverError> {
    if offsets.is_empty() || offsets[0] != 0 || *offsets.last().unwrap() != end as i64 {
        return Err(RoverError::Invalid(format!(
            "{name} must run from 0 to the number of {what} ({end})"
        )));
    }
    if offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(RoverError::Invalid(format!(
            "{name} must be non-decreasing"
        )));
    }
    Ok(())
}

/// Token ids below [`NULL`], confidences within `[0, 1]` (token positions count from the slice's start).
fn check_values(tokens: &[u32], confs: &[f64]) -> Result<(), RoverError> {
    let invalid = |m: String| Err(RoverError::Invalid(m));
    if tokens.contains(&NULL) {
        return invalid(format!("tokens must be below {NULL} (the NULL id)"));
    }
    if let Some(k) = confs.iter().position(|c| c.is_nan()) {
        return invalid(format!("confs must not be NaN (token {k})"));
    }
    if let Some(k) = confs.iter().position(|c| !(0.0..=1.0).contains(c)) {
        return invalid(format!("confs must be within [0, 1] (token {k})"));
    }
    Ok(())
}

/// The `max_tokens` guard over the hypotheses `offsets` delimit (none: no check).
fn check_longest(offsets: &[i64], max_tokens: Option<usize>) -> Result<(), RoverError> {
    if let Some(max) = max_tokens {
        let longest = offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0);
        if offsets.len() > 1 && longest > max {
            return Err(RoverError::TooLong {
                longest,
                max_tokens: max,
            });
        }
    }
    Ok(())
}

fn check_weights(conf_weight: f64, null_conf: f64) -> Result<(), RoverError> {
    for (name, value) in [("conf_weight", conf_weight), ("null_conf", null_conf)] {
        if !(0.0..=1.0).contains(&value) {
            return Err(RoverError::Invalid(format!("{name} must be within [0, 1]")));
        }
    }
    Ok(())
}

/// Most frequent non-NULL token of a slot; ties go to the token that occurs first; all-NULL → NULL.
#[inline]
pub fn majority(row: &[u32]) -> u32 {
    let (mut best, mut best_count) = (NULL, 0usize);
    for k in 0..row.len() {
        let t = row[k];
        if t == NULL || row[..k].contains(&t) {
            continue;
        }
        let count = row[k..].iter().filter(|&&x| x == t).count();
        if count > best_count {
            best = t;
            best_count = count;
        }
    }
    best
}

/// Hasher of token ids (the map below is rebuilt for every alignment; SipHash would dominate it).
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(b as u32);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        let h = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Scratch space of [`align_ops`], reused across engines.
#[derive(Default)]
pub struct AlignScratch {
    /// Row of each distinct (non-NULL) spine token in `peq`.
    slot_of: std::collections::HashMap<u32, usize, std::hash::BuildHasherDefault<IdHasher>>,
    /// Position bitvectors of the spine's distinct tokens, `words` per token.
    peq: Vec<u64>,
    /// Per hypothesis column: the D0 words then the VP words of that column.
    cols: Vec<u64>,
    vp: Vec<u64>,
    vn: Vec<u64>,
    no_match: Vec<u64>,
    ops: Vec<(u8, u32, u32)>,
}

/// Unit-cost alignment of `spine` with `hyp`: operations `(op, slot, hyp index)` left to right
/// (`u32::MAX` for the absent side).
///
/// The table `D` is never stored: the columns are computed 64 rows at a time with the
/// bit-parallel recurrence of Myers/Hyyrö (`D0` = "`D[i][j] == D[i-1][j-1]`", `VP` =
/// "`D[i][j] == D[i-1][j] + 1`"), and those two bits per cell are exactly what the traceback
/// preference needs: the diagonal iff the tokens match or `D0` is clear (a substitution then
/// costs one more than the diagonal predecessor), else a deletion iff `VP` is set, else an
/// insertion. Memory: `2·S·T/64` words. The operations live in `scratch` until its next use.
pub fn align_ops<'s>(
    spine: &[u32],
    hyp: &[u32],
    scratch: &'s mut AlignScratch,
) -> &'s [(u8, u32, u32)] {
    let (s_len, t_len) = (spine.len(), hyp.len());
    let words = s_len.div_ceil(64);
    // Bitvector of each distinct (non-NULL) spine token.
    let slot_of = &mut scratch.slot_of;
    slot_of.clear();
    scratch.peq.clear();
    for (i, &t) in spine.iter().enumerate() {
        if t == NULL {
            continue;
        }
        let next = slot_of.len();
        let k = *slot_of.entry(t).or_insert(next);
        if k == next {
            scratch.peq.resize((k + 1) * words, 0);
        }
        scratch.peq[k * words + i / 64] |= 1u64 << (i % 64);
    }
    scratch.no_match.clear();
    scratch.no_match.resize(words, 0);
    let no_match = &scratch.no_match;
    scratch.cols.clear();
    scratch.cols.resize(t_len * 2 * words, 0);
    scratch.vp.clear();
    scratch.vp.resize(words, !0u64);
    scratch.vn.clear();
    scratch.vn.resize(words, 0);
    let (vp, vn) = (&mut scratch.vp, &mut scratch.vn);
    for (j, h) in hyp.iter().enumerate() {
        let eq = match slot_of.get(h) {
            Some(&k) => &scratch.peq[k * words..(k + 1) * words],
            None => &no_match[..],
        };
        let col = &mut scratch.cols[j * 2 * words..(j + 1) * 2 * words];
        let (d0_col, vp_col) = col.split_at_mut(words);
        let (mut add_carry, mut hp_carry, mut hn_carry) = (0u64, 1u64, 0u64);
        for k in 0..words {
            let (e, p, n) = (eq[k], vp[k], vn[k]);
            let x = e | n;
            let (sum, c1) = (e & p).overflowing_add(p);
            let (sum, c2) = sum.overflowing_add(add_carry);
            add_carry = (c1 | c2) as u64;
            let d0 = (sum ^ p) | x;
            let hp = n | !(d0 | p);
            let hn = p & d0;
            let hp_shifted = (hp << 1) | hp_carry;
            let hn_shifted = (hn << 1) | hn_carry;
            hp_carry = hp >> 63;
            hn_carry = hn >> 63;
            vp[k] = hn_shifted | !(d0 | hp_shifted);
            vn[k] = hp_shifted & d0;
            d0_col[k] = d0;
            vp_col[k] = vp[k];
        }
    }
    let bit = |col: &[u64], i: usize| (col[i / 64] >> (i % 64)) & 1 == 1;
    let ops = &mut scratch.ops;
    ops.clear();
    let (mut i, mut j) = (s_len, t_len);
    while i > 0 || j > 0 {
        let choice = if i == 0 {
            OP_INSERT
        } else if j == 0 {
            OP_DELETE
        } else {
            let col = &scratch.cols[(j - 1) * 2 * words..j * 2 * words];
            let a = spine[i - 1];
            if (a != NULL && a == hyp[j - 1]) || !bit(&col[..words], i - 1) {
                OP_MATCH
            } else if bit(&col[words..], i - 1) {
                OP_DELETE
            } else {
                OP_INSERT
            }
        };
        match choice {
            OP_MATCH => {
                ops.push((OP_MATCH, (i - 1) as u32, (j - 1) as u32));
                i -= 1;
                j -= 1;
            }
            OP_DELETE => {
                ops.push((OP_DELETE, (i - 1) as u32, u32::MAX));
                i -= 1;
            }
            _ => {
                ops.push((OP_INSERT, u32::MAX, (j - 1) as u32));
                j -= 1;
            }
        }
    }
    ops.reverse();
    ops
}

/// Vote of one slot: `(winner, score, vote_share)`.
///
/// Candidates are the distinct entries (NULL included) in first-appearance order;
/// `score(t) = (1 - cw) * (votes/N) + cw * (conf_sum/votes)` with a NULL entry contributing
/// `null_conf`; the winner has the highest `(score, is a real token, votes)`, ties going to the
/// earliest candidate.
#[inline]
pub fn vote(tokens: &[u32], confs: &[f64], conf_weight: f64, null_conf: f64) -> (u32, f64, f64) {
    let n = tokens.len() as f64;
    let mut best: Option<(u32, f64, usize)> = None;
    for k in 0..tokens.len() {
        let t = tokens[k];
        if tokens[..k].contains(&t) {
            continue;
        }
        let mut votes = 0usize;
        let mut conf_sum = 0.0f64;
        for q in k..tokens.len() {
            if tokens[q] == t {
                votes += 1;
                conf_sum += if t == NULL { null_conf } else { confs[q] };
            }
        }
        let v = votes as f64;
        let score = (1.0 - conf_weight) * (v / n) + conf_weight * (conf_sum / v);
        let better = match best {
            None => true,
            Some((bt, bs, bv)) => {
                score > bs || (score == bs && ((t != NULL) as u8, votes) > ((bt != NULL) as u8, bv))
            }
        };
        if better {
            best = Some((t, score, votes));
        }
    }
    let (t, s, v) = best.expect("a slot has at least one entry");
    (t, s, v as f64 / n)
}

/// Buffers of one ROVER problem, reused across the problems of a batch.
#[derive(Default)]
pub struct Workspace {
    align: AlignScratch,
    spine: Vec<u32>,
    /// The slot network: entry tokens and confidences, one row per slot, one column per engine.
    tok: Vec<u32>,
    conf: Vec<f64>,
    /// The network being built from `tok`/`conf` and the next engine's alignment.
    next_tok: Vec<u32>,
    next_conf: Vec<f64>,
    /// Vote shares of the consensus tokens.
    shares: Vec<f64>,
}

/// Build the slot network of the hypotheses `offsets[i]..offsets[i+1]` (positions in
/// `tokens`/`confs`, already validated; at least one hypothesis) into `ws.tok`/`ws.conf`;
/// returns its width (the number of engines).
fn build_network(tokens: &[u32], confs: &[f64], offsets: &[i64], ws: &mut Workspace) -> usize {
    let span = |i: usize| offsets[i] as usize..offsets[i + 1] as usize;
    ws.tok.clear();
    ws.tok.extend_from_slice(&tokens[span(0)]);
    ws.conf.clear();
    ws.conf.extend_from_slice(&confs[span(0)]);
    let mut width = 1usize;
    for i in 1..offsets.len() - 1 {
        let (h_tok, h_conf) = (&tokens[span(i)], &confs[span(i)]);
        ws.spine.clear();
        ws.spine.extend(ws.tok.chunks_exact(width).map(majority));
        let ops = align_ops(&ws.spine, h_tok, &mut ws.align);
        let (next_tok, next_conf) = (&mut ws.next_tok, &mut ws.next_conf);
        next_tok.clear();
        next_conf.clear();
        for &(op, s, h) in ops {
            if op == OP_INSERT {
                next_tok.extend(std::iter::repeat_n(NULL, width));
                next_conf.extend(std::iter::repeat_n(0.0, width));
            } else {
                let s = s as usize;
                next_tok.extend_from_slice(&ws.tok[s * width..(s + 1) * width]);
                next_conf.extend_from_slice(&ws.conf[s * width..(s + 1) * width]);
            }
            if op == OP_DELETE {
                next_tok.push(NULL);
                next_conf.push(0.0);
            } else {
                next_tok.push(h_tok[h as usize]);
                next_conf.push(h_conf[h as usize]);
            }
        }
        std::mem::swap(&mut ws.tok, &mut ws.next_tok);
        std::mem::swap(&mut ws.conf, &mut ws.next_conf);
        width += 1;
    }
    width
}

/// The votes of the network in `ws` (`width` columns): `each(winner, score, vote_share)` per slot.
fn vote_slots(
    ws: &Workspace,
    width: usize,
    conf_weight: f64,
    null_conf: f64,
    mut each: impl FnMut(u32, f64, f64),
) {
    for (row_tok, row_conf) in ws.tok.chunks_exact(width).zip(ws.conf.chunks_exact(width)) {
        let (w, s, v) = vote(row_tok, row_conf, conf_weight, null_conf);
        each(w, s, v);
    }
}

/// Align the hypotheses `tokens[offsets[i]..offsets[i+1]]` (with their `confs`) into slots and vote.
///
/// `conf_weight` is the effective confidence weight (0 for frequency-only voting).
pub fn rover(
    tokens: &[u32],
    confs: &[f64],
    offsets: &[i64],
    conf_weight: f64,
    null_conf: f64,
    max_tokens: Option<usize>,
) -> Result<RoverResult, RoverError> {
    validate(tokens, confs, offsets, max_tokens)?;
    check_weights(conf_weight, null_conf)?;
    let n_engines = offsets.len() - 1;
    let mut result = RoverResult {
        n_engines,
        tokens: vec![],
        confs: vec![],
        winners: vec![],
        scores: vec![],
        vote_shares: vec![],
    };
    if n_engines == 0 {
        return Ok(result);
    }
    let mut ws = Workspace::default();
    let width = build_network(tokens, confs, offsets, &mut ws);
    vote_slots(&ws, width, conf_weight, null_conf, |w, s, v| {
        result.winners.push(w);
        result.scores.push(s);
        result.vote_shares.push(v);
    });
    result.tokens = ws.tok;
    result.confs = ws.conf;
    Ok(result)
}

/// An error of a [`RoverBatch`]: the item it concerns (`None` for the batch's own layout or
/// parameters) and the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchError {
    pub item: Option<usize>,
    pub error: RoverError,
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.item {
            Some(k) => write!(f, "item {k}: {}", self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

/// Many independent ROVER problems in one packed input, validated: hypothesis `h` is
/// `tokens[engine_offsets[h]..engine_offsets[h+1]]` (with its `confs`), and item `k` is the
/// problem of the hypotheses `item_offsets[k]..item_offsets[k+1]`. Items share nothing, so they
/// can run in any order, on any thread, with the same results.
pub struct RoverBatch<'a> {
    tokens: &'a [u32],
    confs: &'a [f64],
    engine_offsets: &'a [i64],
    item_offsets: &'a [i64],
    conf_weight: f64,
    null_conf: f64,
    summation: Summation,
}

impl<'a> RoverBatch<'a> {
    /// Check the layout, the parameters and every item (token ids, confidences, the `max_tokens`
    /// guard per item: token positions and lengths in an item's error count within that item);
    /// the error names the first bad item. `summation` is how the consensus tokens' vote shares
    /// are added (Python's `sum` of this interpreter).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tokens: &'a [u32],
        confs: &'a [f64],
        engine_offsets: &'a [i64],
        item_offsets: &'a [i64],
        conf_weight: f64,
        null_conf: f64,
        max_tokens: Option<usize>,
        summation: Summation,
    ) -> Result<Self, BatchError> {
        let whole = |error| BatchError { item: None, error };
        check_lengths(tokens, confs).map_err(whole)?;
        check_offsets(engine_offsets, tokens.len(), "engine_offsets", "tokens").map_err(whole)?;
        let hypotheses = engine_offsets.len() - 1;
        check_offsets(item_offsets, hypotheses, "item_offsets", "hypotheses").map_err(whole)?;
        check_weights(conf_weight, null_conf).map_err(whole)?;
        let batch = RoverBatch {
            tokens,
            confs,
            engine_offsets,
            item_offsets,
            conf_weight,
            null_conf,
            summation,
        };
        for k in 0..batch.len() {
            let offsets = batch.hypotheses(k);
            let span = offsets[0] as usize..offsets[offsets.len() - 1] as usize;
            check_values(&tokens[span.clone()], &confs[span])
                .and_then(|()| check_longest(offsets, max_tokens))
                .map_err(|error| BatchError {
                    item: Some(k),
                    error,
                })?;
        }
        Ok(batch)
    }

    /// Mean agreement of every item, one after the other ([`RoverBatch::mean_agreement`]).
    pub fn mean_agreements(&self) -> Vec<f64> {
        let mut ws = Workspace::default();
        (0..self.len())
            .map(|k| self.mean_agreement(k, &mut ws))
            .collect()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.item_offsets.len() - 1
    }

    /// Whether the batch has no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Token positions of item `k`'s hypotheses (`engines + 1` entries).
    fn hypotheses(&self, k: usize) -> &'a [i64] {
        &self.engine_offsets[self.item_offsets[k] as usize..=self.item_offsets[k + 1] as usize]
    }

    /// Mean agreement of item `k`: the mean vote share of its consensus tokens, added as
    /// `summation` says, then divided by their count; with no consensus token 0.0 for two or
    /// more engines and 1.0 for one or none.
    pub fn mean_agreement(&self, k: usize, ws: &mut Workspace) -> f64 {
        let offsets = self.hypotheses(k);
        let engines = offsets.len() - 1;
        if engines == 0 {
            return 1.0;
        }
        let width = build_network(self.tokens, self.confs, offsets, ws);
        let mut shares = std::mem::take(&mut ws.shares);
        shares.clear();
        vote_slots(ws, width, self.conf_weight, self.null_conf, |w, _, v| {
            if w != NULL {
                shares.push(v);
            }
        });
        let mean = if shares.is_empty() {
            if engines >= 2 {
                0.0
            } else {
                1.0
            }
        } else {
            sum(&shares, self.summation) / shares.len() as f64
        };
        ws.shares = shares;
        mean
    }
}

#[cfg(test)]
mod tests;
