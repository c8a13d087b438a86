//! The resident flow-shop search over MPI ranks (feature `mpi`; Open MPI's `mpirun` on the
//! PATH): with the optimum as `--ub`, 2 and 3 ranks count the one-device tree; each rank writes
//! its own part of a checkpoint beside the manifest rank 0 writes; a rank killed mid-run ends
//! the run with an error, a rank stopped mid-run ends it with an error naming it, and either
//! way the last manifest resumes on the same or another number of ranks, or on one process,
//! to the same proof; bad rank counts, mismatched checkpoints and missing or damaged parts
//! are refused.
#![cfg(feature = "mpi")]

mod common;

use common::cli::{assert_refused, simtlab, text};
use simtlab::kernels::flowshop::checkpoint::{Checkpoint, Manifest};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const TREE: [&str; 9] = ["flowshop", "solve", "ta014", "--search", "resident", "--ub", "1377", "--pool", "64"];

/// `mpirun -np RANKS simtlab ARGS`, more ranks than cores allowed, as root too.
fn mpirun(ranks: usize, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &ranks.to_string(), env!("CARGO_BIN_EXE_simtlab")])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("WGPU_ADAPTER_NAME")
        .env_remove("WGPU_BACKEND");
    c
}

/// (nodes, leaves, makespan, optimal) of a `--json` result.
fn counts(out: &Output) -> (u64, u64, u64, bool) {
    assert!(out.status.success(), "failed: {}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    let s = &json;
    (s["nodes"].as_u64().unwrap(), s["leaves"].as_u64().unwrap(), s["makespan"].as_u64().unwrap(), s["optimal"].as_bool().unwrap())
}

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    TREE.iter().chain(extra).copied().collect()
}

fn one_device() -> (u64, u64, u64, bool) {
    counts(&simtlab().args(with(&["--json"])).output().unwrap())
}

#[test]
fn two_three_and_four_ranks_count_the_one_device_tree() {
    let expected = one_device();
    assert_eq!((expected.2, expected.3), (1377, true));
    for ranks in [2, 3, 4] {
        let out = mpirun(ranks, &with(&["--json"])).output().unwrap();
        assert_eq!(counts(&out), expected, "{ranks} ranks");
        // every rank says how it spent the search: each ran batches, and every open node given
        // was received (the search finished with none on its way)
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let devices = json["devices"].as_array().unwrap_or_else(|| panic!("no devices: {json}"));
        assert_eq!(devices.len(), ranks, "{json}");
        // the ranks share this host's one adapter, and the report says so beside their speed
        let device = json["device"].as_str().unwrap_or_default();
        assert!(device.contains(&format!("rank 0 of {ranks} MPI ranks; {ranks} ranks share this host's 1 adapter(s)")), "{device}");
        let sum = |key: &str| devices.iter().map(|d| d[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("nodes_given"), sum("nodes_loaded"), "{ranks} ranks: {json}");
        assert!(sum("gifts_loaded") >= ranks as u64 - 1, "{ranks} ranks: {json}");
        assert!(devices.iter().all(|d| d["batches"].as_u64().unwrap() > 0 && d["busy_seconds"].as_f64().unwrap() > 0.0), "{json}");
    }
}

/// The process of rank `rank` that `mpirun` (process `parent`) started.
fn rank_process(parent: u32, rank: usize) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
        let ppid: u32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
        let environ = std::fs::read(entry.path().join("environ")).ok()?;
        let own = format!("OMPI_COMM_WORLD_RANK={rank}");
        (ppid == parent && environ.split(|&b| b == 0).any(|v| v == own.as_bytes())).then_some(pid)
    })
}

/// `mpirun -np RANKS` on the tree with a checkpoint to `file` every 0.2 s, and (once the first
/// manifest is there) the process of its rank `victim`.
fn run_until_a_manifest(ranks: usize, file: &str, extra: &[&str], victim: usize) -> (Child, u32) {
    let mut run = mpirun(ranks, &[&TREE[..], &["--checkpoint", file, "--checkpoint-every", "0.2", "--json"], extra].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(120), "no checkpoint after 120 s");
        if Path::new(file).exists() {
            if let Some(pid) = rank_process(run.id(), victim) {
                return (run, pid);
            }
        }
        assert!(run.try_wait().unwrap().is_none(), "the run ended before a rank could be stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run's output once it ended, within `limit`.
fn ended(mut run: Child, limit: Duration) -> Output {
    let t0 = Instant::now();
    while run.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = run.kill();
            panic!("the run goes on {} s after a rank stopped answering", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    run.wait_with_output().unwrap()
}

/// The manifest at `path` names one part per rank of `ranks`, each beside it, and together
/// they hold the open nodes of the checkpoint read back.
fn check_manifest(path: &Path, ranks: usize) -> Manifest {
    let manifest = Manifest::read(path).unwrap();
    assert_eq!((manifest.ranks, manifest.parts.len()), (ranks, ranks), "{manifest:?}");
    let name = path.file_name().unwrap().to_str().unwrap();
    for (rank, (part, file)) in manifest.parts.iter().zip(manifest.part_paths(path)).enumerate() {
        assert_eq!(part.file, format!("{name}.e{}.r{rank}", manifest.epoch));
        assert!(file.is_file(), "{} is missing", file.display());
    }
    let merged = Checkpoint::read(path).unwrap();
    assert_eq!(merged.open_nodes() as u64, manifest.parts.iter().map(|p| p.nodes).sum::<u64>());
    assert_eq!((merged.nodes_counted, merged.best), (manifest.header.nodes_counted, manifest.header.best));
    manifest
}

/// The checkpoint path of a test, in its own empty scratch folder.
fn checkpoint_in(scratch: &str) -> PathBuf {
    common::scratch(scratch).join("ta014.checkpoint")
}

fn resume_on(ranks: usize, file: &str) -> Output {
    mpirun(ranks, &["flowshop", "solve", "ta014", "--search", "resident", "--resume", file, "--pool", "64", "--json"]).output().unwrap()
}

#[test]
fn a_killed_rank_ends_the_run_and_its_checkpoint_resumes_to_the_same_proof() {
    let expected = one_device();
    let path = checkpoint_in("mpi-killed");
    let file = path.to_str().unwrap();
    let (run, victim) = run_until_a_manifest(2, file, &[], 1);
    Command::new("kill").args(["-9", &victim.to_string()]).status().unwrap();
    // the run ends (it does not wait for the dead rank) with an error
    let out = ended(run, Duration::from_secs(90));
    assert!(!out.status.success(), "a run with a killed rank succeeded: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("signal 9") || err.contains("Killed"), "the error does not say a rank was killed: {err}");
    // its last manifest names both ranks' parts, which resume on three ranks to the same
    // proof and the same total count
    check_manifest(&path, 2);
    assert_eq!(counts(&resume_on(3, file)), expected);
}

/// Stops rank `victim` of a run over `ranks` once its first manifest is written: the run ends
/// within a minute with an error that names the rank by one of `named` (with `--silence 3`),
/// and the manifest resumes to the one-device proof.
fn a_stopped_rank_is_named(ranks: usize, victim: usize, scratch: &str, named: &[&str]) {
    let expected = one_device();
    let path = checkpoint_in(scratch);
    let file = path.to_str().unwrap();
    let (run, pid) = run_until_a_manifest(ranks, file, &["--silence", "3"], victim);
    Command::new("kill").args(["-STOP", &pid.to_string()]).status().unwrap();
    let out = ended(run, Duration::from_secs(60));
    // the stopped rank is ended with the others; if it is still there, it goes now
    let _ = Command::new("kill").args(["-CONT", &pid.to_string()]).status();
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).stderr(Stdio::null()).status();
    assert!(!out.status.success(), "a run with a stopped rank succeeded: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(named.iter().any(|n| err.contains(n)) && err.contains("it died or hangs; resume from"), "{err}");
    check_manifest(&path, ranks);
    assert_eq!(counts(&resume_on(ranks, file)), expected);
}

#[test]
fn a_stopped_rank_is_named_and_its_manifest_resumes_to_the_same_proof() {
    // rank 0 finds it silent, or took nothing it sent it
    a_stopped_rank_is_named(2, 1, "mpi-stopped", &["rank 1 sent nothing for 3 s", "rank 1 took no open nodes sent to it for 3 s"]);
}

#[test]
fn a_stopped_rank_0_is_named_by_the_others() {
    // the others find rank 0 silent, or stop waiting for it to take what they send (their
    // statuses, open nodes or confirmations): none of them waits on it for ever
    a_stopped_rank_is_named(3, 0, "mpi-stopped-root", &["rank 0 sent nothing for 3 s", "rank 0 took no "]);
}

#[test]
fn every_rank_writes_its_part_and_missing_or_damaged_parts_are_refused() {
    let expected = one_device();
    let path = checkpoint_in("mpi-parts");
    let file = path.to_str().unwrap();
    let stopped = mpirun(3, &with(&["--node-limit", "1000", "--checkpoint", file])).output().unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    let first = check_manifest(&path, 3);
    // resumed on two ranks into the same file: the next epoch, and the first one's parts gone
    let limit = (first.header.nodes_counted + 2000).to_string();
    let stopped = mpirun(2, &with(&["--node-limit", &limit, "--resume", file, "--checkpoint", file])).output().unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    let manifest = check_manifest(&path, 2);
    assert!(manifest.epoch > first.epoch && manifest.header.nodes_counted > first.header.nodes_counted, "{manifest:?}");
    assert!(manifest.parts.iter().map(|p| p.nodes).sum::<u64>() > 0, "{manifest:?}");
    let mut files: Vec<String> =
        std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    let mut kept: Vec<String> = manifest.parts.iter().map(|p| p.file.clone()).collect();
    kept.extend(["ta014.checkpoint".into(), "ta014.checkpoint.lock".into()]);
    kept.sort();
    assert_eq!(files, kept);

    // a manifest of another bound or instance is refused
    let resume = |instance: &'static str, bound: &'static str| {
        mpirun(2, &["flowshop", "solve", instance, "--search", "resident", "--resume", file, "--bound", bound]).output().unwrap()
    };
    assert_refused(&resume("ta014", "lb1"), "resume with the options it was written with");
    assert_refused(&resume("ta011", "lb2"), "the checkpoint was written for the instance");

    // a part damaged, replaced or missing is refused, naming it (on one process: the same reading)
    let refused = |needles: &[&str]| {
        let out = simtlab().args(["flowshop", "solve", "ta014", "--search", "resident", "--resume", file]).output().unwrap();
        needles.iter().for_each(|needle| assert_refused(&out, needle));
    };
    let parts = manifest.part_paths(&path);
    let good = std::fs::read(&parts[1]).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    std::fs::write(&parts[1], &flipped).unwrap();
    refused(&["--resume", "its part `parts[1]`", "hash does not match its content"]);
    std::fs::write(&parts[1], &good[..good.len() - 9]).unwrap();
    refused(&["its part `parts[1]`", "does not end with the hash the manifest gives it"]);
    std::fs::write(&parts[1], &good).unwrap();
    let zero = std::fs::read(&parts[0]).unwrap();
    std::fs::remove_file(&parts[0]).unwrap();
    refused(&["its part `parts[0]`", "cannot be read", "beside the manifest"]);
    std::fs::write(&parts[0], &zero).unwrap();

    // whole again, it resumes on one process with two devices to the same proof
    let resumed = simtlab()
        .args(["flowshop", "solve", "ta014", "--search", "resident", "--resume", file, "--pool", "64", "--devices", "2", "--json"])
        .output()
        .unwrap();
    assert_eq!(counts(&resumed), expected);
}

#[test]
fn bad_rank_counts_and_mismatched_checkpoints_are_refused() {
    // one rank drives one GPU
    assert_refused(&mpirun(2, &with(&["--devices", "2"])).output().unwrap(), "mpirun -np");
    // more ranks on a host than its adapters take
    assert_refused(&mpirun(9, &with(&[])).output().unwrap(), "MPI ranks on one host");
    // a checkpoint of another bound, of another instance
    let path = checkpoint_in("mpi-mismatch");
    let file = path.to_str().unwrap();
    let stopped = simtlab().args(with(&["--node-limit", "2000", "--checkpoint", file])).output().unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    let resume = |instance: &'static str, bound: &'static str| {
        mpirun(2, &["flowshop", "solve", instance, "--search", "resident", "--resume", file, "--bound", bound]).output().unwrap()
    };
    assert_refused(&resume("ta014", "lb1"), "resume with the options it was written with");
    assert_refused(&resume("ta011", "lb2"), "the checkpoint was written for the instance");
}
