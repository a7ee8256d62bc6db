//! A/B timing of the schwa-forgiving kernels on packed pages (written by a small script as
//! `len, itemsize, bytes` records: gt offsets, gt values, pred offsets, pred values, gt join
//! offsets, gt joins, pred join offsets, pred joins, schwa code points). Not part of the library.
//!
//! `cargo run --release -p scorekit-kernels --example schwa_ab -- PAGES.bin [ROUNDS] [new|old|strict|align]`
//! (`strict`: the plain distance; `align`: the plain S/D/I alignment that `batch.cer` runs).

use std::time::Instant;

use scorekit_kernels::levenshtein::{
    align, distance, schwa_distance, schwa_distance_rows, AlignWorkspace, DistanceWorkspace,
    SchwaWorkspace,
};

fn read_arrays(path: &str) -> Vec<(usize, Vec<u8>)> {
    let bytes = std::fs::read(path).expect("read pages");
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        let size = i64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        at += 16;
        out.push((size, bytes[at..at + len * size].to_vec()));
        at += len * size;
    }
    out
}

fn as_i64(a: &(usize, Vec<u8>)) -> Vec<i64> {
    assert_eq!(a.0, 8);
    a.1.chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn as_u32(a: &(usize, Vec<u8>)) -> Vec<u32> {
    assert_eq!(a.0, 4);
    a.1.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arrays = read_arrays(&args[1]);
    let rounds: usize = args.get(2).map_or(3, |r| r.parse().unwrap());
    let only = args.get(3).cloned();
    let (go, gv, po, pv) = (
        as_i64(&arrays[0]),
        as_u32(&arrays[1]),
        as_i64(&arrays[2]),
        as_u32(&arrays[3]),
    );
    let (gjo, gjv, pjo, pjv) = (
        as_i64(&arrays[4]),
        as_i64(&arrays[5]),
        as_i64(&arrays[6]),
        as_i64(&arrays[7]),
    );
    let schwa = as_u32(&arrays[8]);
    let n = go.len() - 1;
    let item = |v: &[u32], o: &[i64], k: usize| v[o[k] as usize..o[k + 1] as usize].to_vec();
    let joins = |v: &[i64], o: &[i64], k: usize| v[o[k] as usize..o[k + 1] as usize].to_vec();
    let pages: Vec<_> = (0..n)
        .map(|k| {
            (
                item(&gv, &go, k),
                item(&pv, &po, k),
                joins(&gjv, &gjo, k),
                joins(&pjv, &pjo, k),
            )
        })
        .collect();
    let mut ws = SchwaWorkspace::new();
    let mut dws = DistanceWorkspace::new();
    let mut aws = AlignWorkspace::new();
    let mut run =
        |which: &str, ws: &mut SchwaWorkspace, dws: &mut DistanceWorkspace| -> (f64, usize) {
            let t = Instant::now();
            let mut total = 0;
            for (g, p, jg, jp) in &pages {
                total += match which {
                    "new" => schwa_distance(ws, g, p, jg, jp, &schwa).unwrap(),
                    "old" => schwa_distance_rows(ws, g, p, jg, jp, &schwa).unwrap(),
                    "align" => {
                        let c = align(&mut aws, g, p).unwrap();
                        c.substitutions + c.deletions + c.insertions
                    }
                    _ => distance(dws, g, p).unwrap(),
                };
            }
            (t.elapsed().as_secs_f64() * 1e3, total)
        };
    let which: Vec<&str> = match only.as_deref() {
        Some(w) => vec![w],
        None => vec!["old", "new", "strict", "align"],
    };
    for r in 0..rounds {
        for w in &which {
            let (ms, total) = run(w, &mut ws, &mut dws);
            println!("round {r} {w:>6}: {ms:9.1} ms  (sum of distances {total})");
        }
    }
}
