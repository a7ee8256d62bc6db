use super::*;
use std::collections::HashMap;

/// Intern whitespace-separated words of each hypothesis; every token gets confidence `conf`.
fn pack(hyps: &[&str], vocab: &mut HashMap<String, u32>) -> (Vec<u32>, Vec<f64>, Vec<i64>) {
    let (mut toks, mut offs) = (vec![], vec![0i64]);
    for h in hyps {
        for w in h.split_whitespace() {
            let next = vocab.len() as u32;
            toks.push(*vocab.entry(w.to_string()).or_insert(next));
        }
        offs.push(toks.len() as i64);
    }
    let confs = vec![1.0; toks.len()];
    (toks, confs, offs)
}

fn text(r: &RoverResult, vocab: &HashMap<String, u32>) -> String {
    let names: HashMap<u32, &str> = vocab.iter().map(|(k, &v)| (v, k.as_str())).collect();
    r.winners
        .iter()
        .filter(|&&w| w != NULL)
        .map(|w| names[w])
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(hyps: &[&str], cw: f64, null_conf: f64) -> (RoverResult, String) {
    let mut vocab = HashMap::new();
    let (t, c, o) = pack(hyps, &mut vocab);
    let r = rover(&t, &c, &o, cw, null_conf, Some(5000)).unwrap();
    let s = text(&r, &vocab);
    (r, s)
}

#[test]
fn the_cat_sat() {
    let (r, s) = run(&["the cat sat", "the cat sit", "the bat sat"], 0.5, 0.7);
    assert_eq!(s, "the cat sat");
    assert_eq!(r.scores, vec![1.0, 0.8333333333333333, 0.8333333333333333]);
    assert_eq!(r.vote_shares, vec![1.0, 2.0 / 3.0, 2.0 / 3.0]);
    let (r, _) = run(&["the cat sat", "the cat sit", "the bat sat"], 0.0, 0.7);
    assert_eq!(r.scores[1], 2.0 / 3.0);
}

#[test]
fn lone_insertion_loses_to_null_with_three_engines() {
    let (r, s) = run(&["a b c", "a x b c", "a b c"], 0.5, 0.7);
    assert_eq!(r.n_slots(), 4);
    assert_eq!(&r.tokens[3..6], &[NULL, 3, NULL]); // ids: a0 b1 c2 x3
    assert_eq!(r.winners[1], NULL);
    assert_eq!(r.scores[1], 0.6833333333333333);
    assert_eq!(s, "a b c");
    let (r, s) = run(&["a b c", "a x b c", "a b c"], 0.5, 0.0);
    assert_eq!(s, "a x b c");
    assert_eq!(r.vote_shares, vec![1.0, 1.0 / 3.0, 1.0, 1.0]);
}

#[test]
fn confidence_weighting() {
    // [("cat", .9)] vs [("dog", .2)] -> cat, score 0.7; frequency only -> cat (earliest), 0.5.
    let r = rover(&[0, 1], &[0.9, 0.2], &[0, 1, 2], 0.5, 0.7, None).unwrap();
    assert_eq!((r.winners[0], r.scores[0], r.vote_shares[0]), (0, 0.7, 0.5));
    let r = rover(&[0, 1], &[0.9, 0.2], &[0, 1, 2], 0.0, 0.7, None).unwrap();
    assert_eq!((r.winners[0], r.scores[0]), (0, 0.5));
    // [cat .3, cat .3, dog .99]: frequency -> cat; confidence only -> dog.
    let r = rover(&[0, 0, 1], &[0.3, 0.3, 0.99], &[0, 1, 2, 3], 0.0, 0.7, None).unwrap();
    assert_eq!((r.winners[0], r.scores[0]), (0, 2.0 / 3.0));
    let r = rover(&[0, 0, 1], &[0.3, 0.3, 0.99], &[0, 1, 2, 3], 1.0, 0.7, None).unwrap();
    assert_eq!(
        (r.winners[0], r.scores[0], r.vote_shares[0]),
        (1, 0.99, 1.0 / 3.0)
    );
}

#[test]
fn edge_cases() {
    let r = rover(&[], &[], &[0], 0.5, 0.7, Some(1)).unwrap();
    assert_eq!((r.n_engines, r.n_slots()), (0, 0));
    let (r, _) = run(&["", ""], 0.5, 0.7);
    assert_eq!((r.n_engines, r.n_slots()), (2, 0));
    let (r, s) = run(&["", "a"], 0.5, 0.7);
    assert_eq!(
        (s.as_str(), r.scores[0], r.vote_shares[0]),
        ("a", 0.75, 0.5)
    );
    assert_eq!(r.tokens, vec![NULL, 0]);
    let (r, s) = run(&["a b c", "a c"], 0.5, 0.7);
    assert_eq!(
        (s.as_str(), r.vote_shares.clone()),
        ("a b c", vec![1.0, 0.5, 1.0])
    );
    let (r, s) = run(&["x", "y", "x y"], 0.5, 0.7);
    assert_eq!(s, "x");
    assert_eq!(r.tokens, vec![0, 1, 0, NULL, NULL, 1]);
    let (_, s) = run(&["alpha", "beta", "gamma"], 0.5, 0.7);
    assert_eq!(s, "alpha");
}

#[test]
fn order_dependence_vectors() {
    for (hyps, expected) in [
        (["a b c", "a c", "b c"], "a b c"),
        (["a b c", "b c", "a c"], "a b c"),
        (["a c", "a b c", "b c"], "a b c"),
        (["b c", "a b c", "a c"], "a b c"),
        (["a c", "b c", "a b c"], "a c"),
        (["b c", "a c", "a b c"], "b c"),
    ] {
        assert_eq!(run(&hyps, 0.5, 0.7).1, expected, "{hyps:?}");
    }
}

#[test]
fn guard_and_validation() {
    let mut vocab = HashMap::new();
    let long = vec!["a"; 50].join(" ");
    let (t, c, o) = pack(&[&long, &long], &mut vocab);
    let err = rover(&t, &c, &o, 0.5, 0.7, Some(10)).unwrap_err();
    assert_eq!(
        err,
        RoverError::TooLong {
            longest: 50,
            max_tokens: 10
        }
    );
    assert!(err.to_string().contains("max_tokens=10"));
    assert!(rover(&t, &c, &o, 0.5, 0.7, Some(50)).is_ok());
    assert!(rover(&t, &c, &o, 0.5, 0.7, None).is_ok());
    let err = rover(&[0], &[f64::NAN], &[0, 1], 0.5, 0.7, None).unwrap_err();
    assert!(err.to_string().contains("confs must not be NaN"));
    for bad in [
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        -0.5,
        1.0 + f64::EPSILON,
    ] {
        let err = rover(&[0], &[bad], &[0, 1], 0.5, 0.7, None).unwrap_err();
        assert_eq!(err.to_string(), "confs must be within [0, 1] (token 0)");
    }
    for (cw, nc) in [
        (1.5, 0.7),
        (0.5, -0.1),
        (f64::NAN, 0.7),
        (0.5, f64::INFINITY),
    ] {
        assert!(rover(&[0], &[1.0], &[0, 1], cw, nc, None).is_err());
    }
    assert!(rover(&[0, 1], &[0.0, 1.0], &[0, 1, 2], 0.0, 1.0, None).is_ok());
    assert!(rover(&[NULL], &[1.0], &[0, 1], 0.5, 0.7, None).is_err());
    assert!(rover(&[0], &[1.0], &[0, 2], 0.5, 0.7, None).is_err());
}

#[test]
fn majority_ties_go_to_the_first_occurrence() {
    assert_eq!(majority(&[NULL, 5, 4, 4, 5]), 5);
    assert_eq!(majority(&[NULL, NULL]), NULL);
    assert_eq!(majority(&[3, 4, 4]), 4);
}

#[test]
fn identical_hypotheses_agree_fully() {
    let (r, s) = run(&["p q r s", "p q r s", "p q r s", "p q r s"], 0.5, 0.7);
    assert_eq!(s, "p q r s");
    assert!(r.vote_shares.iter().all(|&v| v == 1.0));
}

/// The plain full-table unit-cost DP with the reference traceback, written independently.
fn align_ops_dp(spine: &[u32], hyp: &[u32]) -> Vec<(u8, u32, u32)> {
    let (s, t) = (spine.len(), hyp.len());
    let mut dp = vec![vec![0u32; t + 1]; s + 1];
    for (i, row) in dp.iter_mut().enumerate() {
        row[0] = i as u32;
    }
    for (j, cell) in dp[0].iter_mut().enumerate() {
        *cell = j as u32;
    }
    let cost = |i: usize, j: usize| (spine[i - 1] == NULL || spine[i - 1] != hyp[j - 1]) as u32;
    for i in 1..=s {
        for j in 1..=t {
            dp[i][j] = (dp[i - 1][j - 1] + cost(i, j))
                .min(dp[i - 1][j] + 1)
                .min(dp[i][j - 1] + 1);
        }
    }
    let (mut i, mut j, mut ops) = (s, t, vec![]);
    while i > 0 || j > 0 {
        if i > 0 && j > 0 && dp[i][j] == dp[i - 1][j - 1] + cost(i, j) {
            ops.push((OP_MATCH, (i - 1) as u32, (j - 1) as u32));
            i -= 1;
            j -= 1;
        } else if i > 0 && dp[i][j] == dp[i - 1][j] + 1 {
            ops.push((OP_DELETE, (i - 1) as u32, u32::MAX));
            i -= 1;
        } else {
            ops.push((OP_INSERT, u32::MAX, (j - 1) as u32));
            j -= 1;
        }
    }
    ops.reverse();
    ops
}

#[test]
fn bit_parallel_alignment_equals_the_plain_dp() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut scratch = AlignScratch::default();
    for round in 0..4000 {
        // lengths across word boundaries (0..200 rows: up to four 64-bit words)
        let (s, t) = if round % 10 == 0 {
            (next(200) as usize, next(200) as usize)
        } else {
            (next(20) as usize, next(20) as usize)
        };
        let alphabet = 1 + next(6);
        let spine: Vec<u32> = (0..s)
            .map(|_| {
                if next(8) == 0 {
                    NULL
                } else {
                    next(alphabet) as u32
                }
            })
            .collect();
        let hyp: Vec<u32> = (0..t).map(|_| next(alphabet) as u32).collect();
        assert_eq!(
            align_ops(&spine, &hyp, &mut scratch),
            align_ops_dp(&spine, &hyp),
            "{spine:?} {hyp:?}"
        );
    }
}

/// `RoverConsensus.mean_agreement` of one problem, from [`rover`]'s result, written out.
fn mean_agreement_of(r: &RoverResult) -> f64 {
    let shares: Vec<f64> = r
        .winners
        .iter()
        .zip(&r.vote_shares)
        .filter(|(&w, _)| w != NULL)
        .map(|(_, &v)| v)
        .collect();
    if shares.is_empty() {
        return if r.n_engines >= 2 { 0.0 } else { 1.0 };
    }
    shares.iter().fold(0.0, |acc, v| acc + v) / shares.len() as f64
}

/// Packed batch of problems, each a list of hypotheses of `(token, conf)`.
type Problem = Vec<Vec<(u32, f64)>>;

fn pack_batch(problems: &[Problem]) -> (Vec<u32>, Vec<f64>, Vec<i64>, Vec<i64>) {
    let (mut toks, mut confs, mut engines, mut items) = (vec![], vec![], vec![0i64], vec![0i64]);
    for p in problems {
        for h in p {
            toks.extend(h.iter().map(|u| u.0));
            confs.extend(h.iter().map(|u| u.1));
            engines.push(toks.len() as i64);
        }
        items.push(engines.len() as i64 - 1);
    }
    (toks, confs, engines, items)
}

fn random_problems(seed: u64, n: usize) -> Vec<Problem> {
    let mut state = seed;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let conf_levels = [1.0, 0.9, 0.5, 0.3, 0.25, 0.0];
    (0..n)
        .map(|_| {
            let base: Vec<u32> = (0..next(8)).map(|_| next(5) as u32).collect();
            (0..next(6))
                .map(|_| {
                    let mut h = vec![];
                    for &t in &base {
                        match next(10) {
                            0 => {}
                            1 => h.push(next(5) as u32),
                            _ => h.push(t),
                        }
                        if next(10) == 0 {
                            h.push(next(5) as u32);
                        }
                    }
                    h.into_iter()
                        .map(|t| (t, conf_levels[next(6) as usize]))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Mean agreements of a packed batch with weights `(conf_weight, null_conf)`.
fn batch_means(
    (t, c, e, i): (&[u32], &[f64], &[i64], &[i64]),
    (cw, nc): (f64, f64),
    max_tokens: Option<usize>,
    summation: Summation,
) -> Result<Vec<f64>, BatchError> {
    RoverBatch::new(t, c, e, i, cw, nc, max_tokens, summation).map(|b| b.mean_agreements())
}

#[test]
fn batch_equals_rover_item_by_item() {
    let problems = random_problems(0x9E37_79B9_7F4A_7C15, 3000);
    let (t, c, e, i) = pack_batch(&problems);
    for weights in [(0.5, 0.7), (0.0, 0.7), (1.0, 0.0), (0.3, 1.0)] {
        let batch = batch_means((&t, &c, &e, &i), weights, Some(5000), Summation::Sequential);
        let batch = batch.unwrap();
        assert_eq!(batch.len(), problems.len());
        for (k, p) in problems.iter().enumerate() {
            let (pt, pc, po, _) = pack_batch(std::slice::from_ref(p));
            let r = rover(&pt, &pc, &po, weights.0, weights.1, Some(5000)).unwrap();
            let expected = mean_agreement_of(&r);
            assert_eq!(batch[k].to_bits(), expected.to_bits(), "item {k}: {p:?}");
        }
    }
}

#[test]
fn batch_results_do_not_depend_on_the_rest_of_the_batch() {
    let problems = random_problems(7, 500);
    let means = |problems: &[Problem]| {
        let (t, c, e, i) = pack_batch(problems);
        batch_means((&t, &c, &e, &i), (0.5, 0.7), None, Summation::Compensated).unwrap()
    };
    let reversed: Vec<Problem> = problems.iter().rev().cloned().collect();
    let mut back = means(&reversed);
    back.reverse();
    assert_eq!(means(&problems), back);
}

#[test]
fn batch_mean_uses_the_given_summation() {
    // shares 1/3, 1, 1 (null_conf 0 keeps the lone first token): Python 3.11's sum gives
    // 2.333...31 / 3, Python 3.12's compensated sum 2.333...33 / 3.
    let mut vocab = HashMap::new();
    let (t, c, o) = pack(&["x a b", "a b", "a b"], &mut vocab);
    let run = |summation| batch_means((&t, &c, &o, &[0, 3]), (0.5, 0.0), None, summation);
    assert_eq!(
        run(Summation::Sequential).unwrap(),
        vec![0.7777777777777777]
    );
    assert_eq!(
        run(Summation::Compensated).unwrap(),
        vec![0.7777777777777778]
    );
}

#[test]
fn batch_edge_items() {
    let mut vocab = HashMap::new();
    // items: [] (no engine) | [""] | ["a b"] | ["", ""] | ["", "a"] | the cat sat | ["x", "y"]
    let hyps = [
        "",
        "a b",
        "",
        "",
        "",
        "a",
        "the cat sat",
        "the cat sit",
        "the bat sat",
        "x",
        "y",
    ];
    let (t, c, o) = pack(&hyps, &mut vocab);
    let items = [0i64, 0, 1, 2, 4, 6, 9, 11];
    let m = batch_means(
        (&t, &c, &o, &items),
        (0.5, 0.7),
        Some(3),
        Summation::Sequential,
    );
    let cat_sat = (1.0 + 2.0 / 3.0 + 2.0 / 3.0) / 3.0;
    assert_eq!(m.unwrap(), vec![1.0, 1.0, 1.0, 0.0, 0.5, cat_sat, 0.5]);
    let empty = batch_means(
        (&[], &[], &[0], &[0]),
        (0.5, 0.7),
        None,
        Summation::Sequential,
    );
    assert!(empty.unwrap().is_empty());
}

#[test]
fn batch_errors_name_the_item() {
    let mut vocab = HashMap::new();
    let (t, c, o) = pack(&["a b", "a", "c d e", "c"], &mut vocab);
    let items = [0i64, 2, 4];
    let run = |t: &[u32], c: &[f64], o: &[i64], items: &[i64], nc, max| {
        batch_means((t, c, o, items), (0.5, nc), max, Summation::Sequential).unwrap_err()
    };
    let err = run(&t, &c, &o, &items, 0.7, Some(2));
    let too_long = RoverError::TooLong {
        longest: 3,
        max_tokens: 2,
    };
    assert_eq!((err.item, &err.error), (Some(1), &too_long));
    assert!(err
        .to_string()
        .starts_with("item 1: ROVER hypothesis has 3 tokens"));
    let with_conf = |k: usize, value: f64| {
        let mut c = c.clone();
        c[k] = value;
        c
    };
    // token 1 of item 1 is token 4 of the batch; item 0 is reported before item 1's long hypothesis
    for (confs, max, item, message) in [
        (
            with_conf(4, f64::NAN),
            None,
            Some(1),
            "item 1: confs must not be NaN (token 1)",
        ),
        (
            with_conf(4, 1.5),
            None,
            Some(1),
            "item 1: confs must be within [0, 1] (token 1)",
        ),
        (
            with_conf(0, -1e-300),
            Some(2),
            Some(0),
            "item 0: confs must be within [0, 1] (token 0)",
        ),
    ] {
        let err = run(&t, &confs, &o, &items, 0.7, max);
        assert_eq!((err.item, err.to_string()), (item, message.to_string()));
    }
    let hypotheses = "item_offsets must run from 0 to the number of hypotheses (4)";
    for (bad, message) in [
        (&[0i64, 2, 3][..], hypotheses),
        (&[0, 3, 2, 4][..], "item_offsets must be non-decreasing"),
        (&[1, 4][..], hypotheses),
        (&[][..], hypotheses),
    ] {
        let err = run(&t, &c, &o, bad, 0.7, None);
        assert_eq!((err.item, err.to_string()), (None, message.to_string()));
    }
    let tokens = "engine_offsets must run from 0 to the number of tokens (7)";
    assert_eq!(run(&t, &c, &[0, 9], &[0, 1], 0.7, None).to_string(), tokens);
    let err = run(&t, &c[1..], &o, &items, 0.7, None).to_string();
    assert!(err.starts_with("confs must have one value per token"));
    let err = run(&t, &c, &o, &items, 1.5, None).to_string();
    assert_eq!(err, "null_conf must be within [0, 1]");
    let mut nulls = t.clone();
    nulls[6] = NULL;
    assert_eq!(run(&nulls, &c, &o, &items, 0.7, None).item, Some(1));
}
