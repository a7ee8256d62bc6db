//! Shared helpers of the fuzz targets: a byte reader that turns libFuzzer's input into sequences,
//! trees and cost tables, and plain oracles (textbook dynamic programmes) to compare against.

/// Reads structured values from fuzz input; past the end every read gives 0.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from(self.byte()) << 8 | u16::from(self.byte())
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.u16()) % n
    }

    /// A cost in quarters `0.0, 0.25, … 3.75`: sums of such costs are exact in `f64`, so any
    /// evaluation order gives the same total.
    pub fn cost(&mut self) -> f64 {
        f64::from(self.byte() % 16) / 4.0
    }

    /// A code point sequence of at most `max_len` symbols. The first byte picks the alphabet:
    /// a few symbols (many matches), extreme code points, or arbitrary `u32` values (many distinct
    /// symbols, which stresses the pattern tables).
    pub fn sequence(&mut self, max_len: usize) -> Vec<u32> {
        const EXTREME: [u32; 8] = [
            0x61,
            0x62,
            0,
            0x10FFFF,
            0x568,
            0x1F469,
            0xFFFF,
            u32::MAX - 1,
        ];
        let mode = self.byte();
        let len = self.below(max_len + 1);
        (0..len)
            .map(|_| match mode % 3 {
                0 => 0x61 + u32::from(self.byte() % (1 + mode / 3 % 6)),
                1 => EXTREME[usize::from(self.byte() % 8)],
                _ => u32::from(self.u16()) << 5 | u32::from(self.byte() % 32),
            })
            .collect()
    }
}

/// Unit-cost Levenshtein distance, the textbook two-row dynamic programme.
pub fn levenshtein_dp<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let cur = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(prev + usize::from(x != y));
            prev = row[j + 1];
            row[j + 1] = cur;
        }
    }
    row[b.len()]
}

/// A random ordered tree of `n` nodes in post-order layout: `(labels, lld)`, where `lld[k]` is
/// the post-order index of node `k`'s leftmost leaf.
pub fn tree(input: &mut Input<'_>, n: usize, n_labels: u32) -> (Vec<u32>, Vec<u32>) {
    // Node k > 0 hangs under an earlier node; children keep their creation order.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for k in 1..n {
        let parent = input.below(k);
        children[parent].push(k);
    }
    let label_of: Vec<u32> = (0..n).map(|_| u32::from(input.byte()) % n_labels).collect();
    let (mut labels, mut lld) = (Vec::with_capacity(n), Vec::with_capacity(n));
    if n > 0 {
        postorder(0, &children, &label_of, &mut labels, &mut lld);
    }
    (labels, lld)
}

fn postorder(
    root: usize,
    children: &[Vec<usize>],
    label_of: &[u32],
    labels: &mut Vec<u32>,
    lld: &mut Vec<u32>,
) -> u32 {
    // Iterative, so that a deep path does not overflow the stack: (node, next child, leftmost leaf).
    let mut stack: Vec<(usize, usize, Option<u32>)> = vec![(root, 0, None)];
    let mut last = 0;
    while let Some(top) = stack.last_mut() {
        let (node, next, leftmost) = *top;
        if next < children[node].len() {
            top.1 += 1;
            stack.push((children[node][next], 0, None));
            continue;
        }
        stack.pop();
        let index = labels.len() as u32;
        let leftmost = leftmost.unwrap_or(index);
        labels.push(label_of[node]);
        lld.push(leftmost);
        if let Some(parent) = stack.last_mut() {
            parent.2.get_or_insert(leftmost);
        }
        last = index;
    }
    last
}
