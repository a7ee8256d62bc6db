use super::*;

/// Parse `{a{b}{c}}` (no escapes) into post-order labels and lld,
/// interning labels in `names`.
fn parse(s: &str, names: &mut Vec<String>) -> (Vec<u32>, Vec<u32>) {
    let mut labels = Vec::new();
    let mut lld = Vec::new();
    // Open nodes: (label, post-order index of the subtree's leftmost leaf once known).
    let mut open: Vec<(String, Option<u32>)> = Vec::new();
    let mut label = String::new();
    let mut reading = false;
    let intern = |names: &mut Vec<String>, l: &str| -> u32 {
        match names.iter().position(|x| x == l) {
            Some(p) => p as u32,
            None => {
                names.push(l.to_string());
                (names.len() - 1) as u32
            }
        }
    };
    for ch in s.chars() {
        match ch {
            '{' => {
                if reading {
                    open.push((std::mem::take(&mut label), None));
                }
                reading = true;
            }
            '}' => {
                if reading {
                    open.push((std::mem::take(&mut label), None));
                    reading = false;
                }
                let (l, first) = open.pop().unwrap();
                let k = labels.len() as u32;
                labels.push(intern(names, &l));
                let left = first.unwrap_or(k);
                lld.push(left);
                if let Some(parent) = open.last_mut() {
                    if parent.1.is_none() {
                        parent.1 = Some(left);
                    }
                }
            }
            c => label.push(c),
        }
    }
    (labels, lld)
}

fn ted(a: &str, b: &str) -> f64 {
    let mut names = Vec::new();
    let (l1, d1) = parse(a, &mut names);
    let (l2, d2) = parse(b, &mut names);
    let t1 = PostorderTree {
        labels: &l1,
        lld: &d1,
    };
    let t2 = PostorderTree {
        labels: &l2,
        lld: &d2,
    };
    validate_tree(&t1).unwrap();
    validate_tree(&t2).unwrap();
    let mut ws = Workspace::new();
    let d = zhang_shasha(&t1, &t2, &CostModel::UNIT, &mut ws);
    let (dm, mapping) = zhang_shasha_mapping(&t1, &t2, &CostModel::UNIT, &mut ws);
    assert_eq!(d, dm);
    let cost: f64 = mapping
        .iter()
        .map(|&(x, y)| match (x, y) {
            (-1, _) | (_, -1) => 1.0,
            (x, y) => f64::from(l1[x as usize] != l2[y as usize]),
        })
        .sum();
    assert_eq!(cost, d, "mapping cost of {a} vs {b}");
    let mut seen1 = vec![false; l1.len()];
    let mut seen2 = vec![false; l2.len()];
    for &(x, y) in &mapping {
        if x >= 0 {
            assert!(!seen1[x as usize]);
            seen1[x as usize] = true;
        }
        if y >= 0 {
            assert!(!seen2[y as usize]);
            seen2[y as usize] = true;
        }
    }
    assert!(seen1.iter().all(|&s| s) && seen2.iter().all(|&s| s));
    d
}

#[test]
fn known_unit_cost_distances() {
    assert_eq!(ted("{a}", "{a}"), 0.0);
    assert_eq!(ted("{a}", "{b}"), 1.0);
    assert_eq!(ted("{a{b}{c}}", "{a{c}}"), 1.0);
    assert_eq!(ted("{f{a}{e{c{b}}{d}}}", "{f{a}{c{e{b}{d}}}}"), 2.0);
    // The Zhang–Shasha paper example.
    assert_eq!(ted("{f{d{a}{c{b}}}{e}}", "{f{c{d{a}{b}}}{e}}"), 2.0);
    assert_eq!(ted("{a{b{c{d}}}}", "{d}"), 3.0);
}

#[test]
fn empty_trees() {
    let mut ws = Workspace::new();
    let empty = PostorderTree {
        labels: &[],
        lld: &[],
    };
    let one = PostorderTree {
        labels: &[3, 4],
        lld: &[0, 0],
    };
    validate_tree(&empty).unwrap();
    assert_eq!(zhang_shasha(&empty, &one, &CostModel::UNIT, &mut ws), 2.0);
    assert_eq!(zhang_shasha(&one, &empty, &CostModel::UNIT, &mut ws), 2.0);
    assert_eq!(zhang_shasha(&empty, &empty, &CostModel::UNIT, &mut ws), 0.0);
    let (_, m) = zhang_shasha_mapping(&one, &empty, &CostModel::UNIT, &mut ws);
    assert_eq!(m, vec![(0, -1), (1, -1)]);
}

#[test]
fn rejects_non_trees() {
    let bad = |lld: &[u32]| {
        let labels = vec![0u32; lld.len()];
        validate_tree(&PostorderTree {
            labels: &labels,
            lld,
        })
        .is_err()
    };
    assert!(bad(&[1]));
    assert!(bad(&[0, 1])); // two roots
    assert!(bad(&[0, 1, 1])); // node 2 does not cover node 0
    assert!(!bad(&[0, 1, 0]));
    assert!(!bad(&[0, 0, 0])); // a chain
    assert!(bad(&[0, 0, 1])); // node 2 starts inside node 1's subtree
    let labels = [0u32, 0];
    assert!(validate_tree(&PostorderTree {
        labels: &labels,
        lld: &[0]
    })
    .is_err());
}

#[test]
fn general_costs_and_validation() {
    let (l1, d1) = (vec![0u32, 1, 2], vec![0u32, 1, 0]);
    let (l2, d2) = (vec![0u32, 2], vec![0u32, 0]);
    let t1 = PostorderTree {
        labels: &l1,
        lld: &d1,
    };
    let t2 = PostorderTree {
        labels: &l2,
        lld: &d2,
    };
    let mut ws = Workspace::new();
    // Deleting node 1 costs 0.25; everything else matches.
    let delete = [1.0, 0.25, 1.0];
    let costs = CostModel {
        delete: Some(&delete),
        insert: None,
        rename: Rename::Unit,
    };
    validate_costs(&t1, &t2, &costs).unwrap();
    assert_eq!(zhang_shasha(&t1, &t2, &costs, &mut ws), 0.25);
    // The table prices keeping the root (label 2 -> 2) at 0.5: 0.5 + 0.25.
    let mut table = vec![1.0; 9];
    table[0] = 0.0;
    table[4] = 0.0;
    table[8] = 0.5;
    let costs = CostModel {
        delete: Some(&delete),
        insert: None,
        rename: Rename::Table {
            costs: &table,
            n_labels: 3,
        },
    };
    assert_eq!(zhang_shasha(&t1, &t2, &costs, &mut ws), 0.75);
    let bad_delete = [1.0, -1.0, 1.0];
    let costs = CostModel {
        delete: Some(&bad_delete),
        insert: None,
        rename: Rename::Unit,
    };
    assert!(matches!(
        validate_costs(&t1, &t2, &costs),
        Err(TreeError::BadCost { .. })
    ));
    let costs = CostModel {
        delete: None,
        insert: None,
        rename: Rename::Table {
            costs: &table[..4],
            n_labels: 2,
        },
    };
    assert!(matches!(
        validate_costs(&t1, &t2, &costs),
        Err(TreeError::LabelOutOfRange { .. })
    ));
}

#[test]
fn text_rename_is_normalised_levenshtein() {
    let s = |x: &str| x.chars().map(|c| c as u32).collect::<Vec<_>>();
    // table{tr{td:tahle}} vs table{tr{td:table}}: labels equal, texts differ by one of five.
    let labels = [2u32, 1, 0];
    let lld = [0u32, 0, 0];
    let t = PostorderTree {
        labels: &labels,
        lld: &lld,
    };
    let (v1, v2) = (s("tahle"), s("table"));
    let o = [0i64, 5, 5, 5];
    let costs = CostModel {
        delete: None,
        insert: None,
        rename: Rename::Text {
            texts1: NodeTexts {
                values: &v1,
                offsets: &o,
            },
            texts2: NodeTexts {
                values: &v2,
                offsets: &o,
            },
            label_mismatch: 1.0,
        },
    };
    validate_costs(&t, &t, &costs).unwrap();
    let mut ws = Workspace::new();
    assert_eq!(zhang_shasha(&t, &t, &costs, &mut ws), 0.2);
}

/// A random tree of `n` nodes in post-order: node `k + 1`'s parent is drawn among nodes `0..=k`
/// (pre-order ids), with `wide` favouring the first few (flat, flow-like trees).
fn random_tree(seed: &mut u64, n: usize, n_labels: u32, wide: bool) -> (Vec<u32>, Vec<u32>) {
    let mut next = |bound: usize| {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed % bound as u64) as usize
    };
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for k in 1..n {
        let parent = if wide { next(k.min(3)) } else { next(k) };
        children[parent].push(k);
    }
    let pre_labels: Vec<u32> = (0..n).map(|_| next(n_labels as usize) as u32).collect();
    let (mut labels, mut lld) = (Vec::new(), Vec::new());
    // Frames: (node, next child, leftmost leaf of the first child).
    let mut stack: Vec<(usize, usize, Option<u32>)> =
        if n > 0 { vec![(0, 0, None)] } else { vec![] };
    while let Some(frame) = stack.last_mut() {
        if frame.1 < children[frame.0].len() {
            let child = children[frame.0][frame.1];
            frame.1 += 1;
            stack.push((child, 0, None));
            continue;
        }
        let (node, _, first) = stack.pop().unwrap();
        let left = first.unwrap_or(labels.len() as u32);
        labels.push(pre_labels[node]);
        lld.push(left);
        if let Some(parent) = stack.last_mut() {
            parent.2.get_or_insert(left);
        }
    }
    (labels, lld)
}

#[test]
fn unit_kernel_equals_general_kernel_on_random_trees() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let ones = vec![1.0; 64];
    let mut table = vec![1.0; 16];
    for l in 0..4 {
        table[l * 4 + l] = 0.0;
    }
    let mut ws = Workspace::new();
    for round in 0..4000 {
        let wide = round % 2 == 0;
        let (n1, n2) = (round % 41, (round * 7 + 3) % 37);
        let (l1, d1) = random_tree(&mut seed, n1, 4, wide);
        let (l2, d2) = random_tree(&mut seed, n2, 4, round % 3 == 0);
        let t1 = PostorderTree {
            labels: &l1,
            lld: &d1,
        };
        let t2 = PostorderTree {
            labels: &l2,
            lld: &d2,
        };
        validate_tree(&t1).unwrap();
        validate_tree(&t2).unwrap();
        // The same unit costs spelled as arrays and a table take the general f64 kernel.
        let general = CostModel {
            delete: Some(&ones[..n1]),
            insert: Some(&ones[..n2]),
            rename: Rename::Table {
                costs: &table,
                n_labels: 4,
            },
        };
        let expected = zhang_shasha(&t1, &t2, &general, &mut ws);
        let got = zhang_shasha(&t1, &t2, &CostModel::UNIT, &mut ws);
        assert_eq!(
            got.to_bits(),
            expected.to_bits(),
            "round {round}: {l1:?}/{d1:?} vs {l2:?}/{d2:?}"
        );
        assert_eq!(
            zhang_shasha_mapping(&t1, &t2, &CostModel::UNIT, &mut ws).0,
            got
        );
    }
}
