//! ROVER: the slot network keeps every hypothesis (an engine's column, NULLs removed, is its
//! hypothesis), each winner is NULL or a token of its slot, vote shares lie in [0, 1] and scores
//! are finite for confidences in [0, 1]. Malformed packed input is an error, never a panic. The
//! word reader of plain-text hypotheses splits as Python's `str.split()` does and numbers the
//! words in order of first appearance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::Input;
use scorekit_kernels::levenshtein::is_python_whitespace;
use scorekit_kernels::rover::words::WordIds;
use scorekit_kernels::rover::{rover, NULL};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let n_engines = input.below(6);
    let mut offsets = vec![0i64];
    let mut tokens = Vec::new();
    for _ in 0..n_engines {
        for _ in 0..input.below(12) {
            tokens.push(u32::from(input.byte() % 5));
        }
        offsets.push(tokens.len() as i64);
    }
    let confs: Vec<f64> = tokens.iter().map(|_| input.cost() / 4.0).collect();
    let (conf_weight, null_conf) = (input.cost() / 4.0, input.cost() / 4.0);
    let result =
        rover(&tokens, &confs, &offsets, conf_weight, null_conf, Some(64)).expect("valid input");
    assert_eq!(result.n_engines, n_engines);
    assert_eq!(result.tokens.len(), result.n_slots() * n_engines);
    for e in 0..n_engines {
        let column: Vec<u32> = result
            .tokens
            .chunks_exact(n_engines)
            .map(|row| row[e])
            .filter(|&t| t != NULL)
            .collect();
        assert_eq!(column, tokens[offsets[e] as usize..offsets[e + 1] as usize]);
    }
    for (slot, row) in result.tokens.chunks_exact(n_engines.max(1)).enumerate() {
        let winner = result.winners[slot];
        assert!(winner == NULL || row.contains(&winner));
        assert!((0.0..=1.0).contains(&result.vote_shares[slot]));
        assert!(result.scores[slot].is_finite());
    }

    // Malformed or extreme input: an error or a result, never a panic.
    let bad_offsets: Vec<i64> = (0..input.below(4))
        .map(|_| i64::from(input.byte()) - 2)
        .collect();
    let extreme = [f64::NAN, f64::INFINITY, -f64::INFINITY, 1e308, -1.0, 0.5];
    let bad_confs: Vec<f64> = tokens
        .iter()
        .map(|_| extreme[input.below(extreme.len())])
        .collect();
    let _ = rover(
        &tokens,
        &confs,
        &bad_offsets,
        conf_weight,
        null_conf,
        Some(64),
    );
    let _ = rover(
        &tokens,
        &bad_confs,
        &offsets,
        extreme[input.below(6)],
        extreme[input.below(6)],
        None,
    );

    // Plain-text hypotheses: words between Python whitespace, ids in order of first appearance.
    const CHARS: [char; 8] = [
        'a', 'b', ' ', '\t', '\u{a0}', '\u{2028}', '\u{200b}', '\u{1c}',
    ];
    let mut words = WordIds::new(true);
    let (mut ids, mut expected) = (Vec::new(), Vec::new());
    for _ in 0..input.below(4) {
        let text: String = (0..input.below(16))
            .map(|_| CHARS[input.below(CHARS.len())])
            .collect();
        words.push_text(&text, &mut ids).expect("few words");
        let mut word = String::new();
        for c in text.chars().chain([' ']) {
            if is_python_whitespace(c as u32) {
                if !word.is_empty() {
                    expected.push(std::mem::take(&mut word));
                }
            } else {
                word.push(c);
            }
        }
    }
    let vocabulary = words.into_words().expect("kept");
    let mut next = 0;
    for (&id, word) in ids.iter().zip(&expected) {
        assert_eq!(&*vocabulary[id as usize], word.as_str());
        assert!(id <= next, "ids in order of first appearance");
        next = next.max(id + 1);
    }
    assert_eq!(
        (ids.len(), vocabulary.len()),
        (expected.len(), next as usize)
    );
});
