//! Edit operations: replaying them turns the reference into the hypothesis, and there are exactly
//! as many as the distance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::{levenshtein_dp, Input};
use scorekit_kernels::levenshtein::{editops, AlignWorkspace, EditOpKind};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let reference = input.sequence(300);
    let hypothesis = input.sequence(300);
    let ops = editops(&mut AlignWorkspace::new(), &reference, &hypothesis).unwrap();
    assert_eq!(ops.len(), levenshtein_dp(&reference, &hypothesis));
    let (mut out, mut i) = (Vec::new(), 0usize);
    let mut last = (0usize, 0usize);
    for op in &ops {
        assert!(
            (op.ref_pos, op.hyp_pos) >= last,
            "operations in sequence order"
        );
        last = (op.ref_pos, op.hyp_pos);
        out.extend_from_slice(&reference[i..op.ref_pos]);
        i = op.ref_pos;
        match op.kind {
            EditOpKind::Substitute => {
                assert_ne!(reference[i], hypothesis[op.hyp_pos]);
                out.push(hypothesis[op.hyp_pos]);
                i += 1;
            }
            EditOpKind::Delete => i += 1,
            EditOpKind::Insert => out.push(hypothesis[op.hyp_pos]),
        }
    }
    out.extend_from_slice(&reference[i..]);
    assert_eq!(out, hypothesis);
});
