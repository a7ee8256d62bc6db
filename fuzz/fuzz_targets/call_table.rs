//! The call table of the trajectory metrics (`align::table`): a call added is found again by its
//! key and only by it, a row stores its key and its mass, the arguments sorted by name rank make
//! a valid `CallTable`, and the pair distances are the Needleman–Wunsch distances over that table
//! (0 for a trajectory against itself).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorekit_fuzz::Input;
use scorekit_kernels::align::{
    call_mass, distance, CallCost, CallScratch, CallTableBuilder, Scratch,
};
use scorekit_kernels::bootstrap::Summation;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let n_names = 1 + input.below(4);
    let mut builder = CallTableBuilder::default();
    let mut keys: Vec<Vec<u32>> = Vec::new();
    let mut sides: [(Vec<u32>, Vec<i64>); 2] = [(Vec::new(), vec![0]), (Vec::new(), vec![0])];
    let n_pairs = input.below(8);
    for _ in 0..n_pairs {
        for (ids, offsets) in sides.iter_mut() {
            for _ in 0..input.below(7) {
                // distinct names in any order, as a dict's items come
                let mut key = vec![u32::from(input.byte() % 3)];
                let mut names: Vec<u32> = (0..n_names as u32).collect();
                for _ in 0..input.below(n_names + 1) {
                    let name = names.swap_remove(input.below(names.len()));
                    key.extend([name, u32::from(input.byte() % 3)]);
                }
                let row = match builder.find(&key) {
                    Ok(row) => {
                        assert_eq!(keys[row as usize], key);
                        row
                    }
                    Err(new) => {
                        assert!(!keys.contains(&key), "a memoised key is found");
                        let weights: Vec<f64> = (0..key.len() / 2).map(|_| input.cost()).collect();
                        let tool_weight = input.cost();
                        let row = builder.add(
                            &key,
                            tool_weight,
                            Some(&weights),
                            Summation::Sequential,
                            Some(new),
                        );
                        let mass = call_mass(tool_weight, &weights, Summation::Sequential);
                        assert_eq!(builder.rows().mass[row as usize], mass);
                        keys.push(key);
                        row
                    }
                };
                ids.push(row);
            }
            offsets.push(ids.len() as i64);
        }
    }
    let rows = builder.rows();
    assert_eq!(rows.len(), keys.len());
    // a rank per name: any permutation
    let mut rank: Vec<u32> = (0..n_names as u32).collect();
    for k in (1..rank.len()).rev() {
        rank.swap(k, input.below(k + 1));
    }
    let sorted = rows.sorted_arguments(&rank);
    let table = rows.table(&sorted);
    table
        .validate()
        .expect("sorted arguments make a valid table");
    let [(a, a_offsets), (b, b_offsets)] = &sides;
    let distances = rows.pair_distances(
        &sorted,
        (a, a_offsets),
        (b, b_offsets),
        &mut CallScratch::default(),
    );
    assert_eq!(distances.len(), n_pairs);
    for (k, &d) in distances.iter().enumerate() {
        let x = &a[a_offsets[k] as usize..a_offsets[k + 1] as usize];
        let y = &b[b_offsets[k] as usize..b_offsets[k + 1] as usize];
        assert_eq!(
            d,
            distance(&CallCost::new(table, x, y), &mut Scratch::default())
        );
        let own = rows.pair_distances(
            &sorted,
            (x, &[0, x.len() as i64]),
            (x, &[0, x.len() as i64]),
            &mut CallScratch::default(),
        );
        assert_eq!(own, [0.0]);
    }
});
