//! What a careless or hostile user meets and must not lose by: checkpoint paths that cannot be
//! written, two searches on one checkpoint, SIGTERM (Slurm, `docker stop`, systemd), a run
//! that would replace an earlier one, sizes that would exhaust memory, links where files go.

mod common;

use common::cli::{assert_refused, run, simtlab, text};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> Child {
    simtlab().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("simtlab starts")
}

/// Waits (at most five minutes: only a broken build takes that long) until `ready` holds.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !ready() {
        assert!(t0.elapsed() < Duration::from_secs(300), "{what}: not after 300 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn solve_args<'a>(instance: &'a str, checkpoint: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["flowshop", "solve", instance, "--search", "resident", "--heuristic-rounds", "0", "--checkpoint", checkpoint];
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_checkpoint_path_that_cannot_hold_one_is_refused_before_the_search() {
    let dir = common::scratch("faults-checkpoint-path");
    let directory = dir.to_str().unwrap();
    for (path, expected) in [
        (directory, "is a directory"),
        ("/dev/full", "not a regular file"),
        ("/proc/self/no-such-dir/ck", "give a path in a writable directory"),
    ] {
        let out = run(&solve_args("ta011", path, &[]));
        assert_refused(&out, expected);
        assert!(text(&out.stdout).is_empty(), "{path}: {}", text(&out.stdout));
        assert!(!text(&out.stderr).contains("nodes/s"), "{path}: the search ran first: {}", text(&out.stderr));
    }
}

#[cfg(unix)]
#[test]
fn checkpoints_that_fail_during_the_search_lose_neither_the_search_nor_its_proof() {
    let dir = common::scratch("faults-checkpoint-fails");
    let checkpoint = dir.join("ta011.ck");
    let child = spawn(&solve_args("ta011", checkpoint.to_str().unwrap(), &["--checkpoint-every", "0.05"]));
    wait_for("the first checkpoint", || checkpoint.is_file());
    // from now on every write fails: a directory stands where the file goes
    // (a periodic write may land between the two steps: then again)
    while std::fs::create_dir(&checkpoint).is_err() {
        let _ = std::fs::remove_file(&checkpoint);
    }
    std::fs::write(checkpoint.join("keep"), "x").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("makespan 1582 (optimal)"), "the proof is lost: {stdout} {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("final checkpoint could not be written") && stderr.contains("printed above"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn sigterm_keeps_the_schedule_and_the_checkpoint_and_a_second_search_is_locked_out() {
    let dir = common::scratch("faults-sigterm-solve");
    let checkpoint = dir.join("ta051.ck");
    let path = checkpoint.to_str().unwrap();
    let child = spawn(&solve_args("ta051", path, &[]));
    let lock = dir.join("ta051.ck.lock");
    wait_for("the search to start", || lock.exists());
    let second = run(&solve_args("ta051", path, &[]));
    assert_refused(&second, "being written by another search");
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: signalling our own child
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stdout.contains("(search stopped: interrupted; not proven optimal)"), "{stdout} {stderr}");
    assert!(stderr.contains(&format!("--resume {path}")), "{stderr}");
    let kept = simtlab::kernels::flowshop::checkpoint::Checkpoint::read(&checkpoint).unwrap();
    assert!(kept.open_nodes() > 0 && kept.instance == "ta051", "{} open", kept.open_nodes());
}

fn outcomes_in(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<serde_json::Value>>(&t).ok())
        .map_or(0, |o| o.len())
}

#[cfg(unix)]
#[test]
fn sigterm_keeps_a_reproductions_points_and_a_later_run_never_replaces_them_silently() {
    let dir = common::scratch("faults-sigterm-reproduce").join("report");
    let out_arg = dir.to_str().unwrap();
    let child = spawn(&["reproduce", "--quick", "--paper", "zhang", "--out", out_arg]);
    wait_for("a first point", || outcomes_in(&dir) >= 1);
    // SAFETY: signalling our own child
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let kept = outcomes_in(&dir);
    assert!(kept >= 1, "no point kept");
    // the same command again would wipe them: refused, naming the ways on
    let again = run(&["reproduce", "--quick", "--paper", "ryoo", "--out", out_arg]);
    assert_refused(&again, "--resume");
    assert!(text(&again.stderr).contains("--replace") && !text(&again.stderr).contains("adapter:"), "{}", text(&again.stderr));
    assert_eq!(outcomes_in(&dir), kept);
    // asked for, the replacement runs
    let replaced = run(&["reproduce", "--quick", "--paper", "ryoo", "--out", out_arg, "--replace"]);
    assert!(replaced.status.success(), "{}", text(&replaced.stderr));
    let results = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(!results.contains("\"zhang") && results.contains("ryoo"), "{results}");
}

#[test]
fn sizes_that_would_exhaust_memory_are_refused_before_it_is_taken() {
    let out = run(&["flowshop", "solve", "ta001", "--search", "resident", "--devices", "1000"]);
    assert_refused(&out, "devices for one search");
    let out = run(&["bench", "flowshop", "--pools", "100000000", "--samples", "1"]);
    assert_refused(&out, "children per pool");
    let out = run(&["run", "flowshop-bound-pools", "--param", "pool_sizes=[100000000]"]);
    assert_refused(&out, "children per pool");
}

#[cfg(unix)]
#[test]
fn records_written_onto_a_dangling_link_land_at_its_target() {
    let dir = common::scratch("faults-dangling");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    let out = run(&["bench", "micro", "--pattern", "loop", "--n", "4096", "--samples", "1", "--json", link.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(dir.join("target.json")).unwrap()).unwrap();
    assert!(!records.is_empty() && records.iter().all(|r| r["check"]["passed"] == true), "{records:?}");
}

#[cfg(unix)]
#[test]
fn a_link_planted_as_the_output_lock_is_not_followed() {
    let dir = common::scratch("faults-lock-link");
    let victim = dir.join("victim");
    let out = dir.join("report");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join(".simtlab.lock")).unwrap();
    let err = simtlab::experiments::OutputDir::open(&out).unwrap_err().to_string();
    assert!(err.contains("cannot be written"), "{err}");
    assert!(!victim.exists(), "the lock was taken through the link");
}
