//! The command line as a user meets it: bad values refused with a message (never a panic),
//! options only where they apply, output to standard output, quiet exits on closed pipes,
//! adapters always listed, output directories checked first.

mod common;

use common::cli::{assert_refused, run, simtlab, text};
use std::path::Path;
use std::process::{Output, Stdio};

#[test]
fn timeouts_that_are_not_a_positive_finite_duration_are_refused() {
    for bad in ["inf", "1e300", "0", "-1", "nan", "abc"] {
        let out = run(&["bench", "micro", "--n", "1024", &format!("--timeout={bad}")]);
        assert_refused(&out, "--timeout");
    }
    let out = run(&["bench", "micro", "--n", "1024", "--min-sample-ms=-5"]);
    assert_refused(&out, "--min-sample-ms");
}

#[test]
fn gpu_options_are_offered_only_by_commands_that_open_a_gpu() {
    for (args, expected) in [
        (&["occupancy", "--help"][..], false),
        (&["report", "merge", "--help"], false),
        (&["flowshop", "instance", "--help"], false),
        (&["flowshop", "bound", "--help"], false),
        (&["flowshop", "solve", "--help"], true),
        (&["bench", "micro", "--help"], true),
        (&["reproduce", "--help"], true),
    ] {
        let help = text(&run(args).stdout);
        assert!(help.contains("Usage"), "{args:?}: {help}");
        assert_eq!(help.contains("--timeout"), expected, "{args:?}: {help}");
        assert_eq!(help.contains("--backend"), expected, "{args:?}: {help}");
    }
    assert_refused(&run(&["flowshop", "instance", "ta001", "--timeout", "5"]), "--timeout");
    assert_refused(&run(&["occupancy", "--arch", "g80", "--threads", "256", "--regs", "10", "--backend", "vulkan"]), "--backend");
}

#[test]
fn out_of_range_values_are_refused_not_clamped() {
    assert_refused(&run(&["bench", "micro", "--n", "4096", "--samples", "0"]), "--samples");
    assert_refused(&run(&["bench", "remap", "--n", "4096", "--pipeline", "4", "--workers", "0"]), "--workers");
    assert_refused(&run(&["bench", "remap", "--n", "4096", "--workers", "2"]), "--pipeline");
    assert_refused(&run(&["occupancy", "--arch", "g80", "--threads", "256", "--regs", "0"]), "--regs");
    // `if` takes one order of its values; a second (or a loop layout) was silently dropped
    assert_refused(&run(&["bench", "micro", "--pattern", "if", "--n", "4096", "--distribution", "random,sorted"]), "--distribution");
    assert_refused(&run(&["bench", "micro", "--pattern", "if", "--n", "4096", "--distribution", "one-long"]), "--distribution");
}

/// The library names configuration fields (`invalid launch: `bench=barrier` does not use it`);
/// the command line prints each as the flag that sets it, in the subcommand that ran.
#[test]
fn library_errors_are_printed_with_the_flags_that_set_their_fields() {
    let out = run(&["bench", "pt", "--case", "barrier", "--launch", "4"]);
    assert_refused(&out, "invalid --launch: --case barrier does not use it (it applies to --case sync, forest, prodcons, gsync, queue)");
    let out = run(&["bench", "pt", "--case", "queue", "--kind", "single", "--rounds", "8"]);
    assert_refused(&out, "invalid --rounds: no chosen --kind uses it (it applies to --kind ring)");
    let out = run(&["bench", "carrillo", "--steps", "4", "--fractions", "0.5"]);
    assert_refused(&out, "invalid --steps: give --steps or --fractions, not both");
    let out = run(&["bench", "carrillo", "--loop-len", "5000"]);
    assert_refused(&out, "invalid --loop-n/--loop-len: --loop-n ");
    assert_refused(&out, "--loop-len 5000 (give --loop-n ≥ 1, 1 ≤ --loop-len ≤ 4096");
    // a size named by another field in the kernel (lbm's grid edge) is the flag that sets it
    let out = run(&["bench", "zhang", "--kernel", "lbm", "--n", "512"]);
    assert_refused(&out, "lbm --n 512");
    assert_refused(&out, "lower --n");
    let out = run(&["bench", "matmul", "--kernel", "regtile", "--n", "64", "--bk", "6"]);
    assert_refused(&out, "invalid --bk: regtile --wg-x 16 --wg-y 8 --tm 8 --tn 8 --bk 6");
    for out in [&run(&["bench", "pt", "--case", "sync", "--tier", "3"]), &run(&["bench", "matmul", "--n", "64", "--kernel", "nope"])] {
        let err = text(&out.stderr);
        assert!(!err.contains('`'), "a field left unnamed as a flag: {err}");
    }
}

/// `flowshop solve`'s options, the checkpoint it resumes and the adapter it opens: the library
/// names their fields, the command line their flags.
#[test]
fn flowshop_errors_are_printed_with_the_flags_that_set_their_fields() {
    let dir = common::scratch("cli-flowshop-fields");
    let (checkpoint, garbage) = (dir.join("ta001.ck"), dir.join("garbage.ck"));
    std::fs::write(&garbage, b"x").unwrap();
    let solve = |args: &[&str]| run(&[&["flowshop", "solve", "ta001"][..], args].concat());
    let written = solve(&["--search", "resident", "--ub", "1300", "--node-limit", "50", "--checkpoint", checkpoint.to_str().unwrap()]);
    assert!(written.status.success() && checkpoint.exists(), "{}", text(&written.stderr));
    let refused = [
        (
            solve(&["--search", "resident", "--checkpoint-every", "5"]),
            "invalid --checkpoint-every: it needs --checkpoint, the file to write to",
        ),
        (
            solve(&["--checkpoint", "x.ck"]),
            "invalid --checkpoint: it applies only to --search resident; drop --checkpoint or add --search resident",
        ),
        (solve(&["--device", "cpu", "--adapter", "llvmpipe"]), "invalid --adapter: it applies only to --device gpu; drop --adapter or add --device gpu"),
        (solve(&["--threads", "2"]), "invalid --threads: it applies only to --device cpu; drop --threads or add --device cpu"),
        (solve(&["--search", "resident", "--device", "cpu"]), "invalid --device: cpu: the resident search runs the refactored per-child kernels on the GPU; drop --device or use --search host"),
        (solve(&["--search", "resident", "--kernel", "basic"]), "invalid --kernel: basic: the resident search"),
        (solve(&["--device", "cpu", "--time-limit=-1"]), "invalid --time-limit: -1 s; use a number of seconds ≥ 0"),
        (solve(&["--adapter", "no-such-gpu-xyz"]), "Set --adapter (or WGPU_ADAPTER_NAME) to part of one of these names, and --backend (or WGPU_BACKEND)"),
        (
            solve(&["--search", "resident", "--resume", garbage.to_str().unwrap()]),
            "not a usable flow-shop checkpoint: the file is too short; resume from a file the resident search wrote as its --checkpoint, or start again without --resume",
        ),
        (
            solve(&["--search", "resident", "--ub", "1290", "--resume", checkpoint.to_str().unwrap()]),
            "invalid --resume: the checkpoint was written for --ub 1300, this run has --ub 1290",
        ),
        (
            solve(&["--search", "resident", "--bound", "lb1", "--resume", checkpoint.to_str().unwrap()]),
            "the checkpoint was written for --bound lb2, this run has --bound lb1",
        ),
        (run(&["occupancy", "--arch", "no-such-arch", "--threads", "64", "--regs", "8"]), "invalid --arch: unknown architecture 'no-such-arch'"),
    ];
    for (out, expected) in &refused {
        assert_refused(out, expected);
        let err = text(&out.stderr);
        assert!(!err.contains('`'), "a field left unnamed as a flag: {err}");
    }
    assert_refused(&refused[refused.len() - 1].0, "--arch list shows every preset and alias");
}

#[test]
fn json_dash_is_standard_output_and_the_table_goes_to_standard_error() {
    let dir = common::scratch("cli-json-dash");
    let out = simtlab()
        .current_dir(&dir)
        .args([
            "bench",
            "micro",
            "--pattern",
            "loop",
            "--distribution",
            "one-long,sorted",
            "--n",
            "4096",
            "--samples",
            "1",
            "--warmup",
            "0",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let records: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON alone");
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["variant"], "one-long");
    // the headline meant for people went to standard error with the table
    assert!(text(&out.stderr).contains("one-long over sorted"), "{}", text(&out.stderr));
    assert_eq!(records[0]["check"]["passed"], true);
    assert!(text(&out.stderr).contains("data_loop"), "the table is on stderr");
    assert!(!dir.join("-").exists(), "a file named '-' was created");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::io::Read;
    let mut child =
        simtlab().args(["flowshop", "instance", "ta120", "--json"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = [0u8; 10];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
    assert_ne!(out.status.code(), Some(101), "a panic's exit code");
}

#[test]
fn adapter_errors_list_the_adapters_that_exist() {
    let out = run(&["devices", "--adapter", "no-such-adapter-anywhere"]);
    assert_refused(&out, "no-such-adapter-anywhere");
    let err = text(&out.stderr);
    assert!(!err.contains("none on any backend"), "{err}");
    let existing = simtlab::gpu::adapters(&Default::default()).unwrap();
    assert!(!existing.is_empty(), "this test needs an adapter (lavapipe in CI)");
    for a in &existing {
        assert!(err.contains(&a.get_info().name), "{} not listed: {err}", a.get_info().name);
    }
    let other = if cfg!(target_os = "macos") { "dx12" } else { "metal" };
    let out = run(&["bench", "micro", "--n", "1024", "--backend", other]);
    assert_refused(&out, &existing[0].get_info().name);
    assert!(!text(&out.stderr).contains("apt-get"), "tells the user to install a driver although adapters exist");
}

#[test]
fn adapters_are_selected_by_index_and_pci_bus_as_devices_lists_them() {
    let out = run(&["devices", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    for (i, a) in all.iter().enumerate() {
        assert_eq!(a["index"], i, "indices follow the list order: {a}");
        let picked = run(&["devices", "--json", "--adapter", &format!("#{i}")]);
        let picked: Vec<serde_json::Value> = serde_json::from_slice(&picked.stdout).unwrap();
        assert_eq!(picked.len(), 1, "#{i} selects one adapter");
        assert_eq!((&picked[0]["name"], &picked[0]["backend"], &picked[0]["index"]), (&a["name"], &a["backend"], &a["index"]));
        let bus = a["pci_bus"].as_str().unwrap();
        if bus.contains(':') {
            let by_bus = run(&["devices", "--json", "--adapter", bus]);
            let by_bus: Vec<serde_json::Value> = serde_json::from_slice(&by_bus.stdout).unwrap();
            assert!(by_bus.iter().all(|b| b["pci_bus"] == bus) && !by_bus.is_empty(), "{bus}: {by_bus:?}");
        }
    }
    let beyond = format!("#{}", all.len());
    assert_refused(&run(&["devices", "--adapter", &beyond]), &beyond);
    assert_refused(&run(&["devices", "--adapter", "#x"]), "simtlab devices");
}

/// More devices than adapters open an adapter again: the search says once that those devices
/// share it, so that nobody reads their speed as the speed of as many GPUs.
#[test]
fn a_search_that_opens_an_adapter_again_says_its_devices_share_it() {
    let solve = |devices: &str| {
        run(&["flowshop", "solve", "ta001", "--search", "resident", "--node-limit", "2000", "--adapter", "#0", "--devices", devices])
    };
    let notes = |out: &Output| {
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr).matches("an adapter is opened again").count()
    };
    assert_eq!([notes(&solve("1")), notes(&solve("2")), notes(&solve("3"))], [0, 1, 1]);
}

#[test]
fn headless_commands_print_no_windowing_noise() {
    let out = simtlab().env_remove("XDG_RUNTIME_DIR").env_remove("WAYLAND_DISPLAY").args(["devices"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(!err.contains("XDG_RUNTIME_DIR") && !err.lines().any(|l| l.starts_with("error")), "{err}");
}

/// Runs `reproduce` into `dir` and returns the output.
fn reproduce(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["reproduce", "--quick", "--paper", "ryoo", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn reproduce_checks_out_before_any_gpu_work() {
    let dir = common::scratch("cli-out-file");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let out = reproduce(&file, &[]);
    assert_refused(&out, "not a directory");
    assert!(!text(&out.stderr).contains("adapter:"), "opened the GPU first");
}

fn outcomes_in(dir: &Path) -> Option<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(dir.join("results.json")).ok()?;
    Some(serde_json::from_str::<Vec<serde_json::Value>>(&text).expect("results.json is valid JSON at every moment"))
}

#[cfg(unix)]
#[test]
fn an_interrupted_reproduction_keeps_its_points_refuses_a_second_writer_and_resumes() {
    let dir = common::scratch("cli-interrupt").join("report");
    let out_arg = dir.to_str().unwrap().to_string();
    let args = ["reproduce", "--quick", "--paper", "zhang", "--out", &out_arg];
    let child = simtlab().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let t0 = std::time::Instant::now();
    let mut seen = 0;
    while seen < 2 {
        assert!(t0.elapsed().as_secs() < 300, "no points after 300 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
        seen = outcomes_in(&dir).map_or(0, |o| o.len());
    }
    // a second run into the same directory is refused while the first holds it
    let second = run(&args);
    assert_refused(&second, "another simtlab run");
    // SAFETY: sending SIGINT to our own child
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_refused(&out, "--resume");
    let kept = outcomes_in(&dir).unwrap();
    let total = 23;
    assert!(kept.len() >= 2 && kept.len() < total, "{} points kept", kept.len());
    assert!(std::fs::read_to_string(dir.join("report.md")).unwrap().contains("interrupted"));

    let resumed = run(&[&args[..], &["--resume"]].concat());
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains(&format!("resuming: {} points", kept.len())), "{}", text(&resumed.stderr));
    let all = outcomes_in(&dir).unwrap();
    assert_eq!(all.len(), total);
    // the kept points were not run again: their outcomes are unchanged
    for k in &kept {
        assert!(all.contains(k), "point {} was rerun", k["point"]["key"]);
    }
    // and a resume on another scale is refused
    let other = run(&["reproduce", "--paper", "zhang", "--out", &out_arg, "--resume"]);
    assert_refused(&other, "Quick");
}

#[test]
fn remap_takes_overrides_and_builds_the_index_on_the_gpu() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let shader = format!("{}/tests/fixtures/remap/override_loop.wgsl", env!("CARGO_MANIFEST_DIR"));
    let args = ["remap", &shader, "--workgroups", "128", "--bind", "trips=u32:4096:random:31", "--bind", "mixed=u32:4096:zero"];
    // `multiplier` has no default: without --override the command says which flag gives it
    assert_refused(&run(&args), "--override");
    let out = run(&[
        &args[..],
        &["--override", "block=32", "--override", "multiplier=69069", "--strategy", "gpu", "--samples", "1", "--json", "-"],
    ]
    .concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON alone");
    assert_eq!((json["strategy"].as_str(), json["outputs_identical"].as_bool()), (Some("gpu"), Some(true)), "{json}");
    assert!(json["after"]["simt_efficiency"].as_f64().unwrap() >= 0.8, "{json}");
    assert!(json["index_seconds"].as_f64().unwrap() > 0.0 && json["classes_seconds"].as_f64().is_some(), "{json}");
    assert!(text(&out.stderr).contains("index built in") && text(&out.stderr).contains("on the GPU"), "{}", text(&out.stderr));

    // --calibration keeps what the adapter measured: the second run's model starts from the first's
    let file = common::scratch("remap-calibration").join("calibration.json");
    let file_arg = file.to_str().unwrap();
    let calibrated =
        [&args[..], &["--override", "block=32", "--override", "multiplier=69069", "--samples", "1", "--calibration", file_arg]].concat();
    let first = run(&calibrated);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let said = text(&first.stdout) + &text(&first.stderr);
    assert!(said.contains("learned on this adapter: ") && said.contains(", model now ") && said.contains("(1 run)"), "{said}");
    let kept = simtlab::remap::Calibration::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(kept.learned.len(), 1, "{kept:?}");
    let second = run(&calibrated);
    let said = text(&second.stdout) + &text(&second.stderr);
    assert!(second.status.success() && said.contains("measured on this adapter at "), "{said}");
    std::fs::write(&file, "not json").unwrap();
    assert_refused(&run(&calibrated), "--calibration");
}

#[test]
fn bench_remap_learns_what_each_strategy_measured_for_the_next_auto() {
    let file = common::scratch("bench-remap-calibration").join("calibration.json");
    let file_arg = file.to_str().unwrap();
    let args = ["bench", "remap", "--n", "4096", "--samples", "3", "--warmup", "1", "--calibration", file_arg];
    let first = run(&args);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let said = text(&first.stdout) + &text(&first.stderr);
    // one lesson per strategy the model weighed and the run measured
    for s in ["redirect", "lam", "gpu", "tile"] {
        assert!(said.contains(&format!("learned on this adapter: {s}: predicted ")), "{s}: {said}");
    }
    let kept = simtlab::remap::Calibration::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(kept.learned.iter().all(|l| l.runs == 1) && kept.learned.len() >= 4, "{kept:?}");
    // the second run's auto decides with it, says so, and learns a second measurement
    let second = run(&args);
    let said = text(&second.stdout) + &text(&second.stderr);
    assert!(second.status.success() && said.contains("x the modelled time (1 run), so net "), "{said}");
    assert!(said.contains("(2 runs)"), "{said}");
}
