//! The resident flow-shop search over MPI ranks (feature `mpi`; Open MPI's `mpirun` on the
//! PATH): with the optimum as `--ub`, 2 and 3 ranks count the one-device tree; a rank killed
//! mid-run ends the run with an error and the last checkpoint resumes on another number of
//! ranks to the same proof; bad rank counts and mismatched checkpoints are refused.
#![cfg(feature = "mpi")]

mod common;

use common::cli::{assert_refused, simtlab, text};
use std::process::{Command, Output, Stdio};
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
fn two_and_three_ranks_count_the_one_device_tree() {
    let expected = one_device();
    assert_eq!((expected.2, expected.3), (1377, true));
    for ranks in [2, 3] {
        let got = counts(&mpirun(ranks, &with(&["--json"])).output().unwrap());
        assert_eq!(got, expected, "{ranks} ranks");
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

#[test]
fn a_killed_rank_ends_the_run_and_its_checkpoint_resumes_to_the_same_proof() {
    let expected = one_device();
    let dir = common::scratch("mpi-killed");
    let path = dir.join("ta014.checkpoint");
    let file = path.to_str().unwrap();
    let mut run = mpirun(2, &[&TREE[..], &["--checkpoint", file, "--checkpoint-every", "0.2", "--json"]].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let victim = loop {
        assert!(t0.elapsed() < Duration::from_secs(120), "no checkpoint after 120 s");
        if path.exists() {
            if let Some(pid) = rank_process(run.id(), 1) {
                break pid;
            }
        }
        assert!(run.try_wait().unwrap().is_none(), "the run ended before a rank could be killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    Command::new("kill").args(["-9", &victim.to_string()]).status().unwrap();
    // the run ends (it does not wait for the dead rank) with an error
    let t1 = Instant::now();
    while run.try_wait().unwrap().is_none() {
        assert!(t1.elapsed() < Duration::from_secs(90), "the run goes on after a rank was killed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = run.wait_with_output().unwrap();
    assert!(!out.status.success(), "a run with a killed rank succeeded: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("signal 9") || err.contains("Killed"), "the error does not say a rank was killed: {err}");
    // its last checkpoint resumes on three ranks to the same proof and the same total count
    let resumed = counts(
        &mpirun(3, &["flowshop", "solve", "ta014", "--search", "resident", "--resume", file, "--pool", "64", "--json"]).output().unwrap(),
    );
    assert_eq!(resumed, expected);
}

#[test]
fn bad_rank_counts_and_mismatched_checkpoints_are_refused() {
    // one rank drives one GPU
    assert_refused(&mpirun(2, &with(&["--devices", "2"])).output().unwrap(), "mpirun -np");
    // more ranks on a host than its adapters take
    assert_refused(&mpirun(9, &with(&[])).output().unwrap(), "MPI ranks on one host");
    // a checkpoint of another bound, of another instance
    let dir = common::scratch("mpi-mismatch");
    let path = dir.join("ta014.checkpoint");
    let file = path.to_str().unwrap();
    let stopped = simtlab().args(with(&["--node-limit", "2000", "--checkpoint", file])).output().unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped.stderr));
    let resume = |instance: &'static str, bound: &'static str| {
        mpirun(2, &["flowshop", "solve", instance, "--search", "resident", "--resume", file, "--bound", bound]).output().unwrap()
    };
    assert_refused(&resume("ta014", "lb1"), "resume with the options it was written with");
    assert_refused(&resume("ta011", "lb2"), "the checkpoint was written for the instance");
}
