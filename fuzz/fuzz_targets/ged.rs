//! Exact graph edit distance of small graphs (at most 4 nodes each) against brute force over every
//! partial injective node map, priced as the model in `scorekit_kernels::ged` defines it; the
//! result is exact within the budget, swapping the graphs (tables transposed) gives the same
//! distance, and malformed problems are errors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::Input;
use scorekit_kernels::ged::{graph_edit_distance, Edge, GedProblem};

const N_CLASS: usize = 2;

fn edges(input: &mut Input<'_>, n: usize, directed: bool) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    for u in 0..n {
        for v in 0..n {
            if (directed || u <= v) && input.byte() % 3 == 0 {
                out.push((u as u32, v as u32, u32::from(input.byte()) % N_CLASS as u32));
            }
        }
    }
    out
}

/// The cost of the edit path `map` (graph-1 node -> graph-2 node or -1).
fn path_cost(p: &GedProblem<'_>, map: &[i64]) -> f64 {
    let mut cost = 0.0;
    let mut used = vec![false; p.n2];
    for (u, &v) in map.iter().enumerate() {
        if v < 0 {
            cost += p.node_del[u];
        } else {
            cost += p.node_sub[u * p.n2 + v as usize];
            used[v as usize] = true;
        }
    }
    cost += (0..p.n2)
        .filter(|&v| !used[v])
        .map(|v| p.node_ins[v])
        .sum::<f64>();
    let same = |(a, b): (u32, u32), (c, d): (u32, u32)| {
        (a, b) == (c, d) || (!p.directed && (a, b) == (d, c))
    };
    let mut matched2 = vec![false; p.edges2.len()];
    for &(s, t, c1) in p.edges1 {
        let (fs, ft) = (map[s as usize], map[t as usize]);
        let image = (fs >= 0 && ft >= 0)
            .then(|| {
                p.edges2
                    .iter()
                    .position(|&(x, y, _)| same((fs as u32, ft as u32), (x, y)))
            })
            .flatten();
        match image {
            Some(k) => {
                let c2 = p.edges2[k].2 as usize;
                matched2[k] = true;
                let del_ins = p.edge_del[c1 as usize] + p.edge_ins[c2];
                cost += p.edge_sub[c1 as usize * p.n_class2 + c2].min(del_ins);
            }
            None => cost += p.edge_del[c1 as usize],
        }
    }
    for (k, &(_, _, c2)) in p.edges2.iter().enumerate() {
        if !matched2[k] {
            cost += p.edge_ins[c2 as usize];
        }
    }
    cost
}

fn brute_force(p: &GedProblem<'_>, map: &mut Vec<i64>, used: &mut Vec<bool>) -> f64 {
    if map.len() == p.n1 {
        return path_cost(p, map);
    }
    map.push(-1);
    let mut best = brute_force(p, map, used);
    map.pop();
    for v in 0..p.n2 {
        if !used[v] {
            used[v] = true;
            map.push(v as i64);
            best = best.min(brute_force(p, map, used));
            map.pop();
            used[v] = false;
        }
    }
    best
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let directed = input.byte() % 2 == 0;
    let (n1, n2) = (input.below(5), input.below(5));
    let edges1 = edges(&mut input, n1, directed);
    let edges2 = edges(&mut input, n2, directed);
    let node_sub: Vec<f64> = (0..n1 * n2).map(|_| input.cost()).collect();
    let node_del: Vec<f64> = (0..n1).map(|_| input.cost()).collect();
    let node_ins: Vec<f64> = (0..n2).map(|_| input.cost()).collect();
    let edge_sub: Vec<f64> = (0..N_CLASS * N_CLASS).map(|_| input.cost()).collect();
    let edge_del: Vec<f64> = (0..N_CLASS).map(|_| input.cost()).collect();
    let edge_ins: Vec<f64> = (0..N_CLASS).map(|_| input.cost()).collect();
    let problem = GedProblem {
        n1,
        n2,
        node_sub: &node_sub,
        node_del: &node_del,
        node_ins: &node_ins,
        edges1: &edges1,
        edges2: &edges2,
        n_class1: N_CLASS,
        n_class2: N_CLASS,
        edge_sub: &edge_sub,
        edge_del: &edge_del,
        edge_ins: &edge_ins,
        directed,
    };
    let result = graph_edit_distance(&problem, 1 << 20).expect("valid problem");
    assert!(result.exact);
    assert_eq!(
        result.distance,
        brute_force(&problem, &mut Vec::new(), &mut vec![false; n2])
    );
    assert_eq!(result.lower_bound, result.distance);
    assert_eq!(
        path_cost(&problem, &result.mapping),
        result.distance,
        "the mapping prices to the distance"
    );

    let node_sub_t: Vec<f64> = (0..n2 * n1)
        .map(|k| node_sub[(k % n1.max(1)) * n2 + k / n1.max(1)])
        .collect();
    let edge_sub_t: Vec<f64> = (0..N_CLASS * N_CLASS)
        .map(|k| edge_sub[(k % N_CLASS) * N_CLASS + k / N_CLASS])
        .collect();
    let swapped = GedProblem {
        n1: n2,
        n2: n1,
        node_sub: &node_sub_t,
        node_del: &node_ins,
        node_ins: &node_del,
        edges1: &edges2,
        edges2: &edges1,
        n_class1: N_CLASS,
        n_class2: N_CLASS,
        edge_sub: &edge_sub_t,
        edge_del: &edge_ins,
        edge_ins: &edge_del,
        directed,
    };
    assert_eq!(
        graph_edit_distance(&swapped, 1 << 20)
            .expect("valid problem")
            .distance,
        result.distance
    );

    // A malformed problem (an edge out of range, a negative or NaN cost) is an error.
    let mut bad_edges = edges1.clone();
    bad_edges.push((n1 as u32, 0, 0));
    assert!(graph_edit_distance(
        &GedProblem {
            edges1: &bad_edges,
            ..problem
        },
        1 << 10
    )
    .is_err());
    if n1 > 0 {
        let mut bad = node_del.clone();
        bad[0] = [f64::NAN, -1.0, f64::INFINITY][input.below(3)];
        assert!(graph_edit_distance(
            &GedProblem {
                node_del: &bad,
                ..problem
            },
            1 << 10
        )
        .is_err());
    }
});
