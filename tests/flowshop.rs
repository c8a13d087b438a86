//! Flow-shop B&B on the GPU (Chakroun PPAM'11): GPU bounds equal CPU bounds bit for bit,
//! GPU and CPU searches agree node for node, Taillard instances solved to optimality, CLI.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};
use simtlab::kernels::flowshop::bench::{parent_depths, search_pool};
use simtlab::kernels::flowshop::commands::{self, Device, KernelVariant, NodeBoundOptions, SolveOptions, SolveReport};
use simtlab::kernels::flowshop::gpu::{GpuBoundOptions, GpuBounder, ThreadMapping};
use simtlab::kernels::flowshop::taillard::parse_instances;
use simtlab::kernels::flowshop::{
    cpu, makespan, solve_with, taillard, BoundData, Bounder, Branching, CpuBounder, Direction, Exploration, Instance, IteratedGreedy,
    LowerBound, Node, Pool, Progress, SearchOptions, Solution, Stop, MAX_JOBS,
};
use simtlab::rng::Rng;
use simtlab::Gpu;

const BOUNDS: [LowerBound; 2] = [LowerBound::Lb1, LowerBound::Lb2];

/// A pool of random nodes: random prefixes and suffixes (empty ones included), a random
/// subset of each parent's unscheduled jobs as forward children, another as backward ones.
fn random_pool(data: &BoundData, parents: usize, seed: u64) -> Pool {
    let mut rng = Rng::new(seed);
    let mut pool = Pool::for_data(data);
    for _ in 0..parents {
        let mut order: Vec<usize> = (0..data.jobs).collect();
        rng.shuffle(&mut order);
        let depth = rng.range_u32(0, data.jobs as u32 - 2) as usize;
        let suffix_len = rng.range_u32(0, (data.jobs - depth - 2) as u32) as usize;
        let prefix = &order[..depth];
        let suffix = &order[data.jobs - suffix_len..];
        let unscheduled = &order[depth..data.jobs - suffix_len];
        let node = Node::new(data.jobs, prefix.to_vec(), suffix.to_vec()).unwrap();
        let parent = pool.add_node(&node, data).unwrap();
        for direction in [Direction::Forward, Direction::Backward] {
            for &job in unscheduled {
                if rng.next_f64() < 0.7 {
                    pool.add_child_in(parent, job, direction).unwrap();
                }
            }
        }
    }
    assert!(pool.child_count() > parents, "the pool has children");
    pool
}

fn instances() -> Vec<Instance> {
    let p = simtlab::kernels::flowshop::taillard::generate(9, 3, 4711).unwrap();
    let wide = simtlab::kernels::flowshop::taillard::generate(150, 4, 4712).unwrap();
    vec![
        taillard(1).unwrap(),  // 20x5
        taillard(11).unwrap(), // 20x10
        taillard(21).unwrap(), // 20x20
        taillard(31).unwrap(), // 50x5: two mask words
        Instance::new("r9x3", 9, 3, 4711, p, 0, 0).unwrap(),
        // 150 jobs: five words of unscheduled-jobs mask per parent
        Instance::new("r150x4", 150, 4, 4712, wide, 0, 0).unwrap(),
    ]
}

fn gpu_bounds(gpu: &Gpu, data: &BoundData, options: GpuBoundOptions, pools: &[&Pool]) -> simtlab::Result<Vec<Vec<u32>>> {
    let mut bounder = GpuBounder::new(gpu, data, options)?;
    pools.iter().map(|pool| bounder.bound(pool)).collect()
}

#[test]
fn gpu_bounds_equal_cpu_bounds_on_random_and_search_pools() {
    let gpu = common::gpu();
    for (i, instance) in instances().iter().enumerate() {
        let data = BoundData::new(instance);
        // Small, large, then small again: the bounder's buffers grow once and are reused.
        let small = random_pool(&data, 3, 100 + i as u64);
        let large = random_pool(&data, 40, 200 + i as u64);
        let dfs = search_pool(instance, Exploration::DepthFirst, 300).unwrap();
        let bfs = search_pool(instance, Exploration::BreadthFirst, 300).unwrap();
        let pools = [&small, &large, &dfs, &bfs, &small];
        for bound in BOUNDS {
            let expected: Vec<Vec<u32>> = pools.iter().map(|p| cpu::bound_pool(&data, p, bound, 1)).collect();
            let kernels = [(false, false), (true, false), (false, true)];
            for (branchless, walk_prefix) in kernels {
                for mapping in [ThreadMapping::PerChild, ThreadMapping::PerParent] {
                    let options = GpuBoundOptions { bound, branchless, probe: false, mapping, walk_prefix };
                    match gpu_bounds(&gpu, &data, options, &pools) {
                        Ok(got) => assert_eq!(got, expected, "{} {}", instance.name, options.label()),
                        // llvmpipe cuts loops short past 65535 iterations per invocation: a
                        // per-parent LB2 thread of a 20x20 instance (20 children × (20 + 190
                        // pairs × 20 jobs)) would exceed it, as would per-parent threads of r150x4
                        // (150 children, each walking up to 150 jobs), and the bounder must refuse.
                        Err(simtlab::Error::Limit { requested, limit, .. }) => {
                            assert_eq!(gpu.loop_iteration_limit(), Some(limit), "{}", options.label());
                            assert!(
                                mapping == ThreadMapping::PerParent
                                    && (instance.jobs == 150 || (bound == LowerBound::Lb2 && instance.machines == 20)),
                                "{} {}: {requested} iterations",
                                instance.name,
                                options.label()
                            );
                            assert!(requested > limit);
                        }
                        Err(e) => panic!("{} {}: {e}", instance.name, options.label()),
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_lb2_below_an_incumbent_is_exact_under_it_and_prunes_above_it() {
    let gpu = common::gpu();
    for (i, instance) in instances().iter().enumerate() {
        let data = BoundData::new(instance);
        let pool = random_pool(&data, 40, 400 + i as u64);
        let full = cpu::bound_pool(&data, &pool, LowerBound::Lb2, 1);
        let mut sorted = full.clone();
        sorted.sort_unstable();
        // an incumbent in the middle of the bounds: about half the children are pruned
        let incumbent = sorted[sorted.len() / 2];
        assert!(sorted[0] < incumbent, "{}: the pool needs bounds on both sides", instance.name);
        let options = GpuBoundOptions { bound: LowerBound::Lb2, ..GpuBoundOptions::default() };
        let mut bounder = GpuBounder::new(&gpu, &data, options).unwrap();
        let got = bounder.bound_below(&pool, incumbent).unwrap();
        for (c, (&g, &f)) in got.iter().zip(&full).enumerate() {
            if f < incumbent {
                assert_eq!(g, f, "{} child {c}: below the incumbent the bound is exact", instance.name);
            } else {
                assert!(g >= incumbent && g <= f, "{} child {c}: {g} for a full bound of {f}, incumbent {incumbent}", instance.name);
            }
        }
        // the full bound afterwards: the early exit does not stick
        assert_eq!(bounder.bound(&pool).unwrap(), full, "{}", instance.name);
    }
}

#[test]
fn search_pools_differ_in_depth_mix() {
    let instance = taillard(21).unwrap();
    let dfs = search_pool(&instance, Exploration::DepthFirst, 2000).unwrap();
    let bfs = search_pool(&instance, Exploration::BreadthFirst, 2000).unwrap();
    assert_eq!((dfs.child_count(), bfs.child_count()), (2000, 2000));
    let spread = |p: &Pool| {
        let d = parent_depths(p);
        d.iter().max().unwrap() - d.iter().min().unwrap()
    };
    // Breadth-first pools hold few consecutive levels, depth-first ones many.
    // (the root and its children come first: levels 0, 1, 2 here)
    assert!(spread(&bfs) <= 2, "bfs depths {:?}", parent_depths(&bfs));
    assert!(spread(&dfs) >= 5, "dfs depths {:?}", parent_depths(&dfs));
    assert!(search_pool(&instance, Exploration::DepthFirst, 0).is_err());
}

#[test]
fn large_pools_use_a_two_dimensional_dispatch() {
    let gpu = common::gpu();
    let instance = taillard(1).unwrap();
    let data = BoundData::new(&instance);
    let threads_1d = 64 * gpu.caps().max_compute_workgroups_per_dimension as usize;
    // Copies of a real DFS pool's parents until the pool needs a second row of workgroups.
    let seed = search_pool(&instance, Exploration::DepthFirst, 4000).unwrap();
    let mut pool = Pool::for_data(&data);
    while pool.child_count() <= threads_1d {
        for p in 0..seed.parent_count() {
            let mask = seed.unscheduled_mask(p);
            let unscheduled: Vec<usize> = (0..data.jobs).filter(|&j| mask[j / 32] >> (j % 32) & 1 == 1).collect();
            let index = pool.add_parent(seed.heads(p), seed.tails(p), &unscheduled, &data).unwrap();
            for &j in &unscheduled {
                pool.add_child(index, j).unwrap();
            }
        }
    }
    assert!(gpu.grid(pool.child_count() as u64, 64).unwrap()[1] > 1);
    let options = GpuBoundOptions { bound: LowerBound::Lb1, branchless: true, ..Default::default() };
    let got = GpuBounder::new(&gpu, &data, options).unwrap().bound(&pool).unwrap();
    let expected = CpuBounder::new(&data, LowerBound::Lb1, 0).bound(&pool).unwrap();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "first difference at {:?}", got.iter().zip(&expected).position(|(a, b)| a != b));
}

#[test]
fn probe_counts_the_divergent_membership_test() {
    let Some((gpu, width)) = common::gpu_with_subgroups() else { return };
    let instance = taillard(21).unwrap();
    let data = BoundData::new(&instance);
    let pool = search_pool(&instance, Exploration::DepthFirst, 1000).unwrap();
    let expected = cpu::bound_pool(&data, &pool, LowerBound::Lb2, 1);
    let mut sites = Vec::new();
    for branchless in [false, true] {
        let options = GpuBoundOptions { bound: LowerBound::Lb2, branchless, probe: true, ..Default::default() };
        let mut bounder = GpuBounder::new(&gpu, &data, options).unwrap();
        assert_eq!(bounder.bound(&pool).unwrap(), expected, "{}", options.label());
        let d = bounder.divergence().expect("probe counts").clone();
        assert_eq!(d.width, width);
        // Site 0 (thread in range) is evaluated once per subgroup of the dispatch.
        let threads = pool.child_count().div_ceil(64) * 64;
        assert_eq!(d.sites[0].evaluations as usize, threads / width as usize);
        assert_eq!(d.sites[0].divergent, u64::from(!pool.child_count().is_multiple_of(width as usize)));
        sites.push(d.sites[1]);
    }
    // Basic: children of different parents disagree on which jobs are left.
    assert!(sites[0].evaluations > 0 && sites[0].divergent > 0, "{:?}", sites[0]);
    assert!(sites[0].taken_lanes > 0);
    // Refactored: no branch left to evaluate.
    assert_eq!(sites[1].evaluations, 0);
}

#[test]
fn prefix_walk_diverges_less_on_breadth_first_pools() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let instance = taillard(21).unwrap();
    let data = BoundData::new(&instance);
    let options = GpuBoundOptions { bound: LowerBound::Lb2, probe: true, walk_prefix: true, ..Default::default() };
    let mut bounder = GpuBounder::new(&gpu, &data, options).unwrap();
    let mut walks = Vec::new();
    for exploration in [Exploration::DepthFirst, Exploration::BreadthFirst] {
        let pool = search_pool(&instance, exploration, 2000).unwrap();
        assert_eq!(bounder.bound(&pool).unwrap(), cpu::bound_pool(&data, &pool, LowerBound::Lb2, 1), "{exploration:?}");
        // Site 3: the loop over the parent's prefix, one step per level of depth.
        walks.push(bounder.divergence().expect("probe counts").sites[3]);
    }
    let (dfs, bfs) = (walks[0], walks[1]);
    let share = |s: simtlab::divergence::SiteCounters| s.divergent as f64 / s.evaluations as f64;
    assert!(dfs.evaluations > 0 && bfs.evaluations > 0, "{dfs:?} {bfs:?}");
    eprintln!("prefix walk, divergent share of loop tests: dfs {:.3}, bfs {:.3}", share(dfs), share(bfs));
    // Depth-first pools mix tree levels in a subgroup: more of its loop tests disagree.
    assert!(share(dfs) > 2.0 * share(bfs), "dfs {dfs:?}, bfs {bfs:?}");
}

#[test]
fn bad_inputs_are_errors() {
    let gpu = common::gpu();
    let p = simtlab::kernels::flowshop::taillard::generate(4, 33, 5).unwrap();
    let wide = Instance::new("wide", 4, 33, 5, p, 0, 0).unwrap();
    let err = GpuBounder::new(&gpu, &BoundData::new(&wide), GpuBoundOptions::default()).expect_err("33 machines");
    assert!(err.to_string().contains("machines") && err.to_string().contains("`device=cpu`"), "{err}");

    let data = BoundData::new(&taillard(1).unwrap());
    let other = BoundData::new(&taillard(11).unwrap());
    let mut bounder = GpuBounder::new(&gpu, &data, GpuBoundOptions::default()).unwrap();
    let err = bounder.bound(&random_pool(&other, 2, 1)).unwrap_err();
    assert!(err.to_string().contains("instance"), "{err}");

    // Children not grouped by parent cannot run one thread per parent.
    let mut pool = Pool::for_data(&data);
    let a = pool.add_parent(&[0; 5], &data.min_tails, &[1, 2, 3], &data).unwrap();
    let b = pool.add_parent(&[0; 5], &data.min_tails, &[1, 2, 3], &data).unwrap();
    for (parent, job) in [(a, 1), (b, 2), (a, 3)] {
        pool.add_child(parent, job).unwrap();
    }
    let options = GpuBoundOptions { mapping: ThreadMapping::PerParent, ..Default::default() };
    let err = GpuBounder::new(&gpu, &data, options).unwrap().bound(&pool).unwrap_err();
    assert!(err.to_string().contains("grouped by parent"), "{err}");
    // The per-child kernel takes it.
    let got = GpuBounder::new(&gpu, &data, GpuBoundOptions::default()).unwrap().bound(&pool).unwrap();
    assert_eq!(got, cpu::bound_pool(&data, &pool, LowerBound::Lb2, 1));
    // Parents added by their heads alone have no prefix to walk.
    let options = GpuBoundOptions { walk_prefix: true, ..Default::default() };
    let err = GpuBounder::new(&gpu, &data, options).unwrap().bound(&pool).unwrap_err();
    assert!(err.to_string().contains("add_node"), "{err}");
}

#[test]
fn gpu_and_cpu_searches_count_the_same_nodes_from_the_optimum() {
    let gpu = common::gpu();
    let p = simtlab::kernels::flowshop::taillard::generate(10, 4, 99).unwrap();
    let small = Instance::new("r10x4", 10, 4, 99, p, 0, 0).unwrap();
    use Branching::{Bidirectional, Forward};
    for (instance, bound, optimum, mapping, branching) in [
        // (ta001's root LB2 already equals its optimum: no search there.)
        (taillard(4).unwrap(), LowerBound::Lb2, 1293, ThreadMapping::PerChild, Forward),
        (taillard(4).unwrap(), LowerBound::Lb2, 1293, ThreadMapping::PerChild, Bidirectional),
        (taillard(19).unwrap(), LowerBound::Lb2, 1593, ThreadMapping::PerParent, Bidirectional),
        (small.clone(), LowerBound::Lb1, 0, ThreadMapping::PerParent, Bidirectional),
        (small, LowerBound::Lb2, 0, ThreadMapping::PerChild, Forward),
    ] {
        let data = BoundData::new(&instance);
        let mut cpu_bounder = CpuBounder::new(&data, bound, 2);
        let optimum = if optimum == 0 {
            solve_with(&data, &SearchOptions { bound, ..Default::default() }, &mut cpu_bounder, None).unwrap().makespan.unwrap()
        } else {
            optimum
        };
        let options = |exploration, pool_size| SearchOptions {
            bound,
            exploration,
            branching,
            pool_size,
            upper_bound: Some(optimum),
            ..Default::default()
        };
        let cpu = solve_with(&data, &options(Exploration::DepthFirst, 64), &mut cpu_bounder, None).unwrap();
        let gpu_options = GpuBoundOptions { bound, mapping, ..Default::default() };
        let mut gpu_bounder = GpuBounder::new(&gpu, &data, gpu_options).unwrap();
        let gpu_dfs = solve_with(&data, &options(Exploration::DepthFirst, 512), &mut gpu_bounder, None).unwrap();
        let gpu_bfs = solve_with(&data, &options(Exploration::BreadthFirst, 256), &mut gpu_bounder, None).unwrap();
        for s in [&cpu, &gpu_dfs, &gpu_bfs] {
            // From the optimum as --ub: proven, with the start schedule if it was optimal.
            assert_eq!(s.proven_lower_bound, Some(optimum), "{}: {s:?}", instance.name);
            assert!(s.makespan.is_none_or(|v| v == optimum), "{}: {s:?}", instance.name);
            assert!(s.nodes > 0, "{} {bound:?}: the search has work", instance.name);
        }
        assert_eq!((gpu_dfs.nodes, gpu_dfs.leaves), (cpu.nodes, cpu.leaves), "{} {bound:?} {branching:?} dfs", instance.name);
        assert_eq!((gpu_bfs.nodes, gpu_bfs.leaves), (cpu.nodes, cpu.leaves), "{} {bound:?} {branching:?} bfs", instance.name);
        let (pools, bounded, _) = gpu_bounder.totals();
        assert!(pools > 0 && bounded >= gpu_dfs.nodes);
    }
}

/// Solves on the GPU from NEH and checks the makespan against Taillard's best known upper
/// bound (proven optimal for these instances) and against the returned permutation.
fn solve_on_gpu(gpu: &Gpu, name: &str, pool: usize, branching: Branching) -> simtlab::kernels::flowshop::Solution {
    let instance = taillard(name[2..].parse().unwrap()).unwrap();
    let args = SolveOptions { pool, branching, ..SolveOptions::new(name) };
    let (solved, solution) = commands::solve_instance(&args, Some(gpu), None, None).unwrap();
    assert_eq!(solved, instance);
    assert!(solution.optimal, "{name}: {solution:?}");
    assert_eq!(solution.makespan, Some(instance.upper_bound), "{name}: Taillard's upper bound");
    let mut sorted = solution.permutation.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..instance.jobs).collect::<Vec<_>>(), "{name}: a permutation");
    assert_eq!(Some(makespan(&instance, &solution.permutation).unwrap()), solution.makespan);
    eprintln!("{name}: {} nodes, {} leaves, {:.2} s", solution.nodes, solution.leaves, solution.seconds);
    solution
}

#[test]
fn gpu_search_solves_ta001_and_a_20x10_instance() {
    let gpu = common::gpu();
    assert_eq!(solve_on_gpu(&gpu, "ta001", 256, Branching::Forward).makespan, Some(1278));
    let forward = solve_on_gpu(&gpu, TA_20X10, 256, Branching::Forward);
    let bidirectional = solve_on_gpu(&gpu, TA_20X10, 256, Branching::Bidirectional);
    assert!(bidirectional.nodes < forward.nodes, "{} vs {} nodes", bidirectional.nodes, forward.nodes);
    solve_on_gpu(&gpu, "ta011", 1024, Branching::Bidirectional);
}

/// A 20x10 instance whose proof takes seconds with LB2.
const TA_20X10: &str = "ta019";

#[test]
fn cli_functions_report_instances_bounds_and_solutions() {
    let json = serde_json::to_value(commands::load_instance("ta001").unwrap()).unwrap();
    assert_eq!(json["name"], "ta001");
    assert_eq!((json["jobs"].as_u64(), json["machines"].as_u64(), json["seed"].as_u64()), (Some(20), Some(5), Some(873654221)));
    let p: Vec<u64> = json["p"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(p.len(), 100);
    assert_eq!(&p[..20], &[54, 83, 15, 71, 77, 36, 53, 38, 27, 87, 76, 91, 14, 29, 12, 77, 32, 87, 68, 94]);
    let text = simtlab::kernels::flowshop::taillard::format_instance(&commands::load_instance("ta001").unwrap());
    assert!(text.contains("873654221"), "{text}");

    let bound = |prefix: Vec<usize>, suffix: Vec<usize>| -> serde_json::Value {
        serde_json::to_value(commands::bound(&NodeBoundOptions { instance: "ta001".into(), prefix, suffix }).unwrap()).unwrap()
    };
    let root = bound(vec![], vec![]);
    assert_eq!(root["lb1"], 1232);
    assert!(root["lb2"].as_u64().unwrap() >= 1232 && root["lb2"].as_u64().unwrap() <= 1278);
    let node = bound(vec![2, 0], vec![5]);
    assert!(node["lb1"].as_u64().unwrap() <= node["lb2"].as_u64().unwrap() || node["lb1"].as_u64() > Some(0));
    assert!(commands::bound(&NodeBoundOptions { instance: "ta001".into(), prefix: vec![0, 0], suffix: vec![] }).is_err());
    assert!(commands::load_instance("ta121").is_err());
    assert!(commands::load_instance("/nonexistent/file.txt").is_err());

    let gpu = common::gpu();
    let args = SolveOptions { ub: Some(1278), ..SolveOptions::new("ta001") };
    let json = solve_json(&args, Some(&gpu), None);
    for field in ["makespan", "permutation", "nodes", "leaves", "optimal", "seconds", "branching"] {
        assert!(json.get(field).is_some(), "solve JSON lacks {field}: {json}");
    }
    assert_eq!((json["makespan"].as_u64(), json["optimal"].as_bool()), (Some(1278), Some(true)));
    let cpu = SolveOptions { device: Device::Cpu, ..args.clone() };
    let cpu_json = solve_json(&cpu, None, None);
    assert_eq!((&cpu_json["nodes"], &cpu_json["leaves"]), (&json["nodes"], &json["leaves"]));
    assert!(commands::solve(&SolveOptions { pool: 0, ..args.clone() }, Some(&gpu), None).is_err());
    assert!(commands::solve(&args, None, None).is_err(), "--device gpu without a GPU");

    // --heuristic-rounds 0 starts from NEH (ta001: 1286), the default improves on it.
    let start = |rounds: Option<u32>| -> u64 {
        let args = SolveOptions { heuristic_rounds: rounds, node_limit: Some(1), ..cpu.clone() };
        solve_json(&args, None, None)["start_makespan"].as_u64().unwrap()
    };
    assert_eq!(start(Some(0)), 1286);
    assert!(start(None) < 1286);
}

/// `flowshop solve` through its library entry, as the JSON it prints.
fn solve_json(args: &SolveOptions, gpu: Option<&Gpu>, interrupted: Option<&AtomicBool>) -> Value {
    serde_json::to_value(commands::solve(args, gpu, interrupted).unwrap()).unwrap()
}

fn jobs_of(value: &Value) -> Vec<usize> {
    value.as_array().unwrap().iter().map(|j| j.as_u64().unwrap() as usize).collect()
}

/// A reported makespan comes with a complete schedule that has it; the start schedule too.
fn check_reported_schedules(instance: &Instance, json: &Value) {
    let start = jobs_of(&json["start_permutation"]);
    assert_eq!(Some(u64::from(makespan(instance, &start).unwrap())), json["start_makespan"].as_u64(), "{json}");
    match json["makespan"].as_u64() {
        Some(value) => assert_eq!(u64::from(makespan(instance, &jobs_of(&json["permutation"])).unwrap()), value, "{json}"),
        None => assert_eq!(json["permutation"], json!([]), "{json}"),
    }
}

#[test]
fn an_upper_bound_the_search_never_beats_proves_only_a_lower_bound() {
    // Optima: ta001 1278, ta011 1582. NEH (--heuristic-rounds 0) gives more than these bounds.
    for (name, ub) in [("ta011", 1581), ("ta001", 0), ("ta001", 1), ("ta001", 1277), ("ta001", 1278)] {
        let instance = taillard(name[2..].parse().unwrap()).unwrap();
        let args = SolveOptions { ub: Some(ub), heuristic_rounds: Some(0), device: Device::Cpu, ..SolveOptions::new(name) };
        let json = solve_json(&args, None, None);
        assert_eq!(
            (&json["makespan"], &json["optimal"], &json["proven_lower_bound"], &json["stopped"]),
            (&Value::Null, &json!(false), &json!(ub), &Value::Null),
            "{name} --ub {ub}: {json}"
        );
        assert!(json["start_makespan"].as_u64().unwrap() > u64::from(ub));
        check_reported_schedules(&instance, &json);
    }

    let ta001 = taillard(1).unwrap();
    let neh_cpu = SolveOptions { heuristic_rounds: Some(0), device: Device::Cpu, ..SolveOptions::new("ta001") };
    // Between the optimum and NEH's 1286, or above NEH: the search finds and proves 1278.
    for ub in [1280, 2000] {
        let json = solve_json(&SolveOptions { ub: Some(ub), ..neh_cpu.clone() }, None, None);
        assert_eq!(
            (&json["makespan"], &json["optimal"], &json["proven_lower_bound"]),
            (&json!(1278), &json!(true), &json!(1278)),
            "{json}"
        );
        check_reported_schedules(&ta001, &json);
    }
    // The start schedule meets the bound: it is the incumbent, proven optimal.
    let json = solve_json(&SolveOptions { ub: Some(1278), heuristic_rounds: None, ..neh_cpu.clone() }, None, None);
    assert_eq!((&json["makespan"], &json["optimal"], &json["start_makespan"]), (&json!(1278), &json!(true), &json!(1278)), "{json}");
    // Stopped before anything within the bound was found: nothing proven either.
    let stopped = SolveOptions { ub: Some(1280), time_limit: Some(0.0), ..neh_cpu.clone() };
    let json = solve_json(&stopped, None, None);
    assert_eq!(
        (&json["makespan"], &json["optimal"], &json["proven_lower_bound"], &json["stopped"]),
        (&Value::Null, &json!(false), &Value::Null, &json!("time limit")),
        "{json}"
    );
    check_reported_schedules(&ta001, &json);

    // The GPU search reports the same.
    let gpu = common::gpu();
    let json = solve_json(&SolveOptions { ub: Some(1277), device: Device::Gpu, ..neh_cpu }, Some(&gpu), None);
    assert_eq!((&json["makespan"], &json["optimal"], &json["proven_lower_bound"]), (&Value::Null, &json!(false), &json!(1277)), "{json}");
    check_reported_schedules(&ta001, &json);
}

fn check_interrupted(instance: &Instance, s: &Solution) {
    assert_eq!((s.optimal, s.stopped, s.proven_lower_bound), (false, Some(Stop::Interrupted), None), "{s:?}");
    assert_eq!(s.permutation.len(), instance.jobs, "a complete schedule");
    assert_eq!(Some(makespan(instance, &s.permutation).unwrap()), s.makespan);
    assert!(s.makespan.unwrap() <= s.start_makespan);
}

#[test]
fn an_interrupt_stops_the_search_with_the_best_schedule_so_far() {
    let instance = taillard(21).unwrap(); // 20x20: far from proven within a few thousand nodes
    let data = BoundData::new(&instance);
    let gpu = common::gpu();
    fn options(flag: &AtomicBool) -> SearchOptions<'_> {
        SearchOptions {
            bound: LowerBound::Lb1,
            heuristic: IteratedGreedy { iterations: Some(0), ..IteratedGreedy::default() },
            pool_size: 64,
            progress_interval: Duration::ZERO,
            interrupted: Some(flag),
            ..Default::default()
        }
    }

    // Set before the search: the start schedule, nothing explored.
    let flag = AtomicBool::new(true);
    let before = solve_with(&data, &options(&flag), &mut CpuBounder::new(&data, LowerBound::Lb1, 1), None).unwrap();
    check_interrupted(&instance, &before);
    assert_eq!((before.nodes, before.makespan), (0, Some(before.start_makespan)));

    // Set while it runs (from the progress callback), bounding on the CPU and on the GPU.
    let gpu_options = GpuBoundOptions { bound: LowerBound::Lb1, ..Default::default() };
    let mut bounders: Vec<Box<dyn Bounder>> =
        vec![Box::new(CpuBounder::new(&data, LowerBound::Lb1, 2)), Box::new(GpuBounder::new(&gpu, &data, gpu_options).unwrap())];
    for bounder in &mut bounders {
        let flag = AtomicBool::new(false);
        let mut interrupt_later = |p: &Progress| {
            if p.nodes >= 3000 {
                flag.store(true, Ordering::Relaxed);
            }
        };
        let during = solve_with(&data, &options(&flag), bounder.as_mut(), Some(&mut interrupt_later)).unwrap();
        check_interrupted(&instance, &during);
        assert!(during.nodes >= 3000 && during.nodes < 100_000, "{during:?}");
    }

    // Through the command's entry point: what was found so far, as JSON.
    let args = SolveOptions { device: Device::Cpu, heuristic_rounds: Some(0), ..SolveOptions::new("ta021") };
    let json = solve_json(&args, None, Some(&AtomicBool::new(true)));
    assert_eq!(
        (&json["optimal"], &json["stopped"], &json["proven_lower_bound"]),
        (&json!(false), &json!("interrupted"), &Value::Null),
        "{json}"
    );
    assert_eq!(jobs_of(&json["permutation"]).len(), 20);
    check_reported_schedules(&instance, &json);
}

fn run_solve(args: SolveOptions) -> simtlab::Result<SolveReport> {
    commands::solve(&args, None, Some(&AtomicBool::new(false)))
}

#[test]
fn options_the_device_would_ignore_are_rejected() {
    let gpu = SolveOptions::new("ta001");
    let cpu = SolveOptions { device: Device::Cpu, node_limit: Some(1), ..gpu.clone() };
    for (args, option) in [
        (SolveOptions { threads: Some(2), ..gpu.clone() }, "invalid threads:"),
        (SolveOptions { threads: Some(0), ..gpu.clone() }, "invalid threads:"),
        (SolveOptions { kernel: Some(KernelVariant::Basic), ..cpu.clone() }, "invalid kernel:"),
        (SolveOptions { mapping: Some(ThreadMapping::PerParent), ..cpu.clone() }, "invalid mapping:"),
    ] {
        let err = run_solve(args.clone()).unwrap_err().to_string();
        assert!(err.contains(option) && err.contains("applies only to `device="), "{args:?}: {err}");
    }
    // validated before anything is opened or loaded
    assert!(SolveOptions { threads: Some(2), ..gpu.clone() }.validate().is_err() && cpu.validate().is_ok());
    // an adapter chosen for a search on the CPU
    let adapter = simtlab::gpu::GpuOptions { adapter: Some("llvmpipe".into()), ..Default::default() };
    let err = commands::solve_opening(&cpu, &adapter, &mut |_, _| panic!("no adapter is opened"), None, None).unwrap_err().to_string();
    assert!(err.contains("invalid adapter:") && err.contains("applies only to `device=gpu`"), "{err}");
    // Where they apply they are taken.
    assert!(run_solve(SolveOptions { threads: Some(2), ..cpu.clone() }).is_ok());
    let args = SolveOptions { kernel: Some(KernelVariant::Basic), mapping: Some(ThreadMapping::PerParent), ub: Some(1278), ..gpu };
    assert_eq!(solve_json(&args, Some(&common::gpu()), None)["makespan"], 1278);
    // Time limits Duration cannot hold are errors, not panics.
    for limit in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
        let err = run_solve(SolveOptions { time_limit: Some(limit), ..cpu.clone() }).unwrap_err().to_string();
        assert!(err.contains("invalid time_limit:"), "{limit}: {err}");
    }
}

#[test]
fn messages_say_what_to_do_in_command_line_terms() {
    let dir = std::env::temp_dir().join(format!("simtlab-flowshop-messages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A file instance with no best known value (header UB 0).
    let single = dir.join("r4x2.txt");
    std::fs::write(&single, "4 2 7 0 0\n3 1 4 1\n5 9 2 6\n").unwrap();
    let args = SolveOptions { device: Device::Cpu, ..SolveOptions::new(single.to_str().unwrap()) };
    // (the text of the same solves: src/bin/simtlab/flowshop.rs)
    let json = solve_json(&args, None, None);
    assert_eq!((&json["best_known"], &json["optimal"]), (&Value::Null, &json!(true)));
    let ta001 = solve_json(&SolveOptions { device: Device::Cpu, ..SolveOptions::new("ta001") }, None, None);
    assert_eq!(ta001["best_known"], 1278);

    let double = dir.join("two.txt");
    std::fs::write(&double, "4 2 7 0 0\n3 1 4 1\n5 9 2 6\n4 2 7 0 0\n3 1 4 1\n5 9 2 6\n").unwrap();
    let err = commands::load_instance(double.to_str().unwrap()).unwrap_err().to_string();
    assert!(err.contains("holds 2 instances") && err.contains("file of its own") && !err.contains("read_instances"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Tokens of an instance file: mostly valid processing times, sometimes what users get wrong.
fn file_token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (1u32..100).prop_map(|v| v.to_string()),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec![
            "0", "-1", "-0", "+3", "256", "257", "4096", "4097", "1073741824", "4294967295", "4294967296",
            "99999999999999999999999", "x", "1.5", "1e3", ":", "processing",
        ])
        .prop_map(String::from),
    ]
}

/// A Taillard file of `copies` instances of `jobs × machines` with some fields replaced,
/// rows or columns added or missing, and label lines or not. The bool: left intact.
fn near_valid_file() -> impl Strategy<Value = (String, bool)> {
    (
        1usize..7,
        1usize..5,
        -1i32..=1,
        -1i32..=1,
        any::<bool>(),
        1usize..3,
        prop::collection::vec(prop::option::weighted(0.2, file_token()), 5),
    )
        .prop_flat_map(|(jobs, machines, row_change, column_change, labels, copies, header_changes)| {
            let rows = (machines as i32 + row_change) as usize;
            let columns = (jobs as i32 + column_change).max(0) as usize;
            let cell = prop_oneof![19 => (1u32..100).prop_map(|v| v.to_string()), 1 => file_token()];
            (
                Just((jobs, machines, labels, copies, header_changes, row_change == 0 && column_change == 0)),
                prop::collection::vec(prop::collection::vec(cell, columns), rows),
            )
        })
        .prop_map(|((jobs, machines, labels, copies, header_changes, shape_intact), rows)| {
            let mut header: Vec<String> = [jobs, machines, 12345, 0, 0].iter().map(|v| v.to_string()).collect();
            for (field, change) in header.iter_mut().zip(&header_changes) {
                if let Some(token) = change {
                    *field = token.clone();
                }
            }
            let cells_intact = rows.iter().flatten().all(|c| c.parse::<u32>().is_ok_and(|v| (1..100).contains(&v)));
            let intact = shape_intact && cells_intact && header_changes.iter().all(Option::is_none);
            let mut text = String::new();
            for _ in 0..copies {
                if labels {
                    text += "number of jobs, number of machines, initial seed, upper bound and lower bound :\n";
                }
                text += &format!("{}\n", header.join(" "));
                if labels {
                    text += "processing times :\n";
                }
                for row in &rows {
                    text += &format!("{}\n", row.join(" "));
                }
            }
            (text, intact)
        })
}

/// A `--prefix`/`--suffix` value: comma lists of job numbers, in range or not, repeated,
/// negative, huge, or not numbers.
fn job_list() -> impl Strategy<Value = String> {
    let job = prop_oneof![
        8 => (0usize..24).prop_map(|j| j.to_string()),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => prop::sample::select(vec!["", " 3", "+3", "-0", "18446744073709551615", "18446744073709551616", "x", "1.0"])
            .prop_map(String::from),
    ];
    prop::collection::vec(job, 0..8).prop_map(|jobs| jobs.join(","))
}

/// A `--prefix`/`--suffix` value read as the command line reads it: a comma list of job
/// numbers, None when one is not a number (the command line refuses it).
fn parse_jobs(list: &str) -> Option<Vec<usize>> {
    list.split(',').map(|job| job.parse().ok()).collect()
}

/// Runs `flowshop bound` on `--prefix=prefix --suffix=suffix`; never panics, and succeeds
/// exactly when the parsed jobs are distinct jobs of the instance.
fn check_bound_options(instance: &str, prefix: &str, suffix: &str) {
    let (Some(prefix), Some(suffix)) = (parse_jobs(prefix), parse_jobs(suffix)) else { return };
    let bound = NodeBoundOptions { instance: instance.into(), prefix, suffix };
    let jobs = taillard(instance[2..].parse().unwrap()).unwrap().jobs;
    let mut fixed: Vec<usize> = bound.prefix.iter().chain(&bound.suffix).copied().collect();
    let in_range = fixed.iter().all(|&j| j < jobs);
    fixed.sort_unstable();
    fixed.dedup();
    let valid = in_range && fixed.len() == bound.prefix.len() + bound.suffix.len();
    let (prefix, suffix) = (&bound.prefix, &bound.suffix);
    match commands::bound(&bound) {
        Ok(out) => {
            assert!(valid, "{prefix:?} {suffix:?} accepted");
            let json = serde_json::to_value(out).unwrap();
            assert_eq!(&jobs_of(&json["prefix"]), prefix);
            assert_eq!(&jobs_of(&json["suffix"]), suffix);
            assert_eq!(json["unscheduled"].as_u64(), Some((jobs - fixed.len()) as u64));
        }
        Err(e) => {
            assert!(!valid, "{prefix:?} {suffix:?} rejected: {e}");
            assert!(e.to_string().contains("job"), "{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_instance_parser_takes_any_text_without_panicking(text in "\\PC*", bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_instances(&text, "fuzz");
        let _ = parse_instances(&String::from_utf8_lossy(&bytes), "fuzz");
    }

    #[test]
    fn the_instance_parser_takes_number_soup_without_panicking(text in "([0-9]{1,12}|-|[ \n]|:|x){0,80}") {
        if let Ok(instances) = parse_instances(&text, "fuzz") {
            for i in instances {
                prop_assert_eq!(i.p.len(), i.jobs * i.machines);
                prop_assert!((1..=MAX_JOBS).contains(&i.jobs));
            }
        }
    }

    #[test]
    fn near_valid_instance_files_are_read_or_rejected_with_a_line((text, intact) in near_valid_file()) {
        match parse_instances(&text, "near") {
            Ok(instances) => {
                for instance in &instances {
                    prop_assert_eq!(instance.p.len(), instance.jobs * instance.machines);
                    // Small enough to bound and solve: the rest of the command works on it.
                    let data = BoundData::new(instance);
                    let root = Node::root(instance.jobs);
                    let solution = simtlab::kernels::flowshop::solve(instance, &SearchOptions { threads: 1, ..Default::default() }).unwrap();
                    prop_assert!(solution.optimal);
                    prop_assert_eq!(Some(makespan(instance, &solution.permutation).unwrap()), solution.makespan);
                    prop_assert!(cpu::lb1_node(&data, &root) <= solution.makespan.unwrap());
                    prop_assert!(cpu::lb2_node(&data, &root) <= solution.makespan.unwrap());
                }
            }
            Err(message) => {
                prop_assert!(!intact, "an intact file was rejected: {message}\n{text}");
                prop_assert!(message.contains("line") || message.contains("no instance"), "{message}");
            }
        }
    }

    #[test]
    fn taillard_names_are_generated_or_rejected(name in "[tT][aA][0-9]{0,24}") {
        let number = name[2..].parse::<u128>().ok();
        let result = commands::load_instance(&name);
        prop_assert_eq!(result.is_ok(), number.is_some_and(|n| (1..=120).contains(&n)), "{}", name);
    }

    #[test]
    fn node_options_are_bounded_or_rejected(prefix in job_list(), suffix in job_list(), instance in prop::sample::select(vec!["ta001", "ta011"])) {
        check_bound_options(instance, &prefix, &suffix);
    }

    #[test]
    fn node_options_take_any_text_without_panicking(prefix in "\\PC*", suffix in "[0-9,\\-]*") {
        check_bound_options("ta001", &prefix, &suffix);
    }
}
