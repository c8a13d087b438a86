//! Unit tests of the model, the pool layout, the bound data and the search.

use std::time::Duration;

use super::search::{leaf_makespan, prefer_second};
use super::*;
use crate::error::Result;

/// Processing times of a small random instance (not Taillard's), times 1..=99.
fn random_instance(jobs: usize, machines: usize, seed: u32) -> Instance {
    let p = taillard::generate(jobs, machines, seed).unwrap();
    Instance::new(format!("r{jobs}x{machines}"), jobs, machines, seed, p, 0, 0).unwrap()
}

#[test]
fn instance_and_node_validation() {
    assert!(Instance::new("x", 2, 2, 1, vec![1; 3], 0, 0).is_err());
    assert!(Instance::new("x", 0, 2, 1, vec![], 0, 0).is_err());
    assert!(Instance::new("x", 1, 1, 1, vec![u32::MAX], 0, 0).is_err());
    assert!(Node::new(3, vec![0, 0], vec![]).is_err());
    assert!(Node::new(3, vec![0], vec![3]).is_err());
    let node = Node::new(4, vec![2], vec![0]).unwrap();
    assert_eq!(node.unscheduled, vec![1, 3]);
}

#[test]
fn johnson_orders_solve_two_machine_problems() {
    // Pair (0, 1) of a 2-machine instance: Johnson's order is optimal, so the root LB2
    // equals the optimal makespan found by enumeration.
    let instance = random_instance(6, 2, 4242);
    let data = BoundData::new(&instance);
    let best = cpu::tests::brute_force(&instance, &[], &[]);
    assert_eq!(cpu::lb2_node(&data, &Node::root(6)), best);
    let order: Vec<usize> = data.johnson.iter().map(|&j| j as usize).collect();
    assert_eq!(makespan(&instance, &order).unwrap(), best);
}

#[test]
fn pool_layout_and_validation() {
    let instance = random_instance(40, 3, 77);
    let data = BoundData::new(&instance);
    let mut pool = Pool::for_data(&data);
    assert_eq!((pool.mask_words(), pool.parent_stride()), (2, 11));
    let parent = pool.add_parent(&[1, 2, 3], &data.min_tails, &[0, 33, 39], &data).unwrap();
    pool.add_child(parent, 33).unwrap();
    assert!(pool.add_child(parent, 1).is_err());
    assert!(pool.add_child(1, 0).is_err());
    assert!(pool.add_parent(&[1, 2], &data.min_tails, &[0], &data).is_err());
    assert!(pool.add_parent(&[0; 3], &data.min_tails, &[40], &data).is_err());
    assert_eq!(pool.unscheduled_mask(0), &[1, (1 << 1) | (1 << 7)]);
    let expected: Vec<u32> = (0..3).map(|k| [0, 33, 39].iter().map(|&j| instance.time(k, j)).sum()).collect();
    assert_eq!(pool.remaining(0), expected.as_slice());
    let params = data.kernel_params(&pool).to_words();
    assert_eq!(params, [40, 3, 3, 1, 11, 2, 1, 0]);

    // Parents from nodes keep their prefix (for the prefix-walking kernels).
    assert_eq!(pool.prefix(0), None);
    let node = Node::new(40, vec![5, 2, 17], vec![9]).unwrap();
    let from_node = pool.add_node(&node, &data).unwrap() as usize;
    assert_eq!(pool.prefix(from_node), Some(&[5, 2, 17][..]));
    assert_eq!(pool.heads(from_node), cpu::heads(&data, &node.prefix).as_slice());
    assert_eq!(pool.tails(from_node), cpu::tails(&data, &node.suffix).as_slice());
    assert_eq!(pool.prefixes().len(), 2 * 41);
    assert!(pool.add_node(&Node { prefix: vec![1, 1], ..node }, &data).is_err());
}

#[test]
fn neh_is_no_better_than_the_lower_bounds() {
    for number in [1, 11, 21, 31] {
        let instance = taillard(number).unwrap();
        let data = BoundData::new(&instance);
        let (value, order) = neh(&instance);
        assert_eq!(makespan(&instance, &order).unwrap(), value);
        assert!(value >= instance.upper_bound, "ta{number:03}: NEH {value} below the best known");
        assert!(value >= cpu::lb2_node(&data, &Node::root(instance.jobs)));
    }
    // Published NEH value for ta001 (tie rules differ between papers; 1286 is the usual one).
    assert_eq!(neh(&taillard(1).unwrap()).0, 1286);
}

fn check_solution(instance: &Instance, solution: &Solution, optimum: u32) {
    assert!(solution.optimal);
    assert_eq!((solution.makespan, solution.proven_lower_bound, solution.stopped), (Some(optimum), Some(optimum), None));
    assert_eq!(makespan(instance, &solution.permutation).unwrap(), optimum);
}

#[test]
fn small_instances_match_brute_force() {
    for (seed, bound, exploration, branching) in [
        (11, LowerBound::Lb1, Exploration::DepthFirst, Branching::Forward),
        (12, LowerBound::Lb2, Exploration::BreadthFirst, Branching::Forward),
        (13, LowerBound::Lb2, Exploration::DepthFirst, Branching::Forward),
        (14, LowerBound::Lb1, Exploration::DepthFirst, Branching::Bidirectional),
        (15, LowerBound::Lb2, Exploration::BreadthFirst, Branching::Bidirectional),
        (16, LowerBound::Lb2, Exploration::DepthFirst, Branching::Bidirectional),
    ] {
        let instance = random_instance(7, 4, seed);
        let optimum = cpu::tests::brute_force(&instance, &[], &[]);
        let options = SearchOptions { bound, exploration, branching, pool_size: 3, threads: 2, ..Default::default() };
        let solution = solve(&instance, &options).unwrap();
        check_solution(&instance, &solution, optimum);
    }
}

#[test]
fn solves_ta001_to_optimality() {
    let instance = taillard(1).unwrap();
    let options = SearchOptions { bound: LowerBound::Lb2, pool_size: 64, ..Default::default() };
    let solution = solve(&instance, &options).unwrap();
    check_solution(&instance, &solution, 1278);
    eprintln!("ta001 LB2 DFS from iterated greedy: {} nodes, {} leaves, {:.3} s", solution.nodes, solution.leaves, solution.seconds);
    assert!(solution.heuristic_seconds <= solution.seconds);

    // Iterated greedy finds the optimum here and LB2 prunes every child of the root; from
    // NEH alone the search has to find it.
    let neh_only = SearchOptions { heuristic: IteratedGreedy { iterations: Some(0), ..IteratedGreedy::default() }, ..options };
    let from_neh = solve(&instance, &neh_only).unwrap();
    check_solution(&instance, &from_neh, 1278);
    assert_eq!(from_neh.start_makespan, 1286);
    assert_eq!(solution.start_makespan, 1278);
    assert_eq!(solution.nodes, 0);
    assert!(from_neh.nodes > 0);
}

#[test]
fn node_counts_do_not_depend_on_exploration_order() {
    for (instance, bound) in [(taillard(4).unwrap(), LowerBound::Lb2), (random_instance(11, 4, 7), LowerBound::Lb1)] {
        let optimum = solve(&instance, &SearchOptions::default()).unwrap().makespan.unwrap();
        let mut trees = Vec::new();
        for branching in [Branching::Forward, Branching::Bidirectional] {
            let mut counts = Vec::new();
            for (exploration, pool_size, overlap) in [
                (Exploration::DepthFirst, 1, true),
                (Exploration::DepthFirst, 100, true),
                (Exploration::DepthFirst, 100, false),
                (Exploration::BreadthFirst, 37, true),
            ] {
                let options =
                    SearchOptions { bound, exploration, branching, overlap, pool_size, upper_bound: Some(optimum), ..Default::default() };
                let solution = solve(&instance, &options).unwrap();
                // From the optimum as upper bound: proven, and the schedule (if the start
                // heuristic had it) is optimal.
                assert_eq!(solution.proven_lower_bound, Some(optimum));
                assert!(solution.makespan.is_none_or(|v| v == optimum), "{solution:?}");
                counts.push((solution.nodes, solution.leaves));
            }
            assert!(counts.windows(2).all(|w| w[0] == w[1]), "{} {branching:?}: {counts:?}", instance.name);
            trees.push(counts[0].0);
        }
        // Branching where fewer children survive gives a smaller tree (r11x4's root
        // bound is already optimal: no nodes either way).
        assert!(trees[1] < trees[0] || trees == [0, 0], "{}: nodes forward/bidirectional {trees:?}", instance.name);
    }
}

#[test]
fn dynamic_branching_prefers_fewer_survivors_then_larger_bounds() {
    assert!(prefer_second(&[5, 6, 9], &[5, 12, 12], 10));
    assert!(!prefer_second(&[5, 12, 12], &[5, 6, 9], 10));
    // same survivors: the larger sum of bounds (clamped at the incumbent) wins
    assert!(prefer_second(&[5, 6, 11], &[7, 6, 10], 10));
    assert!(!prefer_second(&[5, 6, 99], &[5, 6, 10], 10), "clamped: a tie keeps the first");
}

#[test]
fn leaves_and_children_ends_follow_the_definitions() {
    let instance = random_instance(6, 4, 21);
    let data = BoundData::new(&instance);
    let (prefix, job, suffix) = (vec![3, 1], 4, vec![0, 5, 2]);
    let mut ends = cpu::heads(&data, &prefix);
    ends.extend(cpu::tails(&data, &suffix));
    let mut order = prefix.clone();
    order.push(job);
    order.extend(&suffix);
    assert_eq!(leaf_makespan(&data, &ends, job), makespan(&instance, &order).unwrap());
    // an empty prefix or suffix: the bounds' min heads / min tails extend exactly
    let mut root_heads = data.min_heads.clone();
    cpu::extend_heads(&data, &mut root_heads, job);
    assert_eq!(root_heads, cpu::heads(&data, &[job]));
    let mut root_tails = data.min_tails.clone();
    cpu::extend_tails(&data, &mut root_tails, job);
    assert_eq!(root_tails, cpu::tails(&data, &[job]));
    let mut tails = cpu::tails(&data, &suffix);
    cpu::extend_tails(&data, &mut tails, job);
    assert_eq!(tails, cpu::tails(&data, &[job, 0, 5, 2]));
}

#[test]
fn limits_stop_the_search() {
    let instance = taillard(21).unwrap();
    let options = SearchOptions { node_limit: Some(500), bound: LowerBound::Lb1, ..Default::default() };
    let solution = solve(&instance, &options).unwrap();
    assert!(!solution.optimal);
    assert_eq!((solution.stopped, solution.proven_lower_bound), (Some(Stop::NodeLimit), None));
    assert!(solution.nodes >= 500);
    assert_eq!(Some(makespan(&instance, &solution.permutation).unwrap()), solution.makespan);

    let options = SearchOptions { time_limit: Some(Duration::ZERO), ..Default::default() };
    let solution = solve(&instance, &options).unwrap();
    assert!(!solution.optimal && solution.nodes == 0);
    assert_eq!(solution.stopped, Some(Stop::TimeLimit));

    // A bound below the optimum: the search finishes without any schedule, which proves
    // only that none is better than the bound. The start schedule is still reported.
    let small = random_instance(6, 3, 5);
    let optimum = cpu::tests::brute_force(&small, &[], &[]);
    for ub in [0, 1, optimum - 1] {
        let options = SearchOptions { upper_bound: Some(ub), ..Default::default() };
        let solution = solve(&small, &options).unwrap();
        assert_eq!((solution.makespan, solution.optimal), (None, false), "upper_bound {ub}");
        assert_eq!((solution.proven_lower_bound, solution.stopped), (Some(ub), None), "upper_bound {ub}");
        assert!(solution.permutation.is_empty());
        assert_eq!(makespan(&small, &solution.start_permutation).unwrap(), solution.start_makespan);
    }
    // A bound the start schedule already meets: its schedule is the incumbent.
    let options = SearchOptions { upper_bound: Some(optimum), ..Default::default() };
    check_solution(&small, &solve(&small, &options).unwrap(), optimum);
    for pool_size in [0, MAX_POOL + 1, usize::MAX] {
        let err = solve(&small, &SearchOptions { pool_size, ..Default::default() }).unwrap_err();
        assert!(err.to_string().contains("pool size"), "{err}");
    }
}

#[test]
fn shaders_validate_with_naga() {
    use crate::gpu::shader;
    for bound in [LowerBound::Lb1, LowerBound::Lb2] {
        let path = format!("flowshop/{}.wgsl", bound.entry_point());
        // only LB2 has the resident search's unscheduled-only walk and learned pair order
        let masks = bound == LowerBound::Lb2;
        let mut declared = vec!["BRANCHLESS", "PROBE", "WALK_PREFIX"];
        declared.extend(masks.then_some(["POSITION_MASKS", "PAIR_ORDER"]).into_iter().flatten());
        assert_eq!(shader::declared_variants(bound.wgsl()), declared);
        let mut variants = Vec::new();
        let mut cases = vec![&[][..], &["BRANCHLESS"][..], &["WALK_PREFIX"][..]];
        if masks {
            cases.extend([&["POSITION_MASKS"][..], &["WALK_PREFIX", "POSITION_MASKS"][..], &["POSITION_MASKS", "PAIR_ORDER"][..]]);
        }
        for defines in cases {
            let source = shader::preprocess(&path, defines).unwrap();
            let (module, info) = shader::validate(&source).unwrap_or_else(|e| panic!("{path} {defines:?}: {e}"));
            for mapping in [gpu::ThreadMapping::PerChild, gpu::ThreadMapping::PerParent] {
                let name = mapping.entry_point(bound).name;
                let index = module.entry_points.iter().position(|e| e.name == name).expect("entry point");
                assert_eq!(module.entry_points[index].workgroup_size, [WORKGROUP_SIZE, 1, 1]);
                let uses = info.get_entry_point(index);
                let storage = module
                    .global_variables
                    .iter()
                    .filter(|(h, v)| !uses[*h].is_empty() && matches!(v.space, naga::AddressSpace::Storage { .. }))
                    .count() as u32;
                // offsets (per parent), prefixes (prefix walk), places (unscheduled-only walk);
                // the pair order rides in the pairs' binding
                let extra = (mapping == gpu::ThreadMapping::PerParent) as u32
                    + defines.contains(&"WALK_PREFIX") as u32
                    + defines.contains(&"POSITION_MASKS") as u32;
                assert_eq!(storage, bound.storage_buffers() + extra, "{name}");
            }
            variants.push(source.text);
        }
        assert_ne!(variants[0], variants[1], "{bound:?}: BRANCHLESS changes nothing");
        assert_ne!(variants[0], variants[2], "{bound:?}: WALK_PREFIX changes nothing");
        if masks {
            assert_ne!(variants[0], variants[3], "{bound:?}: POSITION_MASKS changes nothing");
            assert_ne!(variants[3], variants[5], "{bound:?}: PAIR_ORDER changes nothing");
        }
    }
}

struct WrongLength;
impl Bounder for WrongLength {
    fn bound(&mut self, _pool: &Pool) -> Result<Vec<u32>> {
        Ok(vec![0])
    }
}

#[test]
fn progress_and_bounder_errors() {
    let instance = taillard(11).unwrap();
    let data = BoundData::new(&instance);
    let mut reports = Vec::new();
    let mut record = |p: &Progress| reports.push(*p);
    let options = SearchOptions { progress_interval: Duration::ZERO, node_limit: Some(2000), bound: LowerBound::Lb1, ..Default::default() };
    let mut bounder = CpuBounder::new(&data, LowerBound::Lb1, 1);
    let solution = solve_with(&data, &options, &mut bounder, Some(&mut record)).unwrap();
    assert!(!reports.is_empty());
    assert!(reports.iter().all(|r| r.best.is_some()), "no upper_bound: the start schedule counts");
    assert!(reports.windows(2).all(|w| w[0].nodes <= w[1].nodes && w[0].best >= w[1].best));
    assert!(reports.last().unwrap().nodes <= solution.nodes);
    let json = serde_json::to_string(&solution).unwrap();
    assert!(json.contains("\"optimal\":false"));

    let err = solve_with(&data, &options, &mut WrongLength, None).unwrap_err();
    assert!(err.to_string().contains("bounds for"), "{err}");
}

#[test]
fn reported_lower_bound_rises_from_the_root_to_at_most_the_optimum_without_changing_the_search() {
    let instance = random_instance(9, 5, 31);
    let data = BoundData::new(&instance);
    let optimum = cpu::tests::brute_force(&instance, &[], &[]);
    let root = cpu::lb1_node(&data, &Node::root(9));
    assert!(root < optimum, "a root bound below the optimum leaves the search work: {root} vs {optimum}");
    let options = SearchOptions {
        bound: LowerBound::Lb1,
        exploration: Exploration::BreadthFirst,
        pool_size: 4,
        progress_interval: Duration::ZERO,
        heuristic: IteratedGreedy { iterations: Some(0), ..IteratedGreedy::default() },
        ..Default::default()
    };
    let mut reports = Vec::new();
    let mut record = |p: &Progress| reports.push(*p);
    let watched = solve_with(&data, &options, &mut CpuBounder::new(&data, LowerBound::Lb1, 1), Some(&mut record)).unwrap();
    let unwatched = solve_with(&data, &options, &mut CpuBounder::new(&data, LowerBound::Lb1, 1), None).unwrap();
    check_solution(&instance, &watched, optimum);
    assert_eq!((watched.nodes, watched.leaves, &watched.permutation), (unwatched.nodes, unwatched.leaves, &unwatched.permutation));
    let bounds: Vec<u32> = reports.iter().map(|p| p.lower_bound).collect();
    assert!(bounds.len() > 2 && bounds.iter().all(|&b| (root..=optimum).contains(&b)), "root {root}, optimum {optimum}: {bounds:?}");
    assert!(bounds.windows(2).all(|w| w[0] <= w[1]), "{bounds:?}");
    assert!(reports.iter().all(|p| p.best.is_some_and(|best| p.lower_bound <= best)));
    // breadth-first, the frontier's smallest bound climbs level by level
    assert!(bounds.last() > bounds.first(), "{bounds:?}");
}
