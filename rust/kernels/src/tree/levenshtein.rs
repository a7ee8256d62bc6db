//! A small self-contained unit-cost Levenshtein distance for node texts (rename costs of table cells).
//!
//! Texts of table cells are short, so a one-row dynamic program after stripping the common prefix and
//! suffix is enough here. The scratch row is caller-owned so the kernel does not allocate per pair.

/// Unit-cost Levenshtein distance between `a` and `b`; `row` is scratch space.
pub fn levenshtein_distance(a: &[u32], b: &[u32], row: &mut Vec<usize>) -> usize {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if a.is_empty() {
        return b.len();
    }
    if b.is_empty() {
        return a.len();
    }
    row.clear();
    row.extend(0..=b.len());
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            let delete = row[j + 1] + 1;
            let insert = row[j] + 1;
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(delete).min(insert);
        }
    }
    row[b.len()]
}

/// `lev(a, b) / max(|a|, |b|)`, and 0 for two empty texts.
pub fn normalized_levenshtein(a: &[u32], b: &[u32], row: &mut Vec<usize>) -> f64 {
    if a == b {
        return 0.0;
    }
    let longest = a.len().max(b.len());
    levenshtein_distance(a, b, row) as f64 / longest as f64
}
