//! The resident flow-shop search (everything on the GPU): with the optimum as `--ub` it counts
//! exactly the host search's nodes and leaves; from the heuristic start it proves Taillard's
//! best-known values; a search stopped by a node limit resumes from its checkpoint; damaged or
//! mismatched checkpoints are refused; one to four logical devices count one tree and
//! their checkpoints resume on another number of devices, as do the manifest and part files
//! MPI ranks write; a memory budget far
//! below the frontier's size changes neither the tree nor the proof.

mod common;

use simtlab::kernels::flowshop::checkpoint::{write_part, Checkpoint, CheckpointFile, Manifest};
use simtlab::kernels::flowshop::commands::{self, Search, SolveOptions};
use simtlab::kernels::flowshop::resident::{node_stride, solve_resident, Frontier, ResidentOptions};
use simtlab::kernels::flowshop::{
    makespan, solve_with, taillard, BoundData, Branching, CpuBounder, Instance, IteratedGreedy, LowerBound, SearchOptions, Solution, Stop,
};
use simtlab::Gpu;

/// The optima of the instances the counts are compared on (Taillard's table, proven).
const OPTIMA: [(usize, u32); 6] = [(1, 1278), (2, 1359), (3, 1081), (4, 1293), (11, 1582), (14, 1377)];

fn options(bound: LowerBound, branching: Branching, ub: Option<u32>) -> SearchOptions<'static> {
    SearchOptions { bound, branching, upper_bound: ub, pool_size: 4096, ..Default::default() }
}

fn host(instance: &Instance, options: &SearchOptions) -> Solution {
    let data = BoundData::new(instance);
    let mut bounder = CpuBounder::new(&data, options.bound, 0);
    solve_with(&data, &SearchOptions { pool_size: 256, ..options.clone() }, &mut bounder, None).unwrap()
}

fn resident(gpus: &[&Gpu], instance: &Instance, options: &SearchOptions, extra: &ResidentOptions) -> Solution {
    solve_resident(gpus, instance, options, extra, None).unwrap_or_else(|e| panic!("{}: {e}", instance.name))
}

/// A proof of `optimum`: the schedule is a permutation whose makespan, recomputed, is it.
fn check_proved(instance: &Instance, s: &Solution, optimum: u32) {
    assert!(s.optimal && s.stopped.is_none(), "{}: {s:?}", instance.name);
    assert_eq!(s.makespan, Some(optimum), "{}", instance.name);
    let mut jobs = s.permutation.clone();
    jobs.sort_unstable();
    assert_eq!(jobs, (0..instance.jobs).collect::<Vec<_>>(), "{}: a permutation", instance.name);
    assert_eq!(makespan(instance, &s.permutation).unwrap(), optimum, "{}: the schedule's makespan", instance.name);
}

#[test]
fn resident_counts_equal_host_counts_from_the_optimum() {
    let gpu = common::gpu();
    let mut total_nodes = 0;
    for (number, optimum) in OPTIMA {
        let instance = taillard(number).unwrap();
        for bound in [LowerBound::Lb1, LowerBound::Lb2] {
            for branching in [Branching::Forward, Branching::Bidirectional] {
                // forward LB1 trees of millions of nodes (ta001, ta003, ta011, ta014) and
                // ta011's forward LB2 tree take minutes on a CPU driver
                let large = branching == Branching::Forward
                    && match bound {
                        LowerBound::Lb1 => [1, 3, 11, 14].contains(&number),
                        LowerBound::Lb2 => number == 11,
                    };
                if large {
                    continue;
                }
                let options = options(bound, branching, Some(optimum));
                let expected = host(&instance, &options);
                let got = resident(&[&gpu], &instance, &options, &ResidentOptions::default());
                let what = format!("{} {bound:?} {branching:?}", instance.name);
                assert_eq!((got.nodes, got.leaves), (expected.nodes, expected.leaves), "{what}");
                assert_eq!(got.proven_lower_bound, Some(optimum), "{what}: {got:?}");
                assert!(got.makespan.is_none_or(|v| v == optimum), "{what}: {got:?}");
                total_nodes += got.nodes;
            }
        }
    }
    assert!(total_nodes > 1_000_000, "the trees compared hold work: {total_nodes} nodes");
}

#[test]
fn optima_proved_from_the_heuristic_start_equal_the_best_known() {
    let gpu = common::gpu();
    for (number, optimum) in OPTIMA {
        let instance = taillard(number).unwrap();
        assert_eq!(instance.upper_bound, optimum, "Taillard's table");
        // NEH alone leaves the improvement to the search on ta001 (NEH: 1286) and ta011
        let search = SearchOptions {
            heuristic: IteratedGreedy { iterations: Some(0), ..Default::default() },
            ..options(LowerBound::Lb2, Branching::Bidirectional, None)
        };
        let s = resident(&[&gpu], &instance, &search, &ResidentOptions::default());
        check_proved(&instance, &s, optimum);
        if number == 1 {
            assert!(s.start_makespan > optimum && s.leaves > 0, "the search found a better schedule at a leaf: {s:?}");
        }
    }
}

#[test]
fn a_search_stopped_by_the_node_limit_resumes_from_its_checkpoint() {
    let gpu = common::gpu();
    let dir = common::scratch("resident-checkpoint");
    let instance = taillard(11).unwrap();
    let path = dir.join("ta011.checkpoint");
    let saving = ResidentOptions { checkpoint: Some(path.clone()), ..Default::default() };

    // From the optimum: the counts of the two runs add up to the host search's.
    let at_optimum = SearchOptions { node_limit: Some(20_000), ..options(LowerBound::Lb2, Branching::Bidirectional, Some(1582)) };
    let first = resident(&[&gpu], &instance, &at_optimum, &saving);
    assert_eq!(first.stopped, Some(Stop::NodeLimit), "{first:?}");
    assert!(first.nodes >= 20_000 && first.proven_lower_bound.is_none());
    let checkpoint = Checkpoint::read(&path).unwrap();
    assert!(checkpoint.open_nodes() > 0 && checkpoint.nodes_counted == first.nodes, "{} open", checkpoint.open_nodes());
    // the file keeps the run's seconds and GPU seconds, so a resumed run's rates count both parts
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b; // JSON keeps 15-16 digits
    assert!(same(checkpoint.seconds, first.seconds) && same(checkpoint.gpu_seconds, first.bounding_seconds), "{checkpoint:?} {first:?}");
    assert!(checkpoint.gpu_seconds > 0.0 && checkpoint.gpu_seconds <= checkpoint.seconds, "{checkpoint:?}");
    let (before, before_gpu) = (checkpoint.seconds, checkpoint.gpu_seconds);
    let mut heartbeats = Vec::new();
    let resumed = solve_resident(
        &[&gpu],
        &instance,
        &SearchOptions { node_limit: None, progress_interval: std::time::Duration::ZERO, ..at_optimum.clone() },
        &ResidentOptions { resume: Some(checkpoint), ..Default::default() },
        Some(&mut |p: &simtlab::kernels::flowshop::Progress| heartbeats.push((p.nodes, p.seconds, p.gpu_seconds))),
    )
    .unwrap();
    let expected = host(&instance, &SearchOptions { node_limit: None, ..at_optimum.clone() });
    assert_eq!((resumed.nodes, resumed.leaves), (expected.nodes, expected.leaves), "cumulative counts after the resume");
    assert_eq!(resumed.proven_lower_bound, Some(1582));
    assert!(!heartbeats.is_empty());
    for &(nodes, seconds, gpu_seconds) in &heartbeats {
        assert!(nodes >= first.nodes && seconds > before && gpu_seconds > before_gpu && gpu_seconds <= seconds, "{heartbeats:?}");
    }
    assert!(resumed.seconds > before && resumed.bounding_seconds > before_gpu && resumed.bounding_seconds <= resumed.seconds);

    // From NEH alone: stopped, then resumed through the command line's options, it proves the optimum.
    let args = SolveOptions {
        search: Search::Resident,
        heuristic_rounds: Some(0),
        node_limit: Some(5_000),
        pool: 512,
        checkpoint: Some(path.clone()),
        ..SolveOptions::new("ta011")
    };
    let (_, stopped) = commands::solve_instance(&args, Some(&gpu), None, None).unwrap();
    assert_eq!(stopped.stopped, Some(Stop::NodeLimit));
    let resume = SolveOptions { node_limit: None, checkpoint: None, resume: Some(path.clone()), ..args.clone() };
    let (_, proved) = commands::solve_instance(&resume, Some(&gpu), None, None).unwrap();
    check_proved(&instance, &proved, 1582);
    assert!(proved.nodes > stopped.nodes, "the resumed run goes on counting: {} then {}", stopped.nodes, proved.nodes);
}

#[test]
fn damaged_or_mismatched_checkpoints_are_refused() {
    let gpu = common::gpu();
    let dir = common::scratch("resident-damaged");
    let path = dir.join("ta014.checkpoint");
    let args = SolveOptions {
        search: Search::Resident,
        node_limit: Some(2_000),
        pool: 256,
        checkpoint: Some(path.clone()),
        ..SolveOptions::new("ta014")
    };
    let (_, s) = commands::solve_instance(&args, Some(&gpu), None, None).unwrap();
    assert_eq!(s.stopped, Some(Stop::NodeLimit));
    let good = std::fs::read(&path).unwrap();
    let resume = |bytes: &[u8], change: &dyn Fn(&mut SolveOptions)| {
        std::fs::write(dir.join("changed"), bytes).unwrap();
        let mut options = SolveOptions { node_limit: None, checkpoint: None, resume: Some(dir.join("changed")), ..args.clone() };
        change(&mut options);
        commands::solve_instance(&options, Some(&gpu), None, None).map(|(_, s)| s)
    };
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    for (bytes, expected) in [
        (flipped, "hash does not match"),
        (good[..good.len() - 100].to_vec(), "hash does not match"),
        (Vec::new(), "too short"),
        (b"not a checkpoint at all, but long enough".to_vec(), "checkpoint line"),
    ] {
        let err = resume(&bytes, &|_| ()).unwrap_err().to_string();
        assert!(err.contains(expected) && err.contains("invalid resume:") && err.contains("`checkpoint`"), "{expected}: {err}");
    }
    for (change, option) in [
        (&(|o: &mut SolveOptions| o.bound = LowerBound::Lb1) as &dyn Fn(&mut SolveOptions), "`bound=lb2`, this run has `bound=lb1`"),
        (&|o: &mut SolveOptions| o.branching = Branching::Forward, "`branching=forward`"),
        (&|o: &mut SolveOptions| o.instance = "ta015".into(), "the instance"),
        (&|o: &mut SolveOptions| o.ub = Some(1300), "`upper_bound=1300`"),
    ] {
        let err = resume(&good, change).unwrap_err().to_string();
        assert!(err.contains(option) && err.contains("checkpoint was written for"), "{option}: {err}");
    }
    // The intact file resumes and proves the optimum.
    let s = resume(&good, &|_| ()).unwrap();
    check_proved(&taillard(14).unwrap(), &s, 1377);
}

#[test]
fn one_to_four_logical_devices_count_the_same_tree() {
    let gpus = [common::gpu(), common::gpu(), common::gpu(), common::gpu()];
    let instance = taillard(14).unwrap();
    let at_optimum = SearchOptions { pool_size: 256, ..options(LowerBound::Lb2, Branching::Bidirectional, Some(1377)) };
    let expected = host(&instance, &at_optimum);
    for count in 1..=4 {
        let on: Vec<&Gpu> = gpus.iter().take(count).collect();
        let got = resident(&on, &instance, &at_optimum, &ResidentOptions::default());
        assert_eq!((got.nodes, got.leaves), (expected.nodes, expected.leaves), "{count} device(s)");
        assert_eq!(got.proven_lower_bound, Some(1377), "{count} device(s)");
        // the root starts on the first device: every other one worked only on nodes it was
        // given, and every node given was loaded once the search finished
        assert_eq!(got.devices.len(), count);
        let given: u64 = got.devices.iter().map(|d| d.nodes_given).sum();
        let loaded: u64 = got.devices.iter().map(|d| d.nodes_loaded).sum();
        assert_eq!(given, loaded, "{count} device(s): {:?}", got.devices);
        for (i, d) in got.devices.iter().enumerate().skip(1) {
            assert!(d.gifts_loaded > 0 && d.nodes_loaded > 0 && d.batches > 0, "device {i} of {count} did no work: {:?}", got.devices);
        }
        assert!(got.devices.iter().all(|d| d.busy_seconds > 0.0 && d.busy_seconds <= got.seconds), "{:?}", got.devices);
    }
    let from_neh = SearchOptions {
        heuristic: IteratedGreedy { iterations: Some(0), ..Default::default() },
        pool_size: 128,
        ..options(LowerBound::Lb2, Branching::Bidirectional, None)
    };
    let ta001 = taillard(1).unwrap();
    check_proved(&ta001, &resident(&[&gpus[0], &gpus[1], &gpus[2]], &ta001, &from_neh, &ResidentOptions::default()), 1278);
}

/// Checkpoints of a search over three devices, gathered while every device works (as often as
/// the search can), hold the whole frontier: the last one, resumed on two devices, completes
/// the tree of one device.
#[test]
fn checkpoints_of_several_devices_resume_on_another_number_of_them() {
    let gpus = [common::gpu(), common::gpu(), common::gpu()];
    let dir = common::scratch("resident-devices-checkpoint");
    let path = dir.join("ta014.checkpoint");
    let instance = taillard(14).unwrap();
    let at_optimum = SearchOptions { pool_size: 64, ..options(LowerBound::Lb2, Branching::Bidirectional, Some(1377)) };
    let expected = host(&instance, &at_optimum);
    let saving =
        ResidentOptions { checkpoint: Some(path.clone()), checkpoint_every: Some(std::time::Duration::ZERO), ..Default::default() };
    let stopped = resident(
        &[&gpus[0], &gpus[1], &gpus[2]],
        &instance,
        &SearchOptions { node_limit: Some(expected.nodes / 2), ..at_optimum.clone() },
        &saving,
    );
    assert_eq!(stopped.stopped, Some(Stop::NodeLimit), "{stopped:?}");
    let checkpoint = Checkpoint::read(&path).unwrap();
    assert_eq!(checkpoint.nodes_counted, stopped.nodes);
    assert!(checkpoint.open_nodes() > 0);
    let resumed =
        resident(&[&gpus[0], &gpus[1]], &instance, &at_optimum, &ResidentOptions { resume: Some(checkpoint), ..Default::default() });
    assert_eq!((resumed.nodes, resumed.leaves), (expected.nodes, expected.leaves));
    assert_eq!(resumed.proven_lower_bound, Some(1377));
}

/// A checkpoint as MPI ranks write it (a part file per rank and the manifest) reads back as
/// the same state and open nodes, resumes on two devices to the one-device tree, and is
/// replaced whole by the single file a search over devices writes, its parts removed.
#[test]
fn a_manifest_of_part_files_resumes_on_devices_and_a_single_file_replaces_it() {
    let gpus = [common::gpu(), common::gpu()];
    let dir = common::scratch("resident-manifest");
    let instance = taillard(14).unwrap();
    let at_optimum = SearchOptions { pool_size: 64, ..options(LowerBound::Lb2, Branching::Bidirectional, Some(1377)) };
    let expected = host(&instance, &at_optimum);
    let single = dir.join("single");
    let saving = ResidentOptions { checkpoint: Some(single.clone()), ..Default::default() };
    resident(&[&gpus[0]], &instance, &SearchOptions { node_limit: Some(expected.nodes / 3), ..at_optimum.clone() }, &saving);
    let checkpoint = Checkpoint::read(&single).unwrap();
    assert!(checkpoint.open_nodes() > 3, "{} open", checkpoint.open_nodes());

    // three ranks' parts of epoch 4, and the manifest naming them
    let path = dir.join("ta014.checkpoint");
    let open = Frontier { records: checkpoint.nodes.clone(), entries: checkpoint.entries.clone() };
    let stride = node_stride(instance.jobs, instance.machines);
    let parts: Vec<_> =
        open.split(3, stride).iter().enumerate().map(|(rank, part)| write_part(&path, &checkpoint, 4, rank, part).unwrap()).collect();
    assert_eq!(parts.iter().map(|p| p.nodes).sum::<u64>(), checkpoint.open_nodes() as u64);
    let header = Checkpoint { nodes: Vec::new(), entries: Vec::new(), ..checkpoint.clone() };
    let manifest = Manifest { epoch: 4, ranks: 3, parts, header: header.clone() };
    let file = CheckpointFile::claim(&path).unwrap();
    file.write_manifest(&manifest).unwrap();
    assert_eq!(Manifest::read(&path).unwrap(), manifest);
    let merged = Checkpoint::read(&path).unwrap();
    assert_eq!(Checkpoint { nodes: Vec::new(), entries: Vec::new(), ..merged.clone() }, header);
    assert_eq!(merged.open_nodes(), checkpoint.open_nodes());
    drop(file);
    // a search that claims the path numbers its checkpoints above the manifest's
    let file = CheckpointFile::claim(&path).unwrap();
    assert_eq!(file.epoch(), 4);

    let resumed =
        resident(&[&gpus[0], &gpus[1]], &instance, &at_optimum, &ResidentOptions { resume: Some(merged.clone()), ..Default::default() });
    assert_eq!((resumed.nodes, resumed.leaves), (expected.nodes, expected.leaves));
    assert_eq!(resumed.proven_lower_bound, Some(1377));

    // a part of another epoch in its place is refused, naming it
    let paths = manifest.part_paths(&path);
    let other = write_part(&path, &checkpoint, 5, 2, &open.split(3, stride)[2]).unwrap();
    std::fs::copy(dir.join(&other.file), &paths[2]).unwrap();
    let err = Checkpoint::read(&path).unwrap_err().to_string();
    assert!(err.contains("its part `parts[2]`") && err.contains("the manifest gives it"), "{err}");

    // the single file a search over devices writes replaces the manifest, and its parts go
    file.write(&merged).unwrap();
    assert!(paths.iter().all(|p| !p.exists()), "{paths:?}");
    assert_eq!(Checkpoint::read(&path).unwrap().open_nodes(), checkpoint.open_nodes());
}

#[test]
fn sizes_and_options_the_resident_search_cannot_take_are_clear_errors() {
    let gpu = common::gpu();
    let run = |args: SolveOptions| commands::solve_instance(&args, Some(&gpu), None, None).unwrap_err().to_string();
    let resident = |name: &str| SolveOptions { search: Search::Resident, ..SolveOptions::new(name) };
    // 200 jobs: beyond the resident kernels' 128
    let err = run(resident("ta101"));
    assert!(err.contains("jobs for the resident search") && err.contains("`search=host`"), "{err}");
    let err = run(SolveOptions { exploration: simtlab::kernels::flowshop::Exploration::BreadthFirst, ..resident("ta001") });
    assert!(err.contains("depth-first"), "{err}");
    let err = run(SolveOptions { checkpoint: Some("x".into()), ..SolveOptions::new("ta001") });
    assert!(err.contains("invalid checkpoint:") && err.contains("`search=resident`"), "{err}");
    let err = run(SolveOptions { checkpoint_every: Some(5.0), ..resident("ta001") });
    assert!(err.contains("invalid checkpoint_every:") && err.contains("`checkpoint`"), "{err}");
    // the silence limit is for ranks, not devices
    let err = run(SolveOptions { silence: Some(5.0), ..resident("ta001") });
    assert!(err.contains("invalid silence:") && err.contains("MPI ranks"), "{err}");
    let err = run(SolveOptions { silence: Some(0.0), ..resident("ta001") });
    assert!(err.contains("invalid silence: 0 s"), "{err}");
}

#[test]
fn an_interrupt_writes_the_checkpoint_the_search_resumes_from() {
    let gpu = common::gpu();
    let dir = common::scratch("resident-interrupt");
    let path = dir.join("ta002.checkpoint");
    let instance = taillard(2).unwrap();
    let flag = std::sync::atomic::AtomicBool::new(true);
    let search = SearchOptions { interrupted: Some(&flag), ..options(LowerBound::Lb1, Branching::Bidirectional, None) };
    let saving = ResidentOptions { checkpoint: Some(path.clone()), ..Default::default() };
    let stopped = resident(&[&gpu], &instance, &search, &saving);
    assert_eq!((stopped.stopped, stopped.nodes), (Some(Stop::Interrupted), 0), "{stopped:?}");
    let checkpoint = Checkpoint::read(&path).unwrap();
    assert_eq!((checkpoint.open_nodes(), checkpoint.best), (1, stopped.start_makespan), "the root and the start schedule");
    let go_on = SearchOptions { interrupted: None, ..search };
    let proved = resident(&[&gpu], &instance, &go_on, &ResidentOptions { resume: Some(checkpoint), ..Default::default() });
    check_proved(&instance, &proved, 1359);
}

#[test]
fn a_forged_checkpoint_is_refused_or_never_called_optimal() {
    let gpu = common::gpu();
    let dir = common::scratch("resident-forged");
    let path = dir.join("ta011.checkpoint");
    let args = SolveOptions {
        search: Search::Resident,
        node_limit: Some(2_000),
        pool: 256,
        heuristic_rounds: Some(0),
        checkpoint: Some(path.clone()),
        ..SolveOptions::new("ta011")
    };
    let (instance, s) = commands::solve_instance(&args, Some(&gpu), None, None).unwrap();
    assert_eq!(s.stopped, Some(Stop::NodeLimit));
    let good = Checkpoint::read(&path).unwrap();
    assert!(good.open_nodes() > 1 && good.best > 1582, "{} open, best {}", good.open_nodes(), good.best);
    // each forgery is written whole, its hash recomputed: the hash alone cannot tell
    let resume = |forged: Checkpoint| {
        let file = dir.join("forged");
        forged.write(&file).unwrap();
        let options = SolveOptions { node_limit: None, checkpoint: None, resume: Some(file), ..args.clone() };
        commands::solve_instance(&options, Some(&gpu), None, None).map(|(_, s)| s)
    };
    let (n, m) = (instance.jobs, instance.machines);
    let stride = node_stride(n, m);
    type Forgery<'a> = Box<dyn Fn(&mut Checkpoint) + 'a>;
    let forgeries: Vec<(Forgery, &str)> = vec![
        (Box::new(move |c| c.nodes[stride + 3 + n] += 50), "heads are not its prefix's"),
        (Box::new(move |c| c.nodes[3 + n + m] += 1), "tails are not its suffix's"),
        (Box::new(|c| c.nodes[2] = 100_000), "bound is above"),
        (Box::new(|c| c.start_makespan -= 1), "start schedule's makespan"),
        (Box::new(|c| c.best -= 100), "best schedule's makespan"),
        (Box::new(|c| (c.best, c.best_permutation) = (1000, None)), "no schedule"),
    ];
    for (forge, expected) in forgeries {
        let mut forged = good.clone();
        forge(&mut forged);
        let err = resume(forged).unwrap_err().to_string();
        assert!(err.contains(expected) && err.contains("does not hold together"), "{expected}: {err}");
    }
    // An empty frontier claims a finished search: it cannot be recomputed, but the proof it
    // would give (the start schedule optimal) is refuted by Taillard's best known schedule.
    let empty = Checkpoint { nodes: Vec::new(), entries: Vec::new(), ..good.clone() };
    let err = resume(empty).unwrap_err().to_string();
    assert!(err.contains("1582 is known") && err.contains("without resuming"), "{err}");
    // the real one proves the optimum
    check_proved(&instance, &resume(good).unwrap(), 1582);
}

/// A budget of half the stack that pool 4096 grows on a 14-job instance: the frontier does
/// not fit, so rounds take fewer nodes; the tree is the host search's all the same, a search
/// stopped under the budget resumes from a checkpoint the budget bounds, and proves the optimum.
#[test]
fn a_memory_budget_below_the_frontier_still_proves_the_optimum() {
    let gpu = common::gpu();
    let p = simtlab::kernels::flowshop::taillard::generate(14, 6, 777).unwrap();
    let instance = Instance::new("14x6", 14, 6, 777, p, 0, 0).unwrap();
    let proved = host(&instance, &options(LowerBound::Lb2, Branching::Bidirectional, None));
    let optimum = proved.makespan.filter(|_| proved.optimal).unwrap();
    let at_optimum = options(LowerBound::Lb1, Branching::Bidirectional, Some(optimum));
    let expected = host(&instance, &at_optimum);
    let roomy = resident(&[&gpu], &instance, &at_optimum, &ResidentOptions::default());
    assert_eq!((roomy.nodes, roomy.leaves), (expected.nodes, expected.leaves));
    // a third of a budget holds entries of 12 bytes: half the peak
    let peak = roomy.frontier.unwrap().peak_open;
    let budget = 12 * 3 * peak / 2;
    assert!(peak > 200 && expected.nodes > 2_000, "a frontier and a tree of some size: {peak} entries, {} nodes", expected.nodes);

    let dir = common::scratch("resident-budget");
    let path = dir.join("14x6.checkpoint");
    let tight = ResidentOptions { memory_budget: Some(budget), checkpoint: Some(path.clone()), ..Default::default() };
    let stopped = resident(&[&gpu], &instance, &SearchOptions { node_limit: Some(expected.nodes / 2), ..at_optimum.clone() }, &tight);
    assert_eq!(stopped.stopped, Some(Stop::NodeLimit), "{stopped:?}");
    let used = stopped.frontier.unwrap();
    assert!(used.bytes_allocated <= budget && used.peak_open < peak, "{used:?}");
    let checkpoint = Checkpoint::read(&path).unwrap();
    let words = checkpoint.nodes.len() + checkpoint.entries.len();
    assert!(checkpoint.open_nodes() > 1 && 4 * words as u64 <= budget, "{} open nodes in {} bytes", checkpoint.open_nodes(), 4 * words);
    let resumed = resident(
        &[&gpu],
        &instance,
        &at_optimum,
        &ResidentOptions { resume: Some(checkpoint), memory_budget: Some(budget), ..Default::default() },
    );
    assert_eq!((resumed.nodes, resumed.leaves), (expected.nodes, expected.leaves), "the tree under the budget, in two runs");
    assert_eq!(resumed.proven_lower_bound, Some(optimum));
    // from the heuristic start under the budget: the optimum, with its schedule
    let from_start = resident(
        &[&gpu],
        &instance,
        &options(LowerBound::Lb1, Branching::Bidirectional, None),
        &ResidentOptions { memory_budget: Some(budget), ..Default::default() },
    );
    check_proved(&instance, &from_start, optimum);
}

/// Past 32 jobs the unscheduled-only walk of LB2 spans several mask words: on generated
/// instances of 40 and 70 jobs, with the optimum the host search proves as the bound, the
/// resident search counts the host search's nodes and leaves.
#[test]
fn counts_equal_past_one_mask_word() {
    let gpu = common::gpu();
    for (jobs, machines, seed) in [(40, 4, 12_345), (70, 3, 4_242)] {
        let p = simtlab::kernels::flowshop::taillard::generate(jobs, machines, seed).unwrap();
        let instance = Instance::new(format!("{jobs}x{machines}"), jobs, machines, seed, p, 0, 0).unwrap();
        let proved = host(&instance, &options(LowerBound::Lb2, Branching::Bidirectional, None));
        let optimum = proved.makespan.filter(|_| proved.optimal).unwrap_or_else(|| panic!("{}: {proved:?}", instance.name));
        for branching in [Branching::Forward, Branching::Bidirectional] {
            let at_optimum = options(LowerBound::Lb2, branching, Some(optimum));
            let expected = host(&instance, &at_optimum);
            let got = resident(&[&gpu], &instance, &at_optimum, &ResidentOptions::default());
            assert_eq!((got.nodes, got.leaves), (expected.nodes, expected.leaves), "{} {branching:?}", instance.name);
            assert_eq!(got.proven_lower_bound, Some(optimum));
        }
    }
}
