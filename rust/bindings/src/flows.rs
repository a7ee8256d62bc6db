//! The compiled fast path of `scorekit.flows`: decompose parsed workflow JSON (Python dicts, lists and
//! strings) into trees and compute FlowSim, TreeBLEU, Trigger Match and Component Match for a batch of
//! pairs, the tree edit distances in parallel with the GIL released.
//!
//! The decomposition rules are those of `python/scorekit/flows.py` (documented in `docs/flows.md`),
//! which stays the reference: any document this path does not recognise as a plain, valid workflow
//! (a non-`dict` mapping, a `str` subclass, an invalid or unusual shape) is flagged instead of scored,
//! and the Python side scores that pair itself (and produces the error message).

use std::collections::{HashMap, HashSet};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFloatMethods, PyInt, PyList, PyString};
use rayon::prelude::*;
use scorekit_kernels::tree::{zhang_shasha, CostModel, PostorderTree, Workspace};

use crate::parallel::run_detached;

/// Nesting depth of inline `children` lists beyond which a document is not a workflow.
const MAX_DEPTH: usize = 200;

/// The document is not handled here (invalid, or outside the plain-JSON fast path).
struct Fallback;

type Step<T> = Result<T, Fallback>;

/// Label interning shared by every flow of the batch.
#[derive(Default)]
struct Labels {
    ids: HashMap<String, u32>,
}

impl Labels {
    fn id(&mut self, label: &str) -> u32 {
        if let Some(&id) = self.ids.get(label) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(label.to_owned(), id);
        id
    }
}

/// One decomposed flow: the tree in post-order plus what TreeBLEU, TM and CM need.
struct Flow {
    trigger: Option<u32>,
    labels: Vec<u32>,
    lld: Vec<u32>,
    subtrees: HashSet<Vec<u32>>,
    components: HashSet<u32>,
}

/// Tree under construction: an arena of (label, children).
struct Arena {
    nodes: Vec<(u32, Vec<usize>)>,
}

impl Arena {
    fn add(&mut self, label: u32) -> usize {
        self.nodes.push((label, Vec::new()));
        self.nodes.len() - 1
    }
}

fn exact_str<'a>(value: &'a Bound<'_, PyAny>) -> Step<&'a str> {
    value
        .cast_exact::<PyString>()
        .map_err(|_| Fallback)?
        .to_str()
        .map_err(|_| Fallback)
}

fn get<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> Step<Option<Bound<'py, PyAny>>> {
    dict.get_item(key).map_err(|_| Fallback)
}

/// `get(key)` with `None` (missing or JSON null) as absent.
fn get_some<'py>(
    dict: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> Step<Option<Bound<'py, PyAny>>> {
    Ok(get(dict, key)?.filter(|v| !v.is_none()))
}

fn component_label(
    component: &Bound<'_, PyAny>,
    labels: &mut Labels,
    buffer: &mut String,
) -> Step<u32> {
    buffer.clear();
    if let Ok(text) = component.cast_exact::<PyString>() {
        buffer.push_str("action:");
        buffer.push_str(text.to_str().map_err(|_| Fallback)?);
        return Ok(labels.id(buffer));
    }
    let dict = component.cast_exact::<PyDict>().map_err(|_| Fallback)?;
    let definition = match get_some(dict, intern!(dict.py(), "definition"))? {
        Some(d) => d,
        None => get(dict, intern!(dict.py(), "type"))?.ok_or(Fallback)?,
    };
    match get(dict, intern!(dict.py(), "category"))? {
        Some(category) => buffer.push_str(exact_str(&category)?),
        None => buffer.push_str("action"),
    }
    buffer.push(':');
    buffer.push_str(exact_str(&definition)?);
    Ok(labels.id(buffer))
}

/// An `order` value under Python's equality: ints and integral floats compare as integers, other
/// floats by value, strings by content (NaN, huge ints and other types are left to Python).
#[derive(PartialEq, Eq, Hash)]
enum OrderKey {
    Int(i64),
    Float(u64),
    Str(String),
}

fn order_key(value: &Bound<'_, PyAny>) -> Step<OrderKey> {
    if value.is_exact_instance_of::<PyInt>() {
        return value
            .extract::<i64>()
            .map(OrderKey::Int)
            .map_err(|_| Fallback);
    }
    if let Ok(float) = value.cast_exact::<PyFloat>() {
        let f = float.value();
        if f.is_nan() {
            return Err(Fallback);
        }
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            return Ok(OrderKey::Int(f as i64));
        }
        return Ok(OrderKey::Float(f.to_bits()));
    }
    Ok(OrderKey::Str(exact_str(value)?.to_owned()))
}

/// The forest of one component list (block references resolved in the list, inline children as
/// their own scope); returns the arena indices of its top-level nodes.
fn component_forest(
    components: &Bound<'_, PyAny>,
    depth: usize,
    arena: &mut Arena,
    labels: &mut Labels,
    buffer: &mut String,
) -> Step<Vec<usize>> {
    let list = components.cast_exact::<PyList>().map_err(|_| Fallback)?;
    if depth > MAX_DEPTH {
        return Err(Fallback);
    }
    let py = list.py();
    let mut by_order: HashMap<OrderKey, usize> = HashMap::new();
    let mut nodes: Vec<usize> = Vec::with_capacity(list.len());
    let mut blocks: Vec<(usize, Bound<'_, PyAny>)> = Vec::new();
    for (k, component) in list.iter().enumerate() {
        let mut children = Vec::new();
        if let Ok(dict) = component.cast_exact::<PyDict>() {
            if let Some(order) = get_some(dict, intern!(py, "order"))? {
                if by_order.insert(order_key(&order)?, k).is_some() {
                    return Err(Fallback); // an order used twice
                }
            }
            if let Some(block) = get_some(dict, intern!(py, "block"))? {
                blocks.push((k, block));
            }
            if let Some(nested) = get_some(dict, intern!(py, "children"))? {
                children = component_forest(&nested, depth + 1, arena, labels, buffer)?;
            }
        } else if !component.is_exact_instance_of::<PyString>() {
            return Err(Fallback);
        }
        let node = arena.add(component_label(&component, labels, buffer)?);
        arena.nodes[node].1 = children;
        nodes.push(node);
    }
    if blocks.is_empty() {
        return Ok(nodes);
    }
    let mut parent_of: Vec<Option<usize>> = vec![None; nodes.len()];
    for (k, block) in &blocks {
        if block.is_instance_of::<PyBool>() {
            return Err(Fallback);
        }
        parent_of[*k] = Some(*by_order.get(&order_key(block)?).ok_or(Fallback)?);
    }
    for (k, _) in &blocks {
        // A chain longer than the number of nested components goes round a cycle.
        let (mut at, mut steps) = (*k, 0);
        while let Some(up) = parent_of[at] {
            steps += 1;
            if steps > blocks.len() {
                return Err(Fallback);
            }
            at = up;
        }
    }
    for (k, _) in &blocks {
        let child = nodes[*k];
        arena.nodes[nodes[parent_of[*k].unwrap()]].1.push(child);
    }
    Ok(nodes
        .iter()
        .zip(&parent_of)
        .filter(|(_, p)| p.is_none())
        .map(|(&n, _)| n)
        .collect())
}

fn decompose(flow: &Bound<'_, PyAny>, labels: &mut Labels, max_nodes: usize) -> Step<Flow> {
    let dict = flow.cast_exact::<PyDict>().map_err(|_| Fallback)?;
    let trigger_value = get(dict, intern!(dict.py(), "trigger"))?;
    let components_value = get(dict, intern!(dict.py(), "components"))?;
    if trigger_value.is_none() && components_value.is_none() {
        return Err(Fallback);
    }
    let trigger = match trigger_value.filter(|v| !v.is_none()) {
        None => None,
        Some(t) => {
            if let Ok(text) = t.cast_exact::<PyString>() {
                Some(labels.id(text.to_str().map_err(|_| Fallback)?))
            } else {
                let object = t.cast_exact::<PyDict>().map_err(|_| Fallback)?;
                let kind = get(object, intern!(object.py(), "type"))?.ok_or(Fallback)?;
                Some(labels.id(exact_str(&kind)?))
            }
        }
    };
    let mut arena = Arena { nodes: Vec::new() };
    let mut buffer = String::new();
    let forest = match components_value.filter(|v| !v.is_none()) {
        None => Vec::new(),
        Some(list) => component_forest(&list, 0, &mut arena, labels, &mut buffer)?,
    };
    let trigger_node = arena.add(labels.id("trigger"));
    if let Some(t) = trigger {
        let leaf = arena.add(t);
        arena.nodes[trigger_node].1.push(leaf);
    }
    let components_node = arena.add(labels.id("components"));
    arena.nodes[components_node].1 = forest;
    let root = arena.add(labels.id("flow"));
    arena.nodes[root].1 = vec![trigger_node, components_node];
    if arena.nodes.len() > max_nodes {
        return Err(Fallback); // the size guard: Python reports it
    }
    Ok(walk(&arena, root, trigger))
}

/// Post-order arrays, the 1-height subtrees of every node but the root, and the component labels.
fn walk(arena: &Arena, root: usize, trigger: Option<u32>) -> Flow {
    let mut flow = Flow {
        trigger,
        labels: Vec::new(),
        lld: Vec::new(),
        subtrees: HashSet::new(),
        components: HashSet::new(),
    };
    // Frames: (node, next child, leftmost leaf of the first child).
    let mut stack: Vec<(usize, usize, Option<u32>)> = vec![(root, 0, None)];
    while let Some(frame) = stack.last_mut() {
        let (label, children) = &arena.nodes[frame.0];
        if frame.1 < children.len() {
            let child = children[frame.1];
            frame.1 += 1;
            stack.push((child, 0, None));
            continue;
        }
        let (_, _, first) = stack.pop().unwrap();
        let k = flow.labels.len() as u32;
        let left = first.unwrap_or(k);
        flow.labels.push(*label);
        flow.lld.push(left);
        if let Some(parent) = stack.last_mut() {
            parent.2.get_or_insert(left);
            if !children.is_empty() {
                let mut subtree = Vec::with_capacity(children.len() + 1);
                subtree.push(*label);
                subtree.extend(children.iter().map(|&c| arena.nodes[c].0));
                flow.subtrees.insert(subtree);
            }
        }
    }
    // Post-order ends with the components subtree, then the root.
    let n = flow.labels.len();
    let start = flow.lld[n - 2] as usize;
    flow.components.extend(&flow.labels[start..n - 2]);
    flow
}

fn metrics(p: &Flow, r: &Flow, ws: &mut Workspace) -> [f64; 4] {
    let t1 = PostorderTree {
        labels: &p.labels,
        lld: &p.lld,
    };
    let t2 = PostorderTree {
        labels: &r.labels,
        lld: &r.lld,
    };
    let ted = zhang_shasha(&t1, &t2, &CostModel::UNIT, ws);
    let flowsim = 1.0 - ted / ((p.labels.len() + r.labels.len()) as f64);
    let treebleu = if p.subtrees.is_empty() {
        0.0
    } else {
        p.subtrees
            .iter()
            .filter(|s| r.subtrees.contains(*s))
            .count() as f64
            / p.subtrees.len() as f64
    };
    let trigger_match = if p.trigger == r.trigger { 1.0 } else { 0.0 };
    let shared = p
        .components
        .iter()
        .filter(|c| r.components.contains(*c))
        .count();
    let union = p.components.len() + r.components.len() - shared;
    let component_match = if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    };
    [flowsim, treebleu, trigger_match, component_match]
}

/// FlowSim, TreeBLEU, Trigger Match and Component Match of every (pred, ref) pair of parsed flows.
///
/// Returns `(float64[n, 4], uint8[n])`: the metrics in that column order, and a status per pair:
/// bit 1 = the prediction, bit 2 = the reference was not handled here, or has more than `max_nodes`
/// tree nodes (its row is NaN and the caller scores the pair with the Python reference path).
#[pyfunction]
#[pyo3(signature = (preds, refs, max_nodes, threads=0))]
fn flow_metrics_batch<'py>(
    py: Python<'py>,
    preds: &Bound<'py, PyList>,
    refs: &Bound<'py, PyList>,
    max_nodes: usize,
    threads: usize,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<u8>>)> {
    if preds.len() != refs.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "preds has {} flows but refs has {}",
            preds.len(),
            refs.len()
        )));
    }
    let mut labels = Labels::default();
    let mut flows: Vec<(Option<Flow>, Option<Flow>)> = Vec::with_capacity(preds.len());
    for (p, r) in preds.iter().zip(refs.iter()) {
        flows.push((
            decompose(&p, &mut labels, max_nodes).ok(),
            decompose(&r, &mut labels, max_nodes).ok(),
        ));
    }
    let status: Vec<u8> = flows
        .iter()
        .map(|(p, r)| u8::from(p.is_none()) | (u8::from(r.is_none()) << 1))
        .collect();
    let rows: Vec<[f64; 4]> = run_detached(py, threads, || {
        flows
            .par_iter()
            .map_init(Workspace::new, |ws, pair| match pair {
                (Some(p), Some(r)) => metrics(p, r, ws),
                _ => [f64::NAN; 4],
            })
            .collect()
    })?;
    let mut out = Array2::<f64>::zeros((rows.len(), 4));
    for (k, row) in rows.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            out[[k, c]] = v;
        }
    }
    Ok((out.into_pyarray(py), status.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flow_metrics_batch, m)?)?;
    Ok(())
}
