//! Needleman–Wunsch with a substitution table: `align` and the O(m)-memory `distance` agree, the
//! alignment visits every element of both sides once in order and prices to the distance, and
//! with 0/1 costs the distance is the Levenshtein distance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{levenshtein_dp, Input};
use scorekit_kernels::align::{
    align, distance, Costs, Scratch, TableCost, OP_DELETE, OP_INSERT, OP_MATCH,
};

const N_SYMBOLS: usize = 5;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let a: Vec<u32> = (0..input.below(60))
        .map(|_| u32::from(input.byte()) % N_SYMBOLS as u32)
        .collect();
    let b: Vec<u32> = (0..input.below(60))
        .map(|_| u32::from(input.byte()) % N_SYMBOLS as u32)
        .collect();
    let table: Vec<f64> = (0..N_SYMBOLS * N_SYMBOLS).map(|_| input.cost()).collect();
    let del: Vec<f64> = a.iter().map(|_| input.cost()).collect();
    let ins: Vec<f64> = b.iter().map(|_| input.cost()).collect();
    let costs = TableCost {
        a: &a,
        b: &b,
        table: &table,
        n_symbols_b: N_SYMBOLS,
        del: &del,
        ins: &ins,
    };
    costs.validate().expect("generated costs are valid");
    let (d, ops) = align(&costs);
    assert_eq!(d, distance(&costs, &mut Scratch::default()));
    let (mut i, mut j, mut priced) = (0i64, 0i64, 0.0f64);
    for &[op, x, y] in &ops {
        match op {
            OP_MATCH => {
                assert_eq!((x, y), (i, j));
                priced += costs.sub(x as usize, y as usize);
                i += 1;
                j += 1;
            }
            OP_DELETE => {
                assert_eq!((x, y), (i, -1));
                priced += costs.del(x as usize);
                i += 1;
            }
            OP_INSERT => {
                assert_eq!((x, y), (-1, j));
                priced += costs.ins(y as usize);
                j += 1;
            }
            _ => panic!("unknown op {op}"),
        }
    }
    assert_eq!((i as usize, j as usize), (a.len(), b.len()));
    assert_eq!(priced, d);

    let unit_table: Vec<f64> = (0..N_SYMBOLS * N_SYMBOLS)
        .map(|k| f64::from(u8::from(k % (N_SYMBOLS + 1) != 0)))
        .collect();
    let ones_a = vec![1.0; a.len()];
    let ones_b = vec![1.0; b.len()];
    let unit = TableCost {
        a: &a,
        b: &b,
        table: &unit_table,
        n_symbols_b: N_SYMBOLS,
        del: &ones_a,
        ins: &ones_b,
    };
    assert_eq!(
        distance(&unit, &mut Scratch::default()),
        levenshtein_dp(&a, &b) as f64
    );
});
