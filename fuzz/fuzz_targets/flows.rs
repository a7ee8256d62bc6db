//! Workflow trees and their metrics (`scorekit_kernels::flows`): random component lists with
//! `order`/`block` keys and nested lists either build or are rejected, never panic; the metrics of
//! built pairs lie in [0, 1], FlowSim and Component Match are symmetric, a flow scores 1 against
//! itself, Component Match equals the Jaccard index of the components' label sets, and a flow
//! holds one node per component plus its fixed nodes.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::Input;
use scorekit_kernels::flows::{FlowBatch, FlowSpan, OrderKey, Step, TreeBuilder};
use scorekit_kernels::tree::Workspace;

/// A component: label, `order`, `block`, nested list.
struct Component(u8, Option<i64>, Option<i64>, Vec<Component>);

fn components(input: &mut Input<'_>, depth: usize) -> Vec<Component> {
    (0..input.below(5))
        .map(|_| {
            let label = input.byte() % 4;
            let key = |input: &mut Input<'_>| {
                let b = input.byte();
                (b % 3 == 0).then_some(i64::from(b % 4))
            };
            let (order, block) = (key(input), key(input));
            let nested = if depth < 3 && input.byte() % 4 == 0 {
                components(input, depth + 1)
            } else {
                Vec::new()
            };
            Component(label, order, block, nested)
        })
        .collect()
}

fn labels(list: &[Component], out: &mut HashSet<u8>) -> usize {
    list.iter()
        .map(|Component(label, _, _, nested)| {
            out.insert(*label);
            1 + labels(nested, out)
        })
        .sum()
}

fn read(builder: &mut TreeBuilder, list: &[Component], parent: u32) -> Step<()> {
    builder.open_list()?;
    for Component(label, order, block, nested) in list {
        let label = builder.component_label(None, &[b'a' + label]);
        let node = builder.add_component(
            label,
            order.map(OrderKey::Int),
            block.map(OrderKey::Int),
        )?;
        if !nested.is_empty() {
            read(builder, nested, node)?;
        }
    }
    builder.close_list(parent)
}

/// The flow, its component labels and its expected node count.
fn flow(
    input: &mut Input<'_>,
    builder: &mut TreeBuilder,
    batch: &mut FlowBatch,
) -> Option<(FlowSpan, HashSet<u8>, usize)> {
    let trigger = (input.byte() % 2 == 0).then(|| builder.label(b"t"));
    let list = components(input, 0);
    let mut set = HashSet::new();
    let nodes = 3 + usize::from(trigger.is_some()) + labels(&list, &mut set);
    let parent = builder.start_flow(trigger);
    read(builder, &list, parent).ok()?;
    let span = builder.finish_flow(batch).ok()?;
    Some((span, set, nodes))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let max_nodes = 3 + input.below(24);
    let (mut builder, mut batch) = (TreeBuilder::new(max_nodes), FlowBatch::default());
    let p = flow(&mut input, &mut builder, &mut batch);
    let r = flow(&mut input, &mut builder, &mut batch);
    let (Some((p, p_set, p_nodes)), Some((r, r_set, r_nodes))) = (p, r) else {
        return;
    };
    assert!(p_nodes <= max_nodes && r_nodes <= max_nodes);
    let matched = input.byte() % 2 == 0;
    batch.push_pair(Some(p), Some(r), matched);
    batch.push_pair(Some(r), Some(p), matched);
    batch.push_pair(Some(p), Some(p), true);
    batch.push_pair(Some(p), None, true);
    let rows = batch.score(&mut Workspace::new());
    for row in &rows[..3] {
        assert!(row.iter().all(|v| (0.0..=1.0).contains(v)), "{row:?}");
    }
    let (pr, rp, pp) = (rows[0], rows[1], rows[2]);
    assert_eq!(pr[0], rp[0], "FlowSim is symmetric");
    assert_eq!(pr[3], rp[3], "Component Match is symmetric");
    assert_eq!(pr[2], f64::from(u8::from(matched)));
    assert_eq!(pp[0], 1.0);
    assert!(pp[1] == 1.0 || pp[1] == 0.0);
    let union = p_set.union(&r_set).count();
    let jaccard = if union == 0 {
        0.0
    } else {
        p_set.intersection(&r_set).count() as f64 / union as f64
    };
    assert_eq!(pr[3], jaccard);
    // FlowSim is 1 - TED / (|p| + |r|), and the TED is at least the difference in size.
    let size_gap = p_nodes.abs_diff(r_nodes) as f64 / (p_nodes + r_nodes) as f64;
    assert!(pr[0] <= 1.0 - size_gap + 1e-12);
    assert!(rows[3].iter().all(|v| v.is_nan()));
});
