//! `simtlab::profile` on lavapipe: auto-instrumented kernels against simtlab's hand-placed
//! probes, exact counts computed on the host, the GPU probe against host emulation, outputs
//! unchanged by the probe, the non-blocking `Profiler`, and bad input.

mod common;

use simtlab::divergence::ProbeRecords;
use simtlab::gpu::{shader, BufferKind, Step};
use simtlab::profile::{
    self, instrument, BindingSpec, CountSource, InstrumentOptions, ProfileRequest, ShaderDispatch, SiteCounts, SiteKind,
};
use simtlab::rng::Rng;
use simtlab::Error;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/profile/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn request<'a>(file: &'a str, wgsl: &'a str, workgroups: u32, bindings: Vec<(&str, BindingSpec)>) -> ProfileRequest<'a> {
    let bindings = bindings.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    ProfileRequest {
        trace_events: 1024,
        ..ProfileRequest::new(ShaderDispatch { bindings, ..ShaderDispatch::new(file, wgsl, "main", [workgroups, 1, 1]) })
    }
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}

fn output(run: &profile::ProfileRun, name: &str) -> Vec<u32> {
    words(&run.outputs.iter().find(|(b, _)| b.name == name).unwrap().1)
}

/// Lock-step counts of `while_if.wgsl` computed from its inputs on the host, subgroups of
/// `width` consecutive lanes within each workgroup of 64: (loop test, inner if), and each
/// lane's `hits`.
fn while_if_reference(seeds: &[u32], width: usize) -> ([SiteCounts; 2], Vec<u32>) {
    let lanes: Vec<(usize, Vec<bool>)> = seeds
        .iter()
        .map(|&s| {
            let (mut h, trips) = (s, (s & 15) as usize);
            let outcomes = (0..trips)
                .map(|_| {
                    h = h.wrapping_mul(1664525).wrapping_add(1013904223);
                    (h >> 29) < 3
                })
                .collect();
            (trips, outcomes)
        })
        .collect();
    let hits = lanes.iter().map(|(_, o)| o.iter().filter(|&&t| t).count() as u32).collect();
    let mut counts = [SiteCounts::default(); 2];
    let step = |c: &mut SiteCounts, active: u64, taken: u64| {
        if active > 0 {
            c.evaluations += 1;
            c.active_lanes += active;
            c.taken_lanes += taken;
            c.uniform_evaluations += (taken == 0 || taken == active) as u64;
            c.taken_steps += (taken > 0) as u64;
        }
    };
    for workgroup in lanes.chunks(64) {
        for sg in workgroup.chunks(width) {
            let max = sg.iter().map(|l| l.0).max().unwrap();
            for k in 0..=max {
                let active = sg.iter().filter(|l| l.0 >= k).count() as u64;
                let stay = sg.iter().filter(|l| l.0 > k).count() as u64;
                step(&mut counts[0], active, stay);
                let taken = sg.iter().filter(|l| l.0 > k && l.1[k]).count() as u64;
                step(&mut counts[1], stay, taken);
            }
        }
    }
    (counts, hits)
}

#[test]
fn a_while_with_an_if_inside_gives_the_counts_computed_on_the_host() {
    let Some((gpu, native)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("while_if.wgsl");
    let n = 512;
    let seeds = Rng::new(23).vec_u32(n);
    let binds = || vec![("seeds", BindingSpec::Bytes(bytemuck::cast_slice(&seeds).to_vec())), ("hits", BindingSpec::U32Zero(n))];
    let kinds: Vec<(SiteKind, u32, String)> = instrument("while_if.wgsl", &wgsl, "main", &InstrumentOptions::default())
        .unwrap()
        .sites
        .into_iter()
        .map(|s| (s.kind, s.line, s.source))
        .collect();
    assert_eq!(kinds, [(SiteKind::Loop, 13, "k < trips".to_string()), (SiteKind::If, 15, "(h >> 29u) < 3u".to_string())]);

    let gpu_run = profile::profile(&gpu, &request("while_if.wgsl", &wgsl, (n / 64) as u32, binds())).unwrap();
    assert_eq!((gpu_run.counts.source, gpu_run.counts.width), (CountSource::GpuProbe, native));
    let (expected, hits) = while_if_reference(&seeds, native as usize);
    assert!(expected[0].evaluations > expected[0].uniform_evaluations && expected[1].taken_lanes > 0, "the inputs must diverge");
    assert_eq!(gpu_run.counts.totals(), expected);
    assert_eq!(output(&gpu_run, "hits"), hits);
    assert!(gpu_run.outputs_identical);

    // host emulation at the native width and at others, from each invocation's outcomes
    for width in [native, 5, 32] {
        let emulated = profile::profile(
            &gpu,
            &ProfileRequest { width: Some(width), emulate: true, ..request("while_if.wgsl", &wgsl, (n / 64) as u32, binds()) },
        )
        .unwrap();
        assert_eq!((emulated.counts.source, emulated.counts.width), (CountSource::HostEmulation, width));
        assert_eq!(emulated.counts.totals(), while_if_reference(&seeds, width as usize).0, "width {width}");
        assert_eq!(output(&emulated, "hits"), hits);
        if width == native {
            assert_eq!(emulated.counts, profile::Counts { source: CountSource::HostEmulation, ..gpu_run.counts.clone() });
        }
    }
}

#[test]
fn gpu_probe_equals_host_emulation_with_calls_early_returns_switches_and_break_if() {
    let Some((gpu, native)) = common::gpu_with_subgroups() else { return };
    let collatz = fixture("collatz.wgsl");
    let shapes = fixture("shapes.wgsl");
    let cases = [
        request("collatz.wgsl", &collatz, 5, vec![("values", BindingSpec::U32Random(300, 4)), ("steps", BindingSpec::U32Zero(300))]),
        request(
            "shapes.wgsl",
            &shapes,
            6,
            vec![("data", BindingSpec::U32Random(192, 9)), ("params", BindingSpec::Bytes(bytemuck::cast_slice(&[192u32, 0]).to_vec()))],
        ),
    ];
    for case in cases {
        let on_gpu = profile::profile(&gpu, &case).unwrap();
        let emulated = profile::profile(&gpu, &ProfileRequest { emulate: true, ..case.clone() }).unwrap();
        assert_eq!(on_gpu.counts.width, native);
        assert_eq!(emulated.counts.per_subgroup, on_gpu.counts.per_subgroup, "{}", case.shader.file);
        assert!(on_gpu.outputs_identical && emulated.outputs_identical);
        assert_eq!(on_gpu.outputs, emulated.outputs);
        let totals = on_gpu.counts.totals();
        assert!(totals.iter().all(|c| c.evaluations > 0), "every site of {} runs: {totals:?}", case.shader.file);
        assert!(totals.iter().any(|c| c.uniform_evaluations < c.evaluations), "{} diverges", case.shader.file);
    }
}

#[test]
fn sites_of_every_kind_are_found_where_they_are_written() {
    let wgsl = fixture("shapes.wgsl");
    let probed = instrument("shapes.wgsl", &wgsl, "main", &InstrumentOptions::default()).unwrap();
    let sites: Vec<(SiteKind, u32, u32, &str, &str)> =
        probed.sites.iter().map(|s| (s.kind, s.line, s.column, s.source.as_str(), s.function.as_str())).collect();
    assert_eq!(
        sites,
        [
            (SiteKind::Call, 11, 4, "bump(x: u32)", "bump"),
            (SiteKind::Loop, 19, 22, "r < (x & 3u)", "main"),
            (SiteKind::Loop, 25, 22, "(x & 1u) == 0u || x < 8u", "main"),
            (SiteKind::Switch, 29, 13, "params.mode + i32(x & 1u)", "main"),
        ]
    );
    // a loop test that calls a function and short-circuits is one loop site; conditions that
    // are a `let`, an argument or a builtin call are wrapped where they are written
    let probed_tests = instrument("shapes.wgsl", &wgsl, "tests", &InstrumentOptions::default()).unwrap();
    let kinds: Vec<(SiteKind, &str)> = probed_tests.sites.iter().map(|s| (s.kind, s.source.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (SiteKind::Call, "bump(x: u32)"),
            (SiteKind::Call, "pick(mode: u32)"),
            (SiteKind::Switch, "mode"),
            (SiteKind::Loop, "bump(x) < 40u && (x & 7u) != 3u"),
            (SiteKind::If, "odd"),
            (SiteKind::If, "all(vec2<u32>(x, x) == vec2<u32>(4u, 4u))"),
        ]
    );
    // the other entry point's `if` is not a site; the probe takes the group after the shader's
    assert_eq!(probed.slot, (1, 0));
    // every character of the user's text is there, in order, around the probes
    let mut rest = probed.wgsl.chars();
    assert!(wgsl.chars().all(|c| rest.any(|r| r == c)));
    assert!(probed.wgsl.contains("for (var r = 0u; simtlab_probe_cond1(r < (x & 3u)); r++)"), "{}", probed.wgsl);
    // an explicit slot is honoured, and one the shader uses is refused
    let options = InstrumentOptions { slot: Some((0, 5)), ..Default::default() };
    assert_eq!(instrument("shapes.wgsl", &wgsl, "main", &options).unwrap().slot, (0, 5));
    let options = InstrumentOptions { slot: Some((0, 1)), ..Default::default() };
    assert!(instrument("shapes.wgsl", &wgsl, "main", &options).unwrap_err().to_string().contains("group 0 binding 1 is used"));
    // with every group taken, the next binding of the last one
    let options = InstrumentOptions { max_bind_groups: 1, ..Default::default() };
    assert_eq!(instrument("shapes.wgsl", &wgsl, "main", &options).unwrap().slot, (0, 2));
}

/// The source as it would be without hand-placed probes: `probe(site, cond)` unwrapped to
/// `cond`, and the probe's begin/end calls dropped.
fn unprobed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("probe(") {
        let call = at == 0 || !(rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') || rest[..at].ends_with("fn "));
        if !call {
            out.push_str(&rest[..at + 6]);
            rest = &rest[at + 6..];
            continue;
        }
        out.push_str(&rest[..at]);
        let args = &rest[at + 6..];
        let (mut depth, mut comma, mut close) = (0, 0, 0);
        for (i, c) in args.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    close = i;
                    break;
                }
                ')' => depth -= 1,
                ',' if depth == 0 && comma == 0 => comma = i,
                _ => {}
            }
        }
        out.push_str(args[comma + 1..close].trim());
        rest = &args[close + 1..];
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !["probe_begin(ids);", "probe_end();"].contains(&l.trim()) && !l.trim().starts_with("probe_records_after("))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn auto_instrumenting_simtlabs_own_kernels_gives_the_hand_probes_counts() {
    let Some((gpu, width)) = common::gpu_with_subgroups() else { return };
    let n = 1000u32;
    let mut rng = Rng::new(5);
    let trips: Vec<u32> = (0..n).map(|_| rng.range_u32(0, 40)).collect();
    let seeds = rng.vec_u32(n as usize);
    let values: Vec<u32> = (0..n).map(|_| rng.range_u32(0, 99)).collect();
    // (file, hand-probed condition, buffers in binding order)
    let loop_params = [n, 0, 1, 1, u32::MAX, 0];
    let if_params = [n, 40, 16, 0];
    type Buffers<'a> = Vec<(&'a str, &'a [u32], BufferKind)>;
    let cases: [(shader::Entry, &str, Buffers); 2] = [
        (
            shader::registry::micro::data_loop::MAIN,
            "r < count",
            vec![
                ("trips", &trips, BufferKind::Storage),
                ("seeds", &seeds, BufferKind::Storage),
                ("results", &[], BufferKind::Storage),
                ("params", &loop_params, BufferKind::Uniform),
            ],
        ),
        (
            shader::registry::micro::if_branch::MAIN,
            "v < params.threshold",
            vec![
                ("values", &values, BufferKind::Storage),
                ("results", &[], BufferKind::Storage),
                ("params", &if_params, BufferKind::Uniform),
            ],
        ),
    ];
    for (entry, condition, buffers) in cases {
        let file = entry.file.path;
        // the hand-probed kernel, through simtlab's own probe
        let kernel = gpu.kernel(entry, &["PROBE"]).unwrap();
        let gpu_buffers: Vec<_> = buffers
            .iter()
            .map(|(name, data, kind)| match data.is_empty() {
                true => gpu.buffer_zeroed::<u32>(name, n as usize, *kind).unwrap(),
                false => gpu.buffer(name, data, *kind).unwrap(),
            })
            .collect();
        let grid = gpu.grid(n as u64, 256).unwrap();
        let probe = ProbeRecords::new(&gpu, Some(width), 1, grid, 256).unwrap().unwrap();
        let mut slots: Vec<(u32, &dyn simtlab::gpu::Bind)> = gpu_buffers.iter().enumerate().map(|(i, b)| (i as u32, b as _)).collect();
        slots.push(probe.slot());
        let bind = kernel.bind_at(&gpu, &slots).unwrap();
        gpu.run(&[Step::dispatch(&kernel, &bind, grid)], false).unwrap();
        let hand = probe.read(&gpu).unwrap();
        let hand_results = gpu.read(&gpu_buffers[buffers.iter().position(|b| b.0 == "results").unwrap()]).unwrap();

        // the same kernel without its probes, instrumented automatically
        let plain = unprobed(&shader::preprocess(file, &[]).unwrap().text);
        assert!(!plain.contains("probe(") || plain.contains("fn probe("), "{plain}");
        let bindings = buffers
            .iter()
            .map(|(name, data, _)| {
                let data = if data.is_empty() { vec![0u32; n as usize] } else { data.to_vec() };
                (*name, BindingSpec::Bytes(bytemuck::cast_slice(&data).to_vec()))
            })
            .collect();
        let run = profile::profile(&gpu, &request(file, &plain, grid[0], bindings)).unwrap();
        let site = run
            .sites
            .iter()
            .position(|s| s.source == condition)
            .unwrap_or_else(|| panic!("{file}: no site '{condition}' in {:?}", run.sites));
        let auto = run.counts.totals()[site].counters();
        assert_eq!(auto, hand.sites[0], "{file}");
        assert!(auto.divergent > 0, "{file}: the inputs must diverge");
        assert_eq!(output(&run, "results"), hand_results, "{file}");
        assert!(run.outputs_identical);
        // beside it, the sites no hand placed: the bounds check, called functions
        assert!(run.sites.iter().any(|s| s.kind == SiteKind::Call && s.source.starts_with("mix(")), "{file}: {:?}", run.sites);
    }
}

#[test]
fn bad_input_is_an_error_that_names_what_is_wrong() {
    let options = InstrumentOptions::default();
    // WGSL that does not parse: naga's message at file:line:col
    match instrument("bad.wgsl", "@compute @workgroup_size(1)\nfn main() {\n    let x = 1u +;\n}\n", "main", &options).unwrap_err() {
        Error::Shader { file, line, column, .. } => assert_eq!((file.as_str(), line, column), ("bad.wgsl", 3, 17)),
        other => panic!("{other}"),
    }
    let straight = "@group(0) @binding(0) var<storage, read_write> d: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {\n    d[id.x] = d[id.x] * 2u;\n}\n";
    let e = instrument("straight.wgsl", straight, "main", &options).unwrap_err().to_string();
    assert!(e.contains("no branches"), "{e}");
    let e = instrument("straight.wgsl", straight, "nope", &options).unwrap_err().to_string();
    assert!(e.contains("'nope' is not in the shader") && e.contains("main"), "{e}");
    let vertex = "@vertex\nfn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {\n    if (i > 1u) { return vec4<f32>(1.0); }\n    return vec4<f32>(0.0);\n}\n";
    let e = instrument("vertex.wgsl", vertex, "vs", &options).unwrap_err().to_string();
    assert!(e.contains("'vs' is a Vertex shader") && e.contains("compute"), "{e}");
    let reserved = straight.replace("d[id.x] * 2u", "d[id.x] * 2u; if (id.x > 3u) { let simtlab_probe_x = 1u; }");
    let e = instrument("reserved.wgsl", &reserved, "main", &options).unwrap_err().to_string();
    assert!(e.starts_with("reserved.wgsl:4:") && e.contains("reserved for the probe"), "{e}");

    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let collatz = fixture("collatz.wgsl");
    let values = || ("values", BindingSpec::U32Random(64, 1));
    let steps = || ("steps", BindingSpec::U32Zero(64));
    let fails = |r: ProfileRequest| profile::profile(&gpu, &r).unwrap_err().to_string();
    // a missing binding is named with its WGSL type
    let e = fails(request("collatz.wgsl", &collatz, 1, vec![values()]));
    assert!(e.contains("binding 0:1 'steps' (var<storage, read_write> steps: array<u32>) is not given"), "{e}");
    // a mistyped one too
    let e = fails(request("collatz.wgsl", &collatz, 1, vec![values(), ("steps", BindingSpec::F32Zero(64))]));
    assert!(e.contains("'steps'") && e.contains("holds u32, which a f32 spec does not fill"), "{e}");
    let e = fails(request("collatz.wgsl", &collatz, 1, vec![values(), steps(), ("nothing", BindingSpec::U32Zero(4))]));
    assert!(e.contains("'nothing' names no binding") && e.contains("values (0:0)"), "{e}");
    // a uniform smaller than its type
    let shapes = fixture("shapes.wgsl");
    let e = fails(request("shapes.wgsl", &shapes, 1, vec![("data", BindingSpec::U32Zero(32)), ("params", BindingSpec::Bytes(vec![0; 4]))]));
    assert!(e.contains("'params'") && e.contains("needs at least 8 bytes; the spec gives 4"), "{e}");
    // sizes over the device's limits
    let max = gpu.caps().max_compute_workgroups_per_dimension;
    match profile::profile(&gpu, &request("collatz.wgsl", &collatz, max + 1, vec![values(), steps()])).unwrap_err() {
        Error::Limit { requested, limit, .. } => assert_eq!((requested, limit), (max as u64 + 1, max as u64)),
        other => panic!("{other}"),
    }
    let huge = (gpu.caps().max_storage_buffer_binding_size / 4 + 1) as usize;
    let e = fails(request("collatz.wgsl", &collatz, 1, vec![("values", BindingSpec::U32Zero(huge)), steps()]));
    assert!(e.contains("buffer 'values'") && e.contains("exceeds the limit"), "{e}");
    // resources other than buffers
    let texture = "@group(0) @binding(0) var tex: texture_2d<f32>;\n@group(0) @binding(1) var<storage, read_write> d: array<f32>;\n@compute @workgroup_size(8)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {\n    let v = textureLoad(tex, vec2<u32>(id.x, 0u), 0).x;\n    if (v > 0.5) { d[id.x] = v; }\n}\n";
    let e = fails(request("texture.wgsl", texture, 1, vec![("d", BindingSpec::F32Zero(8))]));
    assert!(e.contains("binding 0:0 'tex' (var tex: texture_2d<f32>) is a texture"), "{e}");
    // bad specs
    for (spec, why) in [
        ("u32:0:seq", "positive count"),
        ("i8:4:zero", "unknown form"),
        ("u32:4:seq:9", "wrong number of fields"),
        ("u32:4:random:x", "SEED"),
    ] {
        let e = spec.parse::<BindingSpec>().unwrap_err().to_string();
        assert!(e.contains(why), "{spec}: {e}");
    }
    assert_eq!("u32:3:seq".parse::<BindingSpec>().unwrap().bytes().unwrap(), bytemuck::cast_slice::<u32, u8>(&[0, 1, 2]));
}

#[test]
fn the_profiler_lives_in_the_apps_frame_loop_and_never_blocks() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("collatz.wgsl");
    let values = Rng::new(77).vec_u32(256);
    // the reference: the same inputs through `profile`
    let bytes = bytemuck::cast_slice(&values).to_vec();
    let reference = profile::profile(
        &gpu,
        &request("collatz.wgsl", &wgsl, 4, vec![("values", BindingSpec::Bytes(bytes)), ("steps", BindingSpec::U32Zero(256))]),
    )
    .unwrap();

    let device = gpu.device();
    let options = profile::ProfilerOptions { workgroups: [4, 1, 1], ..Default::default() };
    let mut probe = profile::Profiler::instrument(device, &wgsl, "main", &options).unwrap();
    assert_eq!(probe.group(), 1);
    assert_eq!(probe.sites(), &reference.sites[..]);
    let module =
        device.create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(probe.shader().into()) });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let input = gpu.buffer("values", &values, BufferKind::Storage).unwrap();
    let output = gpu.buffer_zeroed::<u32>("steps", 256, BufferKind::Storage).unwrap();
    let app_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: input.buffer.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: output.buffer.as_entire_binding() },
        ],
    });
    let probe_group = probe.bind_group_for(&pipeline);
    let mut frames = 0;
    let mut finished = Vec::new();
    let mut finished_last_frame = false;
    let start = std::time::Instant::now();
    while finished.len() < 2 {
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "the probe never finished");
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, Some(&app_group), &[]);
            pass.set_bind_group(probe.group(), Some(&probe_group), &[]);
            pass.dispatch_workgroups(4, 1, 1);
        }
        let resolved = probe.resolve(&mut encoder);
        assert_eq!(resolved, frames == 0 || finished_last_frame, "a copy is recorded exactly when the last one was taken");
        gpu.queue().submit([encoder.finish()]);
        frames += 1;
        let polled = std::time::Instant::now();
        finished_last_frame = false;
        if let Some(counts) = probe.try_finish().unwrap() {
            finished.push(counts);
            finished_last_frame = true;
        }
        assert!(polled.elapsed() < std::time::Duration::from_millis(500), "try_finish must not wait for the GPU");
    }
    // every frame's counts are those of one dispatch (the records are cleared in between)
    for counts in &finished {
        assert_eq!(counts.per_subgroup, reference.counts.per_subgroup);
    }
    assert_eq!(gpu.read(&output).unwrap(), output_of(&reference));
}

fn output_of(run: &profile::ProfileRun) -> Vec<u32> {
    output(run, "steps")
}

#[test]
fn the_command_line_writes_the_table_json_dump_and_heat_map() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let dir = common::scratch("profile-cli");
    let shader = format!("{}/tests/fixtures/profile/collatz.wgsl", env!("CARGO_MANIFEST_DIR"));
    let (json, dump, png) = (dir.join("p.json"), dir.join("steps.bin"), dir.join("h.png"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
        .args([
            "profile",
            &shader,
            "--workgroups",
            "2",
            "--bind",
            "values=u32:128:random:3",
            "--bind",
            "0:1=u32:128:zero",
            "--samples",
            "1",
        ])
        .args([
            "--json".as_ref(),
            json.as_os_str(),
            "--dump".as_ref(),
            format!("steps={}", dump.display()).as_ref(),
            "--heatmap".as_ref(),
            png.as_os_str(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("n % 2u == 0u") && stdout.contains("outputs: every writable binding identical"), "{stdout}");
    // the dump is the shader's result: Collatz steps computed on the host
    let steps: Vec<u32> = Rng::new(3)
        .vec_u32(128)
        .iter()
        .map(|v| {
            let (mut n, mut k) = (v % 1000 + 1, 0);
            while n != 1 {
                n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                k += 1;
            }
            k
        })
        .collect();
    assert_eq!(words(&std::fs::read(&dump).unwrap()), steps);
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = report["summary"]["sites"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let loop_row = rows.iter().find(|r| r["kind"] == "loop").unwrap();
    // the loop test runs once more than its body in every subgroup of 8: 16 subgroups
    let calls = rows.iter().find(|r| r["kind"] == "call").unwrap();
    assert_eq!(loop_row["evaluations"].as_u64().unwrap(), calls["evaluations"].as_u64().unwrap() + 16);
    assert_eq!(loop_row["taken_lanes"].as_u64().unwrap(), steps.iter().map(|&s| s as u64).sum::<u64>());
    assert!(std::fs::metadata(&png).unwrap().len() > 0);
    // a binding left out: an error naming it and its type, exit status 1
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
        .args(["profile", &shader, "--workgroups", "2", "--bind", "values=u32:128:random:3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'steps' (var<storage, read_write> steps: array<u32>) is not given"));
}

#[test]
fn the_drivers_statistics_are_read_or_their_absence_is_explained() {
    let gpu = common::gpu();
    let wgsl = fixture("collatz.wgsl");
    let source = shader::preprocess_text("collatz.wgsl", &wgsl, &[], &|_| None).unwrap();
    match gpu.driver_statistics(&source, "main", &[]) {
        // a driver with VK_KHR_pipeline_executable_properties: one executable with statistics
        Ok(stats) => {
            assert!(!stats.executables.is_empty() && !stats.executables[0].statistics.is_empty(), "{stats:?}");
            assert!(stats.registers().is_none_or(|r| (1..=255).contains(&r)), "{stats:?}");
        }
        Err(Error::Unsupported { what, hint, .. }) => {
            assert!(what.contains("register count"), "{what}");
            assert!(hint.contains("VK_KHR_pipeline_executable_properties") || hint.contains("Vulkan"), "{hint}");
            assert!(hint.contains("registers per thread"), "the hint says what to do instead, in the library's terms: {hint}");
        }
        Err(e) => panic!("{e}"),
    }
    // the profile carries the statistics or the reason, never neither
    let run = profile::profile(
        &gpu,
        &request(
            "collatz.wgsl",
            &wgsl,
            2,
            vec![("values", "u32:128:random:3".parse().unwrap()), ("steps", "u32:128:zero".parse().unwrap())],
        ),
    )
    .unwrap();
    assert!(run.driver_statistics.is_some() != run.driver_statistics_missing.is_some(), "{:?}", run.driver_statistics_missing);
}

/// `text` with CRLF line ends from line `from` (1-based) on.
fn crlf_from(text: &str, from: usize) -> String {
    text.split_inclusive('\n').enumerate().map(|(i, l)| if i + 1 >= from { l.replace('\n', "\r\n") } else { l.to_string() }).collect()
}

#[test]
fn crlf_and_mixed_line_ends_profile_exactly_as_lf() {
    let options = InstrumentOptions::default();
    for (file, entries) in [("shapes.wgsl", &["main", "tests"][..]), ("collatz.wgsl", &["main"][..])] {
        let lf = fixture(file);
        for entry in entries {
            let expected = instrument(file, &lf, entry, &options).unwrap().sites;
            for (ends, text) in [("CRLF", crlf_from(&lf, 1)), ("CRLF from line 12", crlf_from(&lf, 12))] {
                let sites = instrument(file, &text, entry, &options).unwrap_or_else(|e| panic!("{file} {entry} {ends}: {e}")).sites;
                assert_eq!(sites, expected, "{file} {entry} with {ends}");
            }
        }
    }
    // the bindings' declarations as written, too
    let lf = fixture("collatz.wgsl");
    let crlf = crlf_from(&lf, 1);
    let (module, info) = profile::parse("collatz.wgsl", &crlf).unwrap();
    let declarations: Vec<String> =
        profile::entry_bindings(&crlf, &module, &info, "main").unwrap().into_iter().map(|b| b.declaration).collect();
    assert_eq!(declarations, ["var<storage, read> values: array<u32>", "var<storage, read_write> steps: array<u32>"]);

    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let binds =
        || vec![("data", BindingSpec::U32Random(192, 9)), ("params", BindingSpec::Bytes(bytemuck::cast_slice(&[192u32, 0]).to_vec()))];
    let shapes = fixture("shapes.wgsl");
    let reference = profile::profile(&gpu, &request("shapes.wgsl", &shapes, 6, binds())).unwrap();
    for text in [crlf_from(&shapes, 1), crlf_from(&shapes, 12)] {
        let run = profile::profile(&gpu, &request("shapes.wgsl", &text, 6, binds())).unwrap();
        assert_eq!(run.sites, reference.sites);
        assert_eq!(run.counts, reference.counts);
        assert_eq!(run.summary, reference.summary);
        assert_eq!(run.outputs, reference.outputs);
        assert!(run.outputs_identical);
    }
}

#[test]
fn binding_sizes_are_checked_against_the_device_before_host_memory_is_taken() {
    let gpu = common::gpu();
    let collatz = fixture("collatz.wgsl");
    let limit = gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size);
    let steps = || ("steps", BindingSpec::U32Zero(64));
    // 2^40 elements (4 TiB): refused by size, nothing allocated
    for spec in [BindingSpec::U32Zero(1 << 40), BindingSpec::U32Seq((1 << 32) + 1), BindingSpec::U32Random(1 << 40, 1)] {
        match profile::profile(&gpu, &request("collatz.wgsl", &collatz, 1, vec![("values", spec.clone()), steps()])).unwrap_err() {
            Error::Limit { what, requested, limit: l, .. } => {
                assert!(what.contains("'values'"), "{what}");
                assert_eq!((requested, l), (spec.byte_len("values").unwrap(), limit), "{spec:?}");
            }
            other => panic!("{spec:?}: {other}"),
        }
    }
    // a count whose size in bytes does not fit 64 bits
    let e = profile::profile(&gpu, &request("collatz.wgsl", &collatz, 1, vec![("values", BindingSpec::U32Zero(usize::MAX)), steps()]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("'values'") && e.contains(&usize::MAX.to_string()), "{e}");
    // seq's values are u32: a longer sequence is refused where it is written
    let e = "u32:4294967297:seq".parse::<BindingSpec>().unwrap_err().to_string();
    assert!(e.contains("at most 4294967296"), "{e}");
    assert_eq!("u32:4294967296:seq".parse::<BindingSpec>().unwrap(), BindingSpec::U32Seq(1 << 32));

    // the command line: an error naming the binding, exit status 1 (no abort)
    let shader = format!("{}/tests/fixtures/profile/collatz.wgsl", env!("CARGO_MANIFEST_DIR"));
    for spec in ["values=u32:1099511627776:zero", "values=u32:4294967297:seq"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
            .args(["profile", &shader, "--workgroups", "1", "--bind", spec, "--bind", "steps=u32:64:zero"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{spec}: {stderr}");
        assert!(stderr.contains("'values'") || stderr.contains("at most 4294967296"), "{spec}: {stderr}");
    }
}

#[test]
fn a_loop_the_driver_cuts_short_makes_the_profile_say_it_is_not_trustworthy() {
    let gpu = common::gpu();
    let wgsl = "@group(0) @binding(0) var<storage, read> trips: array<u32>;\n@group(0) @binding(1) var<storage, read_write> done: array<u32>;\n@compute @workgroup_size(8)\nfn main(@builtin(global_invocation_id) id: vec3<u32>) {\n    var k = 0u;\n    while (k < trips[id.x]) {\n        k += 1u;\n    }\n    done[id.x] = k;\n}\n";
    let run = |trips: u32| {
        let binds = vec![("trips", BindingSpec::Bytes(bytemuck::cast_slice(&[trips; 8]).to_vec())), ("done", BindingSpec::U32Zero(8))];
        profile::profile(&gpu, &ProfileRequest { emulate: !gpu.caps().subgroups, ..request("loop.wgsl", wgsl, 1, binds) })
    };
    let short = run(1000).unwrap();
    assert_eq!(output(&short, "done"), [1000; 8]);
    assert_eq!(short.loop_limit_reached, None);
    let Some(limit) = gpu.loop_iteration_limit() else { return };
    let long = run(100_000).unwrap();
    let reached = long.loop_limit_reached.clone().expect("a loop of 100000 iterations on an adapter that stops at 65535");
    assert_eq!((reached.site, reached.line, reached.limit), (0, 6, limit));
    assert!(reached.iterations >= limit, "{reached:?}");
    assert!(reached.message.contains("line 6") && reached.message.contains(&limit.to_string()), "{}", reached.message);
    // it was cut: the shader did not compute what it says
    assert!(output(&long, "done").iter().all(|&k| k < 100_000), "{:?}", output(&long, "done"));
    // the JSON carries it
    let json = serde_json::to_value(&long).unwrap();
    assert_eq!(json["loop_limit_reached"]["limit"], limit);
}

#[test]
fn the_command_line_refuses_bad_options_before_the_gpu_runs() {
    let dir = common::scratch("profile-options");
    let shader = format!("{}/tests/fixtures/profile/collatz.wgsl", env!("CARGO_MANIFEST_DIR"));
    let simtlab = |extra: &[&str]| {
        // `steps` is left out: had the GPU run, that would be the error
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
            .args(["profile", &shader, "--workgroups", "1", "--bind", "values=u32:64:random:1"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    for (flag, value) in [("--samples", "0"), ("--regs", "0"), ("--width", "0"), ("--width", "129")] {
        let (code, stderr) = simtlab(&[flag, value]);
        assert_eq!(code, Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
    }
    let (code, stderr) = simtlab(&["--arch", "no-such-arch"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no-such-arch") && !stderr.contains("is not given"), "{stderr}");
    let (code, stderr) = simtlab(&["--dump", "nothing=x.bin"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("'nothing' names no binding") && stderr.contains("values, steps"), "{stderr}");
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let under_file = file.join("h.png");
    let (code, stderr) = simtlab(&["--heatmap", under_file.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("I/O error on") && stderr.contains("a-file"), "{stderr}");
    // the library refuses them too, before running
    let gpu = common::gpu();
    let collatz = fixture("collatz.wgsl");
    let partial = || request("collatz.wgsl", &collatz, 1, vec![("values", BindingSpec::U32Zero(64))]);
    let e = profile::profile(&gpu, &ProfileRequest { samples: 0, ..partial() }).unwrap_err().to_string();
    assert!(e.contains("samples") && e.contains("at least one"), "{e}");
    let e = profile::profile(&gpu, &ProfileRequest { width: Some(0), ..partial() }).unwrap_err().to_string();
    assert!(e.contains("1..=128"), "{e}");
}

#[test]
fn the_heat_map_goes_into_a_new_directory_and_a_failed_write_is_an_io_error() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let dir = common::scratch("profile-heatmap");
    let shader = format!("{}/tests/fixtures/profile/collatz.wgsl", env!("CARGO_MANIFEST_DIR"));
    let simtlab = |heatmap: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
            .args(["profile", &shader, "--workgroups", "1", "--bind", "values=u32:64:random:1", "--bind", "steps=u32:64:zero"])
            .args(["--samples".as_ref(), "1".as_ref(), "--heatmap".as_ref(), heatmap.as_os_str()])
            .output()
            .unwrap()
    };
    let png = dir.join("new/deeper/h.png");
    let out = simtlab(&png);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    if std::path::Path::new("/dev/full").exists() {
        let out = simtlab("/dev/full".as_ref());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("I/O error on /dev/full"), "{stderr}");
    }
}
