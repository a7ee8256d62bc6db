//! Tree edit distance (Zhang–Shasha): unit costs are symmetric, bounded by the node counts and 0
//! on equal trees; with a cost table the returned mapping prices to the distance and swapping the
//! trees (with the table transposed) gives the same distance. Arbitrary `lld` arrays are either
//! rejected by `validate_tree` or scored without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{tree, Input};
use scorekit_kernels::tree::{
    validate_costs, validate_tree, zhang_shasha, zhang_shasha_mapping, CostModel, PostorderTree,
    Rename, Workspace,
};

const N_LABELS: u32 = 4;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let (n1, n2) = (input.below(40), input.below(40));
    let (labels1, lld1) = tree(&mut input, n1, N_LABELS);
    let (labels2, lld2) = tree(&mut input, n2, N_LABELS);
    let t1 = PostorderTree {
        labels: &labels1,
        lld: &lld1,
    };
    let t2 = PostorderTree {
        labels: &labels2,
        lld: &lld2,
    };
    validate_tree(&t1).expect("generated tree 1 is valid");
    validate_tree(&t2).expect("generated tree 2 is valid");
    let mut ws = Workspace::new();

    let unit = zhang_shasha(&t1, &t2, &CostModel::UNIT, &mut ws);
    assert_eq!(
        unit,
        zhang_shasha(&t2, &t1, &CostModel::UNIT, &mut ws),
        "symmetry"
    );
    assert!(unit >= n1.abs_diff(n2) as f64 && unit <= (n1 + n2) as f64);
    assert_eq!(zhang_shasha(&t1, &t1, &CostModel::UNIT, &mut ws), 0.0);

    let k = N_LABELS as usize;
    let table: Vec<f64> = (0..k * k).map(|_| input.cost()).collect();
    let transposed: Vec<f64> = (0..k * k).map(|i| table[(i % k) * k + i / k]).collect();
    let delete: Vec<f64> = (0..n1).map(|_| input.cost()).collect();
    let insert: Vec<f64> = (0..n2).map(|_| input.cost()).collect();
    let costs = CostModel {
        delete: Some(&delete),
        insert: Some(&insert),
        rename: Rename::Table {
            costs: &table,
            n_labels: k,
        },
    };
    validate_costs(&t1, &t2, &costs).expect("generated costs are valid");
    let (d, mapping) = zhang_shasha_mapping(&t1, &t2, &costs, &mut ws);
    assert_eq!(d, zhang_shasha(&t1, &t2, &costs, &mut ws));
    let priced: f64 = mapping
        .iter()
        .map(|&(a, b)| match (a, b) {
            (a, -1) => delete[a as usize],
            (-1, b) => insert[b as usize],
            (a, b) => table[labels1[a as usize] as usize * k + labels2[b as usize] as usize],
        })
        .sum();
    assert_eq!(priced, d, "mapping prices to the distance");
    let mut seen1: Vec<i64> = mapping
        .iter()
        .map(|&(a, _)| a)
        .filter(|&a| a >= 0)
        .collect();
    let mut seen2: Vec<i64> = mapping
        .iter()
        .map(|&(_, b)| b)
        .filter(|&b| b >= 0)
        .collect();
    seen1.sort_unstable();
    seen2.sort_unstable();
    assert!(
        seen1.iter().copied().eq(0..n1 as i64) && seen2.iter().copied().eq(0..n2 as i64),
        "every node once"
    );
    let swapped = CostModel {
        delete: Some(&insert),
        insert: Some(&delete),
        rename: Rename::Table {
            costs: &transposed,
            n_labels: k,
        },
    };
    assert_eq!(
        zhang_shasha(&t2, &t1, &swapped, &mut ws),
        d,
        "symmetry under transposition"
    );

    // Arbitrary post-order arrays: rejected, or valid and scored.
    let n3 = input.below(12);
    let labels3: Vec<u32> = (0..n3)
        .map(|_| u32::from(input.byte()) % N_LABELS)
        .collect();
    let lld3: Vec<u32> = (0..n3).map(|_| u32::from(input.byte() % 14)).collect();
    let t3 = PostorderTree {
        labels: &labels3,
        lld: &lld3,
    };
    if validate_tree(&t3).is_ok() {
        let d3 = zhang_shasha(&t1, &t3, &CostModel::UNIT, &mut ws);
        assert!(d3 <= (n1 + n3) as f64);
    }
});
