//! Rectangular linear sum assignment (rows ≤ columns) by shortest augmenting paths with dual
//! potentials (the Hungarian method in its O(r²·c) form).
//!
//! Owns only the assignment solver used by the GED lower and upper bounds. All buffers live in
//! [`Lsap`] and are reused between calls, so solving allocates nothing.

/// Reusable workspace for assignments of up to `max_rows` rows onto `max_cols` columns.
pub struct Lsap {
    max_cols: usize,
    row_pot: Vec<f64>,
    col_pot: Vec<f64>,
    col_row: Vec<usize>,
    way: Vec<usize>,
    min_slack: Vec<f64>,
    col_done: Vec<bool>,
    /// `row_col[i]` is the column assigned to row `i` after [`Lsap::solve`].
    pub row_col: Vec<usize>,
}

impl Lsap {
    pub fn new(max_rows: usize, max_cols: usize) -> Self {
        Lsap {
            max_cols,
            row_pot: vec![0.0; max_rows + 1],
            col_pot: vec![0.0; max_cols + 1],
            col_row: vec![0; max_cols + 1],
            way: vec![0; max_cols + 1],
            min_slack: vec![0.0; max_cols + 1],
            col_done: vec![false; max_cols + 1],
            row_col: vec![0; max_rows],
        }
    }

    /// Minimum-cost assignment of every row to a distinct column of the row-major `rows × cols`
    /// matrix `cost` (leading dimension `self.max_cols`). Returns the total cost, summed over rows
    /// in row order; the assignment is left in [`Lsap::row_col`].
    pub fn solve(&mut self, cost: &[f64], rows: usize, cols: usize) -> f64 {
        debug_assert!(rows <= cols);
        let ld = self.max_cols;
        // Index 0 is the virtual root column/row of the augmenting-path search (1-based below).
        for j in 0..=cols {
            self.col_pot[j] = 0.0;
            self.col_row[j] = 0;
            self.way[j] = 0;
        }
        for i in 0..=rows {
            self.row_pot[i] = 0.0;
        }
        for i in 1..=rows {
            self.col_row[0] = i;
            let mut j0 = 0usize;
            for j in 0..=cols {
                self.min_slack[j] = f64::INFINITY;
                self.col_done[j] = false;
            }
            loop {
                self.col_done[j0] = true;
                let i0 = self.col_row[j0];
                let mut delta = f64::INFINITY;
                let mut j1 = 0usize;
                let row = &cost[(i0 - 1) * ld..(i0 - 1) * ld + cols];
                for j in 1..=cols {
                    if !self.col_done[j] {
                        let slack = row[j - 1] - self.row_pot[i0] - self.col_pot[j];
                        if slack < self.min_slack[j] {
                            self.min_slack[j] = slack;
                            self.way[j] = j0;
                        }
                        if self.min_slack[j] < delta {
                            delta = self.min_slack[j];
                            j1 = j;
                        }
                    }
                }
                for j in 0..=cols {
                    if self.col_done[j] {
                        self.row_pot[self.col_row[j]] += delta;
                        self.col_pot[j] -= delta;
                    } else {
                        self.min_slack[j] -= delta;
                    }
                }
                j0 = j1;
                if self.col_row[j0] == 0 {
                    break;
                }
            }
            loop {
                let j1 = self.way[j0];
                self.col_row[j0] = self.col_row[j1];
                j0 = j1;
                if j0 == 0 {
                    break;
                }
            }
        }
        for j in 1..=cols {
            let i = self.col_row[j];
            if i > 0 {
                self.row_col[i - 1] = j - 1;
            }
        }
        let mut total = 0.0;
        for i in 0..rows {
            total += cost[i * ld + self.row_col[i]];
        }
        total
    }
}

impl Lsap {
    /// Reduced cost `cost[i][j] - u_i - v_j` under the optimal duals of the last [`Lsap::solve`]
    /// (same `cost` matrix): forcing row `i` onto column `j` costs at least this much more.
    pub fn reduced_cost(&self, cost: &[f64], i: usize, j: usize) -> f64 {
        cost[i * self.max_cols + j] - self.row_pot[i + 1] - self.col_pot[j + 1]
    }
}

#[cfg(test)]
mod tests {
    use super::Lsap;

    /// Brute force over all injective row→column maps (iterative, small sizes only).
    fn brute(cost: &[f64], rows: usize, cols: usize, ld: usize) -> f64 {
        let mut best = f64::INFINITY;
        let mut pick = vec![0usize; rows];
        loop {
            let distinct = (0..rows).all(|a| (0..a).all(|b| pick[a] != pick[b]));
            if distinct {
                let total: f64 = (0..rows).map(|i| cost[i * ld + pick[i]]).sum();
                best = best.min(total);
            }
            let mut k = 0;
            while k < rows {
                pick[k] += 1;
                if pick[k] < cols {
                    break;
                }
                pick[k] = 0;
                k += 1;
            }
            if k == rows {
                return best;
            }
        }
    }

    #[test]
    fn matches_brute_force_on_pseudo_random_matrices() {
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 17) as f64 - 5.0
        };
        let mut lsap = Lsap::new(5, 8);
        for rows in 0..=5 {
            for cols in rows..=7 {
                for _ in 0..20 {
                    let mut cost = vec![0.0; 5 * 8];
                    for i in 0..rows {
                        for j in 0..cols {
                            cost[i * 8 + j] = next();
                        }
                    }
                    let got = lsap.solve(&cost, rows, cols);
                    let want = if rows == 0 {
                        0.0
                    } else {
                        brute(&cost, rows, cols, 8)
                    };
                    assert_eq!(got, want, "rows={rows} cols={cols}");
                    let mut seen = vec![false; cols];
                    for i in 0..rows {
                        assert!(!seen[lsap.row_col[i]]);
                        seen[lsap.row_col[i]] = true;
                        assert_eq!(lsap.reduced_cost(&cost, i, lsap.row_col[i]), 0.0);
                        for j in 0..cols {
                            assert!(
                                lsap.reduced_cost(&cost, i, j) >= 0.0,
                                "duals must be feasible"
                            );
                        }
                    }
                }
            }
        }
    }
}
