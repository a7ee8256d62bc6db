use super::*;
use crate::one_thread;

/// CPython's seeding of `random.Random(seed)` for an int seed: `init_by_array` over the 32-bit
/// little-endian words of `abs(seed)` (`[0]` for 0), after `init_genrand(19650218)`.
fn seeded(seed: u64) -> Mt19937 {
    let key: Vec<u32> = if seed == 0 {
        vec![0]
    } else {
        let (lo, hi) = (seed as u32, (seed >> 32) as u32);
        if hi == 0 {
            vec![lo]
        } else {
            vec![lo, hi]
        }
    };
    let mut mt = [0u32; STATE_WORDS];
    mt[0] = 19_650_218;
    for i in 1..STATE_WORDS {
        mt[i] = 1_812_433_253u32
            .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
            .wrapping_add(i as u32);
    }
    let (mut i, mut j) = (1usize, 0usize);
    for _ in 0..STATE_WORDS.max(key.len()) {
        mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
            .wrapping_add(key[j])
            .wrapping_add(j as u32);
        i += 1;
        j += 1;
        if i >= STATE_WORDS {
            mt[0] = mt[STATE_WORDS - 1];
            i = 1;
        }
        if j >= key.len() {
            j = 0;
        }
    }
    for _ in 0..STATE_WORDS - 1 {
        mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
            .wrapping_sub(i as u32);
        i += 1;
        if i >= STATE_WORDS {
            mt[0] = mt[STATE_WORDS - 1];
            i = 1;
        }
    }
    mt[0] = 0x8000_0000;
    Mt19937::from_state(&mt, STATE_WORDS).unwrap()
}

/// `random.Random(seed).randrange(n)` drawn one word at a time, the plain way.
fn randrange(mt: &mut Mt19937, n: u32) -> u32 {
    let k = 32 - n.leading_zeros();
    loop {
        let r = mt.next_u32() >> (32 - k);
        if r < n {
            return r;
        }
    }
}

/// The resamples' statistics computed the plain way: draw, gather, add.
fn reference(
    rows: &[[f64; 2]],
    seed: u64,
    resamples: usize,
    compensated: bool,
    ratio: bool,
) -> Vec<f64> {
    let mut mt = seeded(seed);
    let n = rows.len();
    (0..resamples)
        .map(|_| {
            let sample: Vec<[f64; 2]> = (0..n)
                .map(|_| rows[randrange(&mut mt, n as u32) as usize])
                .collect();
            let add = |col: usize| {
                let xs = sample.iter().map(|r| r[col]);
                if compensated {
                    let (mut f, mut c) = (0.0f64, 0.0f64);
                    for x in xs {
                        let t = f + x;
                        c += if f.abs() >= x.abs() {
                            (f - t) + x
                        } else {
                            (x - t) + f
                        };
                        f = t;
                    }
                    if c != 0.0 && c.is_finite() {
                        f + c
                    } else {
                        f
                    }
                } else {
                    xs.fold(0.0, |a, x| a + x)
                }
            };
            if ratio {
                let (cost, wins) = (add(0), add(1));
                if wins <= 0.0 {
                    f64::INFINITY
                } else {
                    cost / wins
                }
            } else {
                add(0) / n as f64
            }
        })
        .collect()
}

fn summation(compensated: bool) -> Summation {
    if compensated {
        Summation::Compensated
    } else {
        Summation::Sequential
    }
}

#[test]
fn cpython_getrandbits_vectors() {
    let mut mt = seeded(0);
    assert_eq!(
        [mt.next_u32(), mt.next_u32(), mt.next_u32()],
        [3626764237, 1654615998, 3255389356]
    );
    let mut mt = seeded((1 << 40) + 5);
    assert_eq!(
        [mt.next_u32(), mt.next_u32(), mt.next_u32()],
        [2166296868, 2220160828, 1153647273]
    );
    let mut mt = seeded(3); // random.Random(-3) seeds from abs(-3)
    assert_eq!([mt.next_u32(), mt.next_u32()], [1022050301, 2545373330]);
}

#[test]
fn cpython_randrange_vectors() {
    let mut draws = Draws::new(seeded(0), 5);
    let mut out = [0u32; 10];
    draws.fill(&mut out);
    assert_eq!(out, [3, 3, 0, 2, 4, 3, 3, 2, 3, 2]);
    let mut draws = Draws::new(seeded(42), 7);
    let mut out = [0u32; 12];
    draws.fill(&mut out[..5]);
    draws.fill(&mut out[5..]);
    assert_eq!(out, [5, 0, 0, 5, 2, 1, 1, 1, 5, 0, 5, 5]);
}

#[test]
fn draws_match_word_by_word_rejection() {
    for n in [
        1u32,
        2,
        3,
        5,
        623,
        624,
        1000,
        65_537,
        (1 << 31) + 3,
        u32::MAX,
    ] {
        let mut plain = seeded(n as u64);
        let mut draws = Draws::new(seeded(n as u64), n);
        let mut got = vec![0u32; 3000];
        draws.fill(&mut got[..1]);
        draws.fill(&mut got[1..1700]);
        draws.fill(&mut got[1700..]);
        let want: Vec<u32> = (0..3000).map(|_| randrange(&mut plain, n)).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn starts_mid_state() {
    // A generator that has already given 100 words goes on exactly where it stopped.
    let mut mt = seeded(9);
    for _ in 0..100 {
        mt.next_u32();
    }
    let mut resumed = Mt19937::from_state(&mt.state, mt.pos).unwrap();
    let mut draws = Draws::new(mt, 10);
    let mut got = [0u32; 2000];
    draws.fill(&mut got);
    let want: Vec<u32> = (0..2000).map(|_| randrange(&mut resumed, 10)).collect();
    assert_eq!(got.to_vec(), want);
}

#[test]
fn python_vectors() {
    let mean = |v: &[f64], seed, r| {
        bootstrap_means(v, seeded(seed), r, Summation::Sequential, one_thread).unwrap()
    };
    assert_eq!(
        mean(&[1.0, 2.0, 3.0, 4.0, 5.0], 0, 6),
        [3.4, 3.6, 3.4, 3.2, 2.4, 3.2]
    );
    assert_eq!(
        mean(&[0.1, 0.2, 0.7], 42, 9),
        [
            0.3,
            0.3333333333333333,
            0.3,
            0.5,
            0.5,
            0.13333333333333333,
            0.10000000000000002,
            0.5,
            0.5
        ]
    );
    let mut stats = mean(&[1.0, 2.0, 3.0, 4.0, 5.0], 0, 2000);
    stats.sort_by(f64::total_cmp);
    assert_eq!((stats[50], stats[1950]), (1.8, 4.2));
    let mut stats = mean(&[0.0, 1.0, 1.0, 0.0, 1.0], 0, 10);
    stats.sort_by(f64::total_cmp);
    assert_eq!((stats[0], stats[9]), (0.2, 1.0));
    let ratios = bootstrap_ratios(
        &[1e-5, 1e-5, 3e-5],
        &[1.0, 0.0, 0.0],
        seeded(7),
        9,
        Summation::Sequential,
        one_thread,
    );
    assert_eq!(
        ratios.unwrap(),
        [
            3.0000000000000004e-05,
            2.5e-05,
            5e-05,
            7.000000000000001e-05,
            1e-05,
            3.0000000000000004e-05,
            2.5e-05,
            5e-05,
            2.5e-05
        ]
    );
}

#[test]
fn compensated_sum_is_cpython_312s() {
    let both = |v: &[f64]| {
        (
            sum(v, Summation::Sequential),
            sum(v, Summation::Compensated),
        )
    };
    // sum([1e16, 1.0, -1e16]) is 0.0 up to 3.11 and 1.0 from 3.12 on
    assert_eq!(both(&[1e16, 1.0, -1e16]), (0.0, 1.0));
    // sum([0.1] * 10) is 0.9999999999999999 up to 3.11 and 1.0 from 3.12 on
    assert_eq!(both(&[0.1; 10]), (0.9999999999999999, 1.0));
    // an infinite sum stays infinite (the NaN compensation is dropped); -0.0 keeps its sign
    assert_eq!(
        both(&[1.0, f64::INFINITY, 2.0]),
        (f64::INFINITY, f64::INFINITY)
    );
    assert!(both(&[f64::INFINITY, f64::NEG_INFINITY]).1.is_nan());
    assert_eq!(both(&[]), (0.0, 0.0));
    assert!(sum(&[-0.0], Summation::Compensated).is_sign_positive()); // 0 + -0.0, as Python
}

/// The [`Join`] that runs the second closure on a thread of its own.
fn two_threads(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    std::thread::scope(|s| {
        s.spawn(second);
        first();
    });
}

#[test]
fn lanes_batches_and_streaming_agree_with_the_plain_loop() {
    // Resample counts around the lane width, several batches of groups (with a short last
    // batch), and inputs too long for the lane buffer; on one thread and on two.
    let mut mt = seeded(5);
    let mut value =
        || (mt.next_u32() as f64 / 7.0 - 3e8) * 10f64.powi((mt.next_u32() % 17) as i32 - 8);
    let cases: &[(usize, usize)] = &[
        (1, 3),
        (2, 9),
        (3, 8),
        (17, 16),
        (64, 23),
        (999, 7),
        (64, 5_000),
        (999, 700),
        (BATCH / LANES + 1, 17),
        (MAX_BUFFERED / LANES + 1, 9),
    ];
    for &(n, resamples) in cases {
        let rows: Vec<[f64; 2]> = (0..n)
            .map(|i| [value(), (i % 3 == 0) as u8 as f64])
            .collect();
        let costs: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        let wins: Vec<f64> = rows.iter().map(|r| r[1]).collect();
        for compensated in [false, true] {
            let seed = n as u64 + 11;
            let want_means = reference(&rows, seed, resamples, compensated, false);
            let want_ratios = reference(&rows, seed, resamples, compensated, true);
            for join in [one_thread, two_threads] {
                let s = summation(compensated);
                let means = bootstrap_means(&costs, seeded(seed), resamples, s, join).unwrap();
                assert_eq!(means, want_means, "means n={n} resamples={resamples}");
                let ratios =
                    bootstrap_ratios(&costs, &wins, seeded(seed), resamples, s, join).unwrap();
                assert_eq!(ratios, want_ratios, "ratios n={n} resamples={resamples}");
            }
        }
    }
}

#[test]
fn ratio_without_a_win_is_infinite() {
    let r = bootstrap_ratios(
        &[2.0, 3.0],
        &[0.0, 0.0],
        seeded(1),
        5,
        Summation::Sequential,
        one_thread,
    )
    .unwrap();
    assert!(r.iter().all(|&x| x == f64::INFINITY));
    let r = bootstrap_ratios(
        &[2.0],
        &[1.0],
        seeded(1),
        3,
        Summation::Compensated,
        one_thread,
    )
    .unwrap();
    assert_eq!(r, [2.0, 2.0, 2.0]);
}

#[test]
fn bad_input() {
    let err = |r: Result<Vec<f64>, BootstrapError>| r.unwrap_err().to_string();
    assert!(err(bootstrap_means(
        &[],
        seeded(0),
        5,
        Summation::Sequential,
        one_thread
    ))
    .contains("empty"));
    assert!(err(bootstrap_ratios(
        &[1.0],
        &[],
        seeded(0),
        5,
        Summation::Sequential,
        one_thread
    ))
    .contains("one value per cost"));
    assert!(Mt19937::from_state(&[0; 623], 0)
        .unwrap_err()
        .0
        .contains("624 words"));
    assert!(Mt19937::from_state(&[0; 624], 625)
        .unwrap_err()
        .0
        .contains("pos"));
    assert_eq!(
        bootstrap_means(&[1.0], seeded(0), 0, Summation::Sequential, one_thread).unwrap(),
        Vec::<f64>::new()
    );
    // an all-zero state only ever gives 0: every draw is accepted, nothing hangs
    let zeros = Mt19937::from_state(&[0; 624], 0).unwrap();
    assert_eq!(
        bootstrap_means(
            &[4.0, 8.0, 9.0],
            zeros,
            3,
            Summation::Sequential,
            one_thread
        )
        .unwrap(),
        [4.0; 3]
    );
}

#[test]
#[cfg(target_arch = "x86_64")]
fn wide_acceptance_matches_the_portable_one() {
    if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")) {
        return; // nothing to compare with on this processor
    }
    let mut mt = seeded(99);
    let limits = [
        1u32,
        2,
        3,
        1000,
        5000,
        1 << 20,
        (1 << 31) - 1,
        1 << 31,
        (1 << 31) + 7,
        u32::MAX,
    ];
    for (case, &n) in limits.iter().cycle().take(400).enumerate() {
        let len = [STATE_WORDS, 0, 1, 7, 8, 9, 397, 623][case % 8];
        let words: Vec<u32> = (0..len).map(|_| mt.next_u32()).collect();
        let shift = n.leading_zeros();
        let (mut portable, mut wide) = (vec![0u32; len], vec![0u32; len]);
        let kept = accept_words(&words, n, shift, &mut portable);
        // SAFETY: checked above; the output is as long as the words
        let kept_wide = unsafe { accept_words_avx2(&words, n, shift, &mut wide) };
        assert_eq!(kept, kept_wide, "n={n} len={len}");
        assert_eq!(portable[..kept], wide[..kept], "n={n} len={len}");
    }
}
