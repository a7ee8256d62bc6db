//! The grapheme reader: strings → extended grapheme clusters (UAX #29, the `unicode-segmentation`
//! crate) interned to `u32` ids, in the usual values/offsets batch layout, so that the existing
//! Levenshtein kernels count edits over clusters (`unit="grapheme"`). Its Python twin is
//! `scorekit._graphemes.PythonGraphemePacker` (the `regex` package's `\X`).
//!
//! Ids: a cluster of one code point is that code point (so text without multi-code-point clusters
//! packs exactly as `pack_texts` packs it, and the schwa code points of the schwa-forgiving kernel
//! stay what they are); a cluster of several code points gets `0x110000 + n`, `n` counting the
//! distinct such clusters met by this packer. One [`GraphemePacker`] serves one batch or one chunk:
//! both sides of the pairs share its table (equal clusters get equal ids) and the table is dropped
//! with it, so memory does not grow over a streamed corpus.

use foldhash::HashMap as FastMap;
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use unicode_segmentation::UnicodeSegmentation;

use crate::packing::{
    append_code_points, pack_joined_with, pack_pairs_with, pack_texts_with, Packed, PackedJoined,
    Reader,
};

/// Id of the first multi-code-point cluster: just above every Unicode scalar value.
pub(crate) const FIRST_CLUSTER_ID: u32 = 0x11_0000;

/// Code points below this never join a following code point into a cluster except CR + LF
/// (the first Extend code points of UAX #29 are the combining diacritics at U+0300): a string of
/// such code points without a CR is its own cluster sequence, and is read without segmenting.
const ALWAYS_ALONE_BELOW: u32 = 0x300;
const CR: u32 = 0x0D;

/// Segments strings into clusters and interns the multi-code-point ones.
#[derive(Default)]
pub(crate) struct Segmenter {
    clusters: FastMap<Box<str>, u32>,
    /// The code points of the string being segmented.
    code_points: Vec<u32>,
    /// The same string as UTF-8 (what the segmenter reads).
    text: String,
    /// Code-point start of every cluster of the last string, then its length (empty when the last
    /// string was read on the fast path, where clusters are code points).
    starts: Vec<usize>,
}

impl Segmenter {
    /// Number of distinct multi-code-point clusters interned so far.
    pub(crate) fn distinct(&self) -> usize {
        self.clusters.len()
    }

    fn intern(&mut self, cluster: &str) -> PyResult<u32> {
        if let Some(&id) = self.clusters.get(cluster) {
            return Ok(id);
        }
        let id = u32::try_from(self.clusters.len())
            .ok()
            .and_then(|n| FIRST_CLUSTER_ID.checked_add(n))
            .ok_or_else(|| {
                PyValueError::new_err(
                    "too many distinct grapheme clusters in one batch (more than 2^32 - 0x110000)",
                )
            })?;
        self.clusters.insert(cluster.into(), id);
        Ok(id)
    }
}

impl Reader for Segmenter {
    fn append(
        &mut self,
        py: Python<'_>,
        s: &Bound<'_, PyString>,
        values: &mut Vec<u32>,
        name: &str,
        k: usize,
    ) -> PyResult<usize> {
        let start = values.len();
        // Validates exactly as the code-point reader does (a lone surrogate names `name[k]`).
        append_code_points(py, s, values, name, k)?;
        let len = values.len() - start;
        self.starts.clear();
        if values[start..]
            .iter()
            .all(|&c| c < ALWAYS_ALONE_BELOW && c != CR)
        {
            return Ok(len);
        }
        self.code_points.clear();
        self.code_points.extend_from_slice(&values[start..]);
        values.truncate(start);
        self.text.clear();
        self.text.reserve(len);
        // Every value is a scalar value (surrogates were refused above); U+FFFD is never used.
        self.text.extend(
            self.code_points
                .iter()
                .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER)),
        );
        let text = std::mem::take(&mut self.text);
        let mut position = 0usize;
        let mut result = Ok(());
        for cluster in text.graphemes(true) {
            let mut chars = cluster.chars();
            let first = chars.next().map_or(0, u32::from);
            let more = chars.count();
            self.starts.push(position);
            position += 1 + more;
            let id = if more == 0 {
                first
            } else {
                match self.intern(cluster) {
                    Ok(id) => id,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            };
            values.push(id);
        }
        self.starts.push(position);
        self.text = text;
        result.map(|()| len)
    }

    /// A boundary inside a cluster is moved to the start of that cluster.
    fn boundary(&self, pos: usize) -> usize {
        if self.starts.is_empty() {
            return pos;
        }
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }
}

/// Packs strings as interned grapheme-cluster ids (module docs); one instance per batch or chunk,
/// shared by both sides of its pairs. Errors are those of `pack_texts`, `pack_pairs` and
/// `pack_joined`, which the methods mirror.
#[pyclass(module = "scorekit._core")]
pub struct GraphemePacker {
    segmenter: Segmenter,
}

#[pymethods]
impl GraphemePacker {
    #[new]
    fn new() -> Self {
        GraphemePacker {
            segmenter: Segmenter::default(),
        }
    }

    /// `pack_texts` over clusters.
    fn pack_texts<'py>(
        &mut self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        name: &str,
    ) -> PyResult<Packed<'py>> {
        pack_texts_with(py, &mut self.segmenter, texts, name)
    }

    /// `pack_pairs` over clusters.
    fn pack_pairs<'py>(
        &mut self,
        py: Python<'py>,
        cases: &Bound<'py, PyList>,
    ) -> PyResult<(Packed<'py>, Packed<'py>)> {
        pack_pairs_with(py, &mut self.segmenter, cases)
    }

    /// `pack_joined` over clusters: joins are given in code points and come back as cluster
    /// boundaries (a join inside a cluster moves to the start of that cluster).
    fn pack_joined<'py>(
        &mut self,
        py: Python<'py>,
        items: &Bound<'py, PyList>,
        name: &str,
        joins_name: &str,
    ) -> PyResult<PackedJoined<'py>> {
        pack_joined_with(py, &mut self.segmenter, items, name, joins_name)
    }

    /// The ids of `text` alone (a `uint32` array).
    fn ids<'py>(
        &mut self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        name: &str,
    ) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        let mut values = Vec::new();
        self.segmenter.append(py, text, &mut values, name, 0)?;
        Ok(values.into_pyarray(py))
    }

    /// Number of distinct multi-code-point clusters interned so far (the size of the table).
    #[getter]
    fn distinct_clusters(&self) -> usize {
        self.segmenter.distinct()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphemePacker>()?;
    m.add("FIRST_CLUSTER_ID", FIRST_CLUSTER_ID)?;
    m.add(
        "GRAPHEME_UNICODE_VERSION",
        unicode_segmentation::UNICODE_VERSION,
    )
}
