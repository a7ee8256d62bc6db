use super::*;

/// xorshift64*: a tiny deterministic generator for the randomised tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Plain full-table dynamic program written independently of the kernel.
fn naive<C: Costs>(c: &C) -> f64 {
    let (n, m) = (c.len_a(), c.len_b());
    let mut d = vec![vec![0.0; m + 1]; n + 1];
    for j in 1..=m {
        d[0][j] = d[0][j - 1] + c.ins(j - 1);
    }
    for i in 1..=n {
        d[i][0] = d[i - 1][0] + c.del(i - 1);
        for j in 1..=m {
            let cands = [
                d[i - 1][j - 1] + c.sub(i - 1, j - 1),
                d[i - 1][j] + c.del(i - 1),
                d[i][j - 1] + c.ins(j - 1),
            ];
            d[i][j] = cands.iter().cloned().fold(f64::INFINITY, f64::min);
        }
    }
    d[n][m]
}

/// Cost of an alignment, recomputed from its operations.
fn cost_of<C: Costs>(c: &C, ops: &[AlignOp]) -> f64 {
    ops.iter()
        .map(|op| match op[0] {
            OP_MATCH => c.sub(op[1] as usize, op[2] as usize),
            OP_DELETE => c.del(op[1] as usize),
            _ => c.ins(op[2] as usize),
        })
        .sum()
}

fn check_ops_cover(ops: &[AlignOp], n: usize, m: usize) {
    let (mut i, mut j) = (0i64, 0i64);
    for op in ops {
        match op[0] {
            OP_MATCH => {
                assert_eq!((op[1], op[2]), (i, j));
                i += 1;
                j += 1;
            }
            OP_DELETE => {
                assert_eq!((op[1], op[2]), (i, -1));
                i += 1;
            }
            _ => {
                assert_eq!((op[1], op[2]), (-1, j));
                j += 1;
            }
        }
    }
    assert_eq!((i as usize, j as usize), (n, m));
}

#[test]
fn unit_cost_table_is_levenshtein() {
    let a: Vec<u32> = "kitten".bytes().map(|b| (b - b'a') as u32).collect();
    let b: Vec<u32> = "sitting".bytes().map(|b| (b - b'a') as u32).collect();
    let mut table = vec![1.0; 26 * 26];
    for s in 0..26 {
        table[s * 26 + s] = 0.0;
    }
    let (del, ins) = (vec![1.0; a.len()], vec![1.0; b.len()]);
    let c = TableCost {
        a: &a,
        b: &b,
        table: &table,
        n_symbols_b: 26,
        del: &del,
        ins: &ins,
    };
    c.validate().unwrap();
    assert_eq!(distance(&c, &mut Scratch::default()), 3.0);
    let (d, ops) = align(&c);
    assert_eq!(d, 3.0);
    check_ops_cover(&ops, a.len(), b.len());
    assert_eq!(cost_of(&c, &ops), 3.0);
}

#[test]
fn traceback_prefers_diagonal_then_deletion() {
    // a = [x], b = [y] with sub = del + ins: the diagonal wins the tie.
    let table = vec![0.0, 2.0, 2.0, 0.0];
    let c = TableCost {
        a: &[0],
        b: &[1],
        table: &table,
        n_symbols_b: 2,
        del: &[1.0],
        ins: &[1.0],
    };
    assert_eq!(align(&c).1, vec![[OP_MATCH, 0, 0]]);
    // a = [x, x], b = [x]: deleting the second x or the first costs the same; the traceback from
    // the end prefers the diagonal, so the first x is deleted.
    let c = TableCost {
        a: &[0, 0],
        b: &[0],
        table: &table,
        n_symbols_b: 2,
        del: &[1.0, 1.0],
        ins: &[1.0],
    };
    assert_eq!(align(&c).1, vec![[OP_DELETE, 0, -1], [OP_MATCH, 1, 0]]);
}

#[test]
fn empty_sides() {
    let c = TableCost {
        a: &[],
        b: &[0, 0],
        table: &[0.0],
        n_symbols_b: 1,
        del: &[],
        ins: &[1.5, 2.0],
    };
    assert_eq!(distance(&c, &mut Scratch::default()), 3.5);
    assert_eq!(
        align(&c),
        (3.5, vec![[OP_INSERT, -1, 0], [OP_INSERT, -1, 1]])
    );
    let c = TableCost {
        a: &[],
        b: &[],
        table: &[],
        n_symbols_b: 0,
        del: &[],
        ins: &[],
    };
    c.validate().unwrap();
    assert_eq!(align(&c), (0.0, vec![]));
}

#[test]
fn table_validation_names_the_argument() {
    let c = TableCost {
        a: &[3],
        b: &[0],
        table: &[0.0; 4],
        n_symbols_b: 2,
        del: &[1.0],
        ins: &[1.0],
    };
    assert!(c.validate().unwrap_err().contains("table has only 2 rows"));
    let c = TableCost {
        a: &[0],
        b: &[0],
        table: &[0.0; 4],
        n_symbols_b: 2,
        del: &[],
        ins: &[1.0],
    };
    assert!(c.validate().unwrap_err().starts_with("del"));
}

/// A call table built from `(tool, [(name, value, weight)])` rows (mass = tool weight + arg weights).
struct Packed {
    tools: Vec<u32>,
    mass: Vec<f64>,
    offsets: Vec<i64>,
    names: Vec<u32>,
    values: Vec<u32>,
    weights: Vec<f64>,
}

type Call = (u32, Vec<(u32, u32, f64)>);

impl Packed {
    fn new(steps: &[Call], tool_weight: f64) -> Packed {
        let mut p = Packed {
            tools: vec![],
            mass: vec![],
            offsets: vec![0],
            names: vec![],
            values: vec![],
            weights: vec![],
        };
        for (tool, args) in steps {
            p.tools.push(*tool);
            let mut mass = tool_weight;
            for &(n, v, w) in args {
                p.names.push(n);
                p.values.push(v);
                p.weights.push(w);
                mass += w;
            }
            p.mass.push(mass);
            p.offsets.push(p.names.len() as i64);
        }
        p
    }
    fn table(&self) -> CallTable<'_> {
        CallTable {
            tools: &self.tools,
            mass: &self.mass,
            arg_offsets: &self.offsets,
            arg_names: &self.names,
            arg_values: &self.values,
            arg_weights: &self.weights,
        }
    }
}

/// One table holding the calls of `a` then those of `b`, and the two id sequences.
fn pair(a: &[Call], b: &[Call], tool_weight: f64) -> (Packed, Vec<u32>, Vec<u32>) {
    let all: Vec<Call> = a.iter().chain(b.iter()).cloned().collect();
    let ids_a = (0..a.len() as u32).collect();
    let ids_b = (a.len() as u32..(a.len() + b.len()) as u32).collect();
    (Packed::new(&all, tool_weight), ids_a, ids_b)
}

fn dist(a: &[Call], b: &[Call]) -> f64 {
    let (t, ia, ib) = pair(a, b, 1.0);
    let c = CallCost::new(t.table(), &ia, &ib);
    let d = distance(&c, &mut Scratch::default());
    assert_eq!(align(&c).0, d);
    d
}

#[test]
fn trajectory_vectors_of_the_spec() {
    // [b(), a()] vs [a(), b()] -> raw 2.0 (a documented ek example).
    assert_eq!(
        dist(&[(1, vec![]), (0, vec![])], &[(0, vec![]), (1, vec![])]),
        2.0
    );
    // s(q="x", r=1) vs s(q="y", r=1) -> raw 1.0.
    assert_eq!(
        dist(
            &[(0, vec![(0, 0, 1.0), (1, 2, 1.0)])],
            &[(0, vec![(0, 1, 1.0), (1, 2, 1.0)])]
        ),
        1.0
    );
    // [s()] vs [s(x=None)] -> raw 1.0: a missing argument is never free.
    assert_eq!(dist(&[(0, vec![])], &[(0, vec![(0, 0, 1.0)])]), 1.0);
    // detour: [search(q), search(q), answer(a)] vs [search(q), answer(a)] -> raw 2.0.
    let search = (0, vec![(0, 0, 1.0)]);
    let answer = (1, vec![(1, 1, 1.0)]);
    assert_eq!(
        dist(
            &[search.clone(), search.clone(), answer.clone()],
            &[search, answer]
        ),
        2.0
    );
}

#[test]
fn shared_call_ids_cost_nothing_and_ids_are_checked() {
    let t = Packed::new(&[(0, vec![(0, 0, 1.0)]), (1, vec![])], 1.0);
    let c = CallCost::new(t.table(), &[0, 1, 0], &[0, 0]);
    assert_eq!(distance(&c, &mut Scratch::default()), 1.0);
    t.table().validate().unwrap();
    assert!(t
        .table()
        .validate_ids(&[0, 2], "a_calls")
        .unwrap_err()
        .contains("a_calls holds call id 2"));
}

#[test]
fn table_validation_names_the_array() {
    let p = Packed::new(&[(0, vec![(1, 0, 1.0), (0, 0, 1.0)])], 1.0);
    assert!(p
        .table()
        .validate()
        .unwrap_err()
        .contains("arg_names must be strictly increasing"));
}

fn random_steps(rng: &mut Rng, len: usize) -> Vec<Call> {
    (0..len)
        .map(|_| {
            let tool = rng.below(3) as u32;
            let mut args = vec![];
            for name in 0..4u32 {
                if rng.below(2) == 0 {
                    args.push((
                        name,
                        rng.below(3) as u32,
                        [0.5, 1.0, 2.0, 20.0][rng.below(4) as usize],
                    ));
                }
            }
            (tool, args)
        })
        .collect()
}

#[test]
fn random_trajectories_match_the_naive_program() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut row = Scratch::default();
    for _ in 0..3000 {
        let (n, m) = (rng.below(9) as usize, rng.below(9) as usize);
        let tool_weight = [1.0, 10.0][rng.below(2) as usize];
        let (t, ia, ib) = pair(
            &random_steps(&mut rng, n),
            &random_steps(&mut rng, m),
            tool_weight,
        );
        let c = CallCost::new(t.table(), &ia, &ib);
        let expected = naive(&c);
        assert_eq!(distance(&c, &mut row), expected);
        let (d, ops) = align(&c);
        assert_eq!(d, expected);
        check_ops_cover(&ops, n, m);
        assert!((cost_of(&c, &ops) - expected).abs() <= 1e-9 * (1.0 + expected));
    }
}

#[test]
fn seq_offsets_validation() {
    validate_seq_offsets(&[0, 1, 3], 3, "a_seq_offsets").unwrap();
    assert!(validate_seq_offsets(&[0, 2, 1, 3], 3, "a_seq_offsets").is_err());
    assert!(validate_seq_offsets(&[0, 2], 3, "a_seq_offsets")
        .unwrap_err()
        .contains("end at the number of steps"));
}

/// Unit-weight trajectories over `names` argument names and `values` value ids.
fn random_unit_steps(rng: &mut Rng, len: usize, names: u64, values: u64) -> Vec<Call> {
    (0..len)
        .map(|_| {
            let tool = rng.below(3) as u32;
            let mut args = vec![];
            for name in 0..names as u32 {
                if rng.below(3) == 0 {
                    args.push((name, rng.below(values) as u32, 1.0));
                }
            }
            (tool, args)
        })
        .collect()
}

#[test]
fn unit_kernel_matches_the_general_kernel() {
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let (mut general, mut dense, mut both) = (
        Scratch::default(),
        unit::UnitScratch::default(),
        CallScratch::default(),
    );
    let mut dense_runs = 0;
    for round in 0..4000 {
        let (n, m) = (rng.below(12) as usize, rng.below(12) as usize);
        // up to 24 names: some pairs exceed the dense layout's slots and take the general kernel
        let names = if round % 10 == 0 {
            24
        } else {
            1 + rng.below(6)
        };
        let (t, ia, ib) = pair(
            &random_unit_steps(&mut rng, n, names, 3),
            &random_unit_steps(&mut rng, m, names, 3),
            1.0,
        );
        let table = t.table();
        let model = unit::UnitModel::new(table).expect("a unit-weight table");
        let expected = distance(&CallCost::new(table, &ia, &ib), &mut general);
        if let Some(d) = model.distance(&ia, &ib, &mut dense) {
            assert_eq!(d, expected);
            dense_runs += 1;
        }
        assert_eq!(
            CallKernel::new(table).distance(&ia, &ib, &mut both),
            expected
        );
    }
    assert!(dense_runs > 3000, "{dense_runs}");
}

#[test]
fn unit_kernel_declines_what_it_cannot_represent() {
    // a weight other than 1, a mass other than 1 + arguments, or a value id equal to the missing
    // marker: not a unit table (the general kernel runs)
    let weighted = Packed::new(&[(0, vec![(0, 0, 2.0)])], 1.0);
    assert!(unit::UnitModel::new(weighted.table()).is_none());
    let heavy_tool = Packed::new(&[(0, vec![(0, 0, 1.0)])], 3.0);
    assert!(unit::UnitModel::new(heavy_tool.table()).is_none());
    let (t, _, _) = pair(&[(0, vec![(0, u32::MAX, 1.0)])], &[(0, vec![])], 1.0);
    assert!(unit::UnitModel::new(t.table()).is_none());
    assert_eq!(dist(&[(0, vec![(0, u32::MAX, 1.0)])], &[(0, vec![])]), 1.0);
    // more names in a pair than slots
    let mut scratch = unit::UnitScratch::default();
    let many: Vec<(u32, u32, f64)> = (0..17).map(|k| (k, 0, 1.0)).collect();
    let (t, ia, ib) = pair(&[(0, many)], &[(0, vec![])], 1.0);
    let model = unit::UnitModel::new(t.table()).unwrap();
    assert_eq!(model.distance(&ia, &ib, &mut scratch), None);
    // the scratch is left clean: a pair with exactly MAX_SLOTS names still fits afterwards
    let odd: Vec<(u32, u32, f64)> = (0..16).map(|k| (k, k % 2, 1.0)).collect();
    let zero: Vec<(u32, u32, f64)> = (0..16).map(|k| (k, 0, 1.0)).collect();
    let (t16, ja, jb) = pair(&[(0, odd)], &[(0, zero)], 1.0);
    let model16 = unit::UnitModel::new(t16.table()).unwrap();
    assert_eq!(model16.distance(&ja, &jb, &mut scratch), Some(8.0));
    let mut both = CallScratch::default();
    assert_eq!(
        CallKernel::new(t.table()).distance(&ia, &ib, &mut both),
        17.0
    );
}

/// `base` with about one step in `every` deleted, replaced or followed by an extra step.
fn perturbed(rng: &mut Rng, base: &[Call], every: u64, names: u64) -> Vec<Call> {
    let mut out = vec![];
    for step in base {
        match rng.below(every) {
            0 => {}
            1 => out.extend(random_unit_steps(rng, 1, names, 3)),
            2 => {
                out.push(step.clone());
                out.extend(random_unit_steps(rng, 1, names, 3));
            }
            _ => out.push(step.clone()),
        }
    }
    out
}

#[test]
fn unit_kernel_band_is_exact_on_long_trajectories() {
    // Alike pairs stay within the first band; unrelated or skewed pairs need it widened.
    let mut rng = Rng(0xA076_1D64_78BD_642F);
    let (mut general, mut dense) = (Scratch::default(), unit::UnitScratch::default());
    for round in 0..600 {
        let names = 1 + rng.below(4);
        let (len_a, len_b, every) = (20 + rng.below(60), rng.below(80), 2 + rng.below(12));
        let a = random_unit_steps(&mut rng, len_a as usize, names, 3);
        let b = match round % 3 {
            0 => perturbed(&mut rng, &a, every, names),
            1 => random_unit_steps(&mut rng, len_b as usize, names, 3),
            _ => a[..(len_b as usize).min(a.len())].to_vec(),
        };
        let (t, ia, ib) = pair(&a, &b, 1.0);
        let model = unit::UnitModel::new(t.table()).unwrap();
        let expected = distance(&CallCost::new(t.table(), &ia, &ib), &mut general);
        assert_eq!(
            model.distance(&ia, &ib, &mut dense),
            Some(expected),
            "round {round}"
        );
        assert_eq!(
            model.distance(&ib, &ia, &mut dense),
            Some(expected),
            "round {round}"
        );
    }
}

#[test]
fn call_mass_is_the_tool_weight_plus_the_argument_weights_in_order() {
    assert_eq!(call_mass(1.0, &[1.0, 1.0], Summation::Sequential), 3.0);
    assert_eq!(call_mass(2.5, &[], Summation::Sequential), 2.5);
    // summed left to right from 0, then added to the tool weight: 0.1 + (0.2 + 0.3)
    assert_eq!(
        call_mass(0.1, &[0.2, 0.3], Summation::Sequential),
        0.1 + (0.0 + 0.2 + 0.3)
    );
    assert_ne!(
        call_mass(0.1, &[0.2, 0.3], Summation::Sequential),
        (0.1 + 0.2) + 0.3
    );
    // a sum from 0 (Python's `sum`) makes all-negative-zero weights +0.0
    assert!(call_mass(-0.0, &[-0.0], Summation::Sequential).is_sign_positive());
    assert!(call_mass(-0.0, &[-0.0], Summation::Compensated).is_sign_positive());
}

#[test]
fn call_mass_sums_the_arguments_as_the_python_in_use_does() {
    // ten weights of 0.1: CPython <= 3.11 adds them with ten roundings, 3.12 compensates
    assert_eq!(
        call_mass(0.0, &[0.1; 10], Summation::Sequential),
        0.9999999999999999
    );
    assert_eq!(call_mass(0.0, &[0.1; 10], Summation::Compensated), 1.0);
    assert_eq!(call_mass(2.0, &[0.1; 10], Summation::Compensated), 3.0);
}
