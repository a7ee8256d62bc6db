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
    for j in 0..=t {
        dp[0][j] = j as u32;
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
