//! Persistent threads in a user's own kernel (`simtlab::pt::user`): kernels written only against
//! the public module (tests/fixtures/pt), checked against their CPU references on lavapipe, and
//! on GL (no blocking tier) the waiting kernel refused while the claiming one runs.

mod common;

use simtlab::profile::BindingSpec;
use simtlab::pt::graph::{bfs_levels, random_graph, Graph, UNREACHED};
use simtlab::pt::user::{self, PtRequest, PtRun, QueueOptions};
use simtlab::pt::{PtOptions, Runtime, Tier};
use simtlab::rng::Rng;
use simtlab::{Error, Gpu, GpuOptions};
use std::sync::{Mutex, MutexGuard};

const BFS: &str = include_str!("fixtures/pt/bfs.wgsl");
const BFS_LEVEL: &str = include_str!("fixtures/pt/bfs_level.wgsl");
const WORKLIST: &str = include_str!("fixtures/pt/worklist.wgsl");

/// Spinning workgroups of two tests at once can starve each other on a CPU adapter.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn words(v: &[u32]) -> BindingSpec {
    BindingSpec::Bytes(bytemuck::cast_slice(v).to_vec())
}

/// The bindings of bfs.wgsl and bfs_level.wgsl for a search of `g` from vertex 0.
fn bfs_bindings(g: &Graph) -> Vec<(String, BindingSpec)> {
    let mut level = vec![UNREACHED; g.vertices()];
    level[0] = 0;
    vec![
        ("offsets".into(), words(&g.offsets)),
        ("edges".into(), words(&g.edges)),
        ("level".into(), words(&level)),
        ("frontier".into(), BindingSpec::U32Zero(2 * g.vertices())),
        ("counts".into(), words(&[1, 0, 0, 0, 0, 0, 0, 0])),
    ]
}

fn request<'a>(file: &'a str, wgsl: &'a str, entry: &'a str, bindings: Vec<(String, BindingSpec)>) -> PtRequest<'a> {
    PtRequest {
        file,
        wgsl,
        entry,
        bindings,
        workgroups: None,
        dispatches: 1,
        samples: 1,
        expect: Vec::new(),
        queue: QueueOptions::default(),
    }
}

fn run(gpu: &Gpu, rt: &Runtime, request: &PtRequest) -> PtRun {
    user::run(gpu, rt, request).unwrap_or_else(|e| panic!("{} on {}: {e}", request.file, gpu.adapter_name()))
}

/// [`run`] for a waiting kernel, again (up to four times) where a CPU adapter's loop limit cut
/// a run short: the runtime reports that as an error instead of a wrong answer.
fn run_blocking(gpu: &Gpu, rt: &Runtime, request: &PtRequest) -> PtRun {
    let mut attempt = 1;
    loop {
        match user::run(gpu, rt, request) {
            Ok(r) => return r,
            Err(e @ Error::Timeout { .. }) if attempt < 4 && e.to_string().contains("cut short, not wrong") => eprintln!("again: {e}"),
            Err(e) => panic!("{} on {}: {e}", request.file, gpu.adapter_name()),
        }
        attempt += 1;
    }
}

/// The work list's items: seeds and uneven costs, and the CPU reference of worklist.wgsl.
fn worklist_inputs(n: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(5);
    let seed = rng.vec_u32(n);
    // most items cheap, a few up to 63 rounds
    let cost: Vec<u32> = (0..n).map(|_| if rng.range_u32(0, 7) == 0 { rng.range_u32(32, 63) } else { rng.range_u32(0, 4) }).collect();
    let expected = seed
        .iter()
        .zip(&cost)
        .map(|(&s, &c)| {
            (0..c % 64).fold(s, |x, _| {
                let x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                x ^ (x >> 15)
            })
        })
        .collect();
    (seed, cost, expected)
}

fn worklist_request(seed: &[u32], cost: &[u32]) -> PtRequest<'static> {
    request(
        "worklist.wgsl",
        WORKLIST,
        "worklist",
        vec![("seed".into(), words(seed)), ("cost".into(), words(cost)), ("result".into(), BindingSpec::U32Zero(seed.len()))],
    )
}

fn gl() -> Option<Gpu> {
    match Gpu::new(&GpuOptions { backend: Some("gl".into()), ..Default::default() }) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            eprintln!("skipped: no GL adapter ({e})");
            None
        }
    }
}

#[test]
fn the_module_goes_to_the_group_after_the_kernels_and_the_tier_follows_the_calls() {
    let s = user::shader("bfs.wgsl", BFS, "bfs", 4).unwrap();
    assert_eq!((s.group, s.needs, s.workgroup_size), (1, Tier::Blocking, [64, 1, 1]));
    assert_eq!(s.waits_at.as_deref(), Some("pt_global_barrier at bfs.wgsl:47"));
    assert_eq!(s.bindings, [user::CONTROL_BINDING, user::CONFIG_BINDING]);
    let s = user::shader("worklist.wgsl", WORKLIST, "worklist", 4).unwrap();
    assert_eq!((s.group, s.needs, s.waits_at.clone()), (1, Tier::NonBlocking, None));
    assert_eq!(s.bindings, [user::CONTROL_BINDING, user::CONFIG_BINDING, user::QUEUE_BINDING]);
    // without the marker the module follows the text, and lines keep their numbers
    let unmarked = BFS.replace(user::USE_LINE, "// (no marker)");
    assert_eq!(user::shader("bfs.wgsl", &unmarked, "bfs", 4).unwrap().waits_at.as_deref(), Some("pt_global_barrier at bfs.wgsl:47"));
    let plain = user::shader("bfs_level.wgsl", BFS_LEVEL, "bfs_level", 4).unwrap();
    assert_eq!(plain.needs, Tier::Multi);
    // the module text alone is valid WGSL at any group
    assert!(user::module(3).unwrap().contains("@group(3) @binding(2) var<storage, read_write> pt_queue"));

    let full = "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n@group(1) @binding(0) var<storage, read_write> b: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) l: u32) {\n    a[l] = b[l] + pt_claim(1u);\n}\n";
    let e = user::shader("full.wgsl", full, "main", 2).unwrap_err().to_string();
    assert!(e.contains("uses groups up to 1 and the device has 2") && e.contains("group of their own"), "{e}");
    let unjoined =
        "@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) l: u32) {\n    if (!pt_global_barrier(l)) { return; }\n}\n";
    let e = user::shader("unjoined.wgsl", unjoined, "main", 4).unwrap_err().to_string();
    assert!(e.contains("without joining") && e.contains("call pt_join"), "{e}");
    let e = user::shader("bfs.wgsl", BFS, "nope", 4).unwrap_err().to_string();
    assert!(e.contains("no compute entry point 'nope'") && e.contains("bfs"), "{e}");
}

#[test]
fn breadth_first_search_with_a_global_barrier_matches_the_cpu_levels() {
    let _serial = serial();
    let gpu = common::gpu();
    let g = random_graph(3000, 4, 11).unwrap();
    let expected = bfs_levels(&g, 0);
    let depth = *expected.iter().filter(|&&l| l != UNREACHED).max().unwrap();
    assert!(depth >= 5 && expected.iter().filter(|&&l| l == UNREACHED).count() > 0, "a graph worth searching (depth {depth})");
    let rt = Runtime::new(PtOptions::default());
    let r = run_blocking(&gpu, &rt, &request("bfs.wgsl", BFS, "bfs", bfs_bindings(&g)));
    assert_eq!((r.plan.requested, r.plan.used), (Tier::Blocking, Tier::Blocking), "{:?}", r.plan);
    let status = r.status.clone().unwrap();
    assert!(status.abort.is_none() && r.participants >= 1 && r.participants <= r.workgroups[0], "{status:?}");
    // one barrier per round, including the round that finds the frontier empty
    assert_eq!(status.barrier_arrivals, r.participants * (depth + 1), "{status:?}");
    assert_eq!(r.output_u32("level").unwrap(), expected);

    // the same search relaunched per level, without the module: one dispatch per level that
    // has a next one
    let mut plain = request("bfs_level.wgsl", BFS_LEVEL, "bfs_level", bfs_bindings(&g));
    plain.workgroups = Some([8, 1, 1]);
    plain.dispatches = depth;
    plain.expect = vec![("level".into(), words(&expected))];
    let p = run(&gpu, &rt, &plain);
    assert_eq!((p.plan.used, p.participants, p.status.clone()), (Tier::Multi, 0, None));
    assert!(p.checks[0].check.passed && p.checks[0].check.checked == 3000, "{:?}", p.checks);
    // one dispatch short leaves the deepest level unreached: the check sees it
    plain.dispatches = depth - 1;
    let short = run(&gpu, &rt, &plain);
    assert!(!short.checks[0].check.passed, "{:?}", short.checks);
}

#[test]
fn a_work_list_with_uneven_items_matches_the_cpu_reference() {
    let _serial = serial();
    let gpu = common::gpu();
    let (seed, cost, expected) = worklist_inputs(5000);
    let rt = Runtime::new(PtOptions::default());
    let r = run(&gpu, &rt, &worklist_request(&seed, &cost));
    assert_eq!(r.plan.used, Tier::NonBlocking);
    assert_eq!(r.participants, r.workgroups[0], "every launched workgroup takes part when no one waits");
    assert_eq!(r.output_u32("result").unwrap(), expected);
}

#[test]
fn a_barrier_that_can_never_complete_stops_with_an_error() {
    let _serial = serial();
    let gpu = common::gpu();
    let g = random_graph(500, 4, 2).unwrap();
    // far more "participants" than run at once: the first barrier must run out, not hang
    let rt = Runtime::new(PtOptions { assume_resident: true, launch: Some(256), spin_cap: 20_000, ..Default::default() });
    let e = user::run(&gpu, &rt, &request("bfs.wgsl", BFS, "bfs", bfs_bindings(&g))).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Timeout { .. }), "{text}");
    assert!(text.contains("'bfs' of bfs.wgsl") && (text.contains("barrier timeout") || text.contains("iteration limit")), "{text}");
    assert!(!text.contains("--"), "library terms, not command-line flags: {text}");
}

#[test]
fn on_gl_the_barrier_kernel_is_refused_and_the_work_list_runs() {
    let _serial = serial();
    let Some(gpu) = gl() else { return };
    let rt = Runtime::new(PtOptions::default());
    let g = random_graph(300, 4, 3).unwrap();
    let e = user::run(&gpu, &rt, &request("bfs.wgsl", BFS, "bfs", bfs_bindings(&g))).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Unsupported { .. }), "{text}");
    for part in [
        "'bfs' of bfs.wgsl waits for other workgroups",
        "pt_global_barrier at bfs.wgsl:47",
        "a blocking wait is not supported on",
        "GL backend",
        "Split the kernel at its global barriers",
        "pt_claim",
    ] {
        assert!(text.contains(part), "missing '{part}' in: {text}");
    }
    let (seed, cost, expected) = worklist_inputs(3000);
    let r = run(&gpu, &rt, &worklist_request(&seed, &cost));
    assert_eq!(r.plan.used, Tier::NonBlocking);
    assert_eq!(r.output_u32("result").unwrap(), expected);
}
