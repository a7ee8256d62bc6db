//! Unit tests of the GED kernel against an independent brute force over every partial injective
//! node map (feasible up to 5 + 5 nodes), plus budget and validation behaviour.

use super::{graph_edit_distance, Edge, GedProblem};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone)]
struct Owned {
    n1: usize,
    n2: usize,
    node_sub: Vec<f64>,
    node_del: Vec<f64>,
    node_ins: Vec<f64>,
    edges1: Vec<Edge>,
    edges2: Vec<Edge>,
    n_class1: usize,
    n_class2: usize,
    edge_sub: Vec<f64>,
    edge_del: Vec<f64>,
    edge_ins: Vec<f64>,
    directed: bool,
}

impl Owned {
    fn problem(&self) -> GedProblem<'_> {
        GedProblem {
            n1: self.n1,
            n2: self.n2,
            node_sub: &self.node_sub,
            node_del: &self.node_del,
            node_ins: &self.node_ins,
            edges1: &self.edges1,
            edges2: &self.edges2,
            n_class1: self.n_class1,
            n_class2: self.n_class2,
            edge_sub: &self.edge_sub,
            edge_del: &self.edge_del,
            edge_ins: &self.edge_ins,
            directed: self.directed,
        }
    }
}

fn random_edges(
    rng: &mut Rng,
    n: usize,
    classes: usize,
    directed: bool,
    density: u64,
) -> Vec<Edge> {
    let mut edges = Vec::new();
    for s in 0..n {
        let first = if directed { 0 } else { s };
        for d in first..n {
            if rng.below(100) < density {
                edges.push((s as u32, d as u32, rng.below(classes as u64) as u32));
            }
        }
    }
    edges
}

/// Random labelled problem with small integer costs (so sums are exact in floating point).
fn random_problem(rng: &mut Rng, max_n: usize, directed: bool) -> Owned {
    let n1 = rng.below(max_n as u64 + 1) as usize;
    let n2 = rng.below(max_n as u64 + 1) as usize;
    let labels1: Vec<u64> = (0..n1).map(|_| rng.below(3)).collect();
    let labels2: Vec<u64> = (0..n2).map(|_| rng.below(3)).collect();
    let mut node_sub = vec![0.0; n1 * n2];
    for u in 0..n1 {
        for v in 0..n2 {
            node_sub[u * n2 + v] = if labels1[u] == labels2[v] {
                0.0
            } else {
                1.0 + rng.below(3) as f64
            };
        }
    }
    let node_del = (0..n1).map(|_| 1.0 + rng.below(3) as f64).collect();
    let node_ins = (0..n2).map(|_| 1.0 + rng.below(3) as f64).collect();
    let classes = 3;
    let density = 20 + rng.below(50);
    let edges1 = random_edges(rng, n1, classes, directed, density);
    let edges2 = random_edges(rng, n2, classes, directed, density);
    let mut edge_sub = vec![0.0; classes * classes];
    for a in 0..classes {
        for b in 0..classes {
            edge_sub[a * classes + b] = if a == b { 0.0 } else { rng.below(6) as f64 };
        }
    }
    let edge_del = (0..classes).map(|_| 1.0 + rng.below(2) as f64).collect();
    let edge_ins = (0..classes).map(|_| 1.0 + rng.below(2) as f64).collect();
    Owned {
        n1,
        n2,
        node_sub,
        node_del,
        node_ins,
        edges1,
        edges2,
        n_class1: classes,
        n_class2: classes,
        edge_sub,
        edge_del,
        edge_ins,
        directed,
    }
}

/// Cost of the edit path `map` straight from the model's definition.
fn path_cost(o: &Owned, map: &[i64]) -> f64 {
    let mut cost = 0.0;
    let mut image = vec![false; o.n2];
    for u in 0..o.n1 {
        if map[u] >= 0 {
            image[map[u] as usize] = true;
            cost += o.node_sub[u * o.n2 + map[u] as usize];
        } else {
            cost += o.node_del[u];
        }
    }
    for (v, &hit) in image.iter().enumerate() {
        if !hit {
            cost += o.node_ins[v];
        }
    }
    let same = |a: (i64, i64), b: (u32, u32)| {
        let b = (b.0 as i64, b.1 as i64);
        a == b || (!o.directed && (a.1, a.0) == b)
    };
    let mut hit2 = vec![false; o.edges2.len()];
    for &(s, d, c) in &o.edges1 {
        let image_edge = (map[s as usize], map[d as usize]);
        let found = if image_edge.0 >= 0 && image_edge.1 >= 0 {
            o.edges2
                .iter()
                .position(|&(s2, d2, _)| same(image_edge, (s2, d2)))
        } else {
            None
        };
        match found {
            Some(k) => {
                hit2[k] = true;
                let c2 = o.edges2[k].2 as usize;
                let c = c as usize;
                cost += o.edge_sub[c * o.n_class2 + c2].min(o.edge_del[c] + o.edge_ins[c2]);
            }
            None => cost += o.edge_del[c as usize],
        }
    }
    for (k, &(_, _, c)) in o.edges2.iter().enumerate() {
        if !hit2[k] {
            cost += o.edge_ins[c as usize];
        }
    }
    cost
}

/// Minimum over every partial injective map (odometer enumeration, no recursion).
fn brute_force(o: &Owned) -> f64 {
    let mut map = vec![-1i64; o.n1];
    let mut best = f64::INFINITY;
    loop {
        let injective = (0..o.n1).all(|a| map[a] < 0 || (0..a).all(|b| map[b] != map[a]));
        if injective {
            best = best.min(path_cost(o, &map));
        }
        let mut k = 0;
        while k < o.n1 {
            map[k] += 1;
            if map[k] < o.n2 as i64 {
                break;
            }
            map[k] = -1;
            k += 1;
        }
        if k == o.n1 {
            return best;
        }
    }
}

#[test]
fn equals_brute_force_on_random_graphs() {
    let mut rng = Rng(7);
    for directed in [false, true] {
        for _ in 0..400 {
            let o = random_problem(&mut rng, 5, directed);
            let r = graph_edit_distance(&o.problem(), u64::MAX).unwrap();
            let want = brute_force(&o);
            assert!(r.exact);
            assert_eq!(
                r.distance, want,
                "directed={directed} n1={} n2={}",
                o.n1, o.n2
            );
            assert_eq!(r.lower_bound, want);
            assert_eq!(
                path_cost(&o, &r.mapping),
                want,
                "mapping must realise the distance"
            );
        }
    }
}

#[test]
fn small_budget_brackets_the_exact_distance() {
    let mut rng = Rng(99);
    let mut inexact = 0;
    for directed in [false, true] {
        for _ in 0..200 {
            let o = random_problem(&mut rng, 6, directed);
            let exact = graph_edit_distance(&o.problem(), u64::MAX).unwrap();
            for budget in [0u64, 1, 3] {
                let r = graph_edit_distance(&o.problem(), budget).unwrap();
                assert!(r.expanded <= budget);
                assert!(
                    r.lower_bound <= exact.distance,
                    "lb {} > exact {}",
                    r.lower_bound,
                    exact.distance
                );
                assert!(r.distance >= exact.distance);
                assert_eq!(path_cost(&o, &r.mapping), r.distance);
                if r.exact {
                    assert_eq!(r.distance, exact.distance);
                } else {
                    inexact += 1;
                }
            }
        }
    }
    assert!(
        inexact > 0,
        "the budget never ran out: the test exercises nothing"
    );
}

#[test]
fn unit_cost_path_vs_cycle_and_empty() {
    // Unlabelled path on 6 nodes against the 6-cycle (one edge insertion) and the empty graph
    // (6 node + 5 edge deletions), as in networkx's similarity tests.
    let path: Vec<Edge> = (0..5).map(|i| (i, i + 1, 0)).collect();
    let mut cycle = path.clone();
    cycle.push((5, 0, 0));
    let unit = |n1: usize, n2: usize, e1: &[Edge], e2: &[Edge]| {
        let o = Owned {
            n1,
            n2,
            node_sub: vec![0.0; n1 * n2],
            node_del: vec![1.0; n1],
            node_ins: vec![1.0; n2],
            edges1: e1.to_vec(),
            edges2: e2.to_vec(),
            n_class1: 1,
            n_class2: 1,
            edge_sub: vec![0.0],
            edge_del: vec![1.0],
            edge_ins: vec![1.0],
            directed: false,
        };
        graph_edit_distance(&o.problem(), u64::MAX)
            .unwrap()
            .distance
    };
    assert_eq!(unit(6, 6, &path, &cycle), 1.0);
    assert_eq!(unit(6, 0, &path, &[]), 11.0);
    assert_eq!(unit(6, 0, &cycle, &[]), 12.0);
    assert_eq!(unit(0, 0, &[], &[]), 0.0);
}

#[test]
fn rejects_bad_input() {
    let mut o = random_problem(&mut Rng(1), 3, true);
    o.n1 = 2;
    o.n2 = 1;
    o.node_sub = vec![1.0, 1.0];
    o.node_del = vec![1.0, 1.0];
    o.node_ins = vec![1.0];
    o.edges1 = vec![(0, 1, 0)];
    o.edges2 = vec![];
    assert!(graph_edit_distance(&o.problem(), 10).is_ok());
    let bad = |edit: &dyn Fn(&mut Owned), needle: &str| {
        let mut p = o.clone();
        edit(&mut p);
        let err = graph_edit_distance(&p.problem(), 10).unwrap_err();
        assert!(err.0.contains(needle), "{err} should mention {needle}");
    };
    bad(&|p| p.node_del[0] = -1.0, "node_del");
    bad(&|p| p.edge_sub[0] = f64::NAN, "edge_sub");
    bad(&|p| p.edge_ins[0] = f64::INFINITY, "edge_ins");
    bad(&|p| p.node_ins.push(1.0), "node_ins");
    bad(&|p| p.edges1 = vec![(0, 9, 0)], "edges1");
    bad(&|p| p.edges2 = vec![(0, 0, 7)], "class");
    bad(&|p| p.edges1 = vec![(0, 0, 0), (0, 0, 1)], "duplicates");
    bad(
        &|p| {
            p.directed = false;
            p.edges1 = vec![(0, 1, 0), (1, 0, 0)];
        },
        "duplicates",
    );
}
