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
