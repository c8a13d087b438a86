//! GPU context, buffers, errors and the micro kernels against their CPU references.

mod common;

use simtlab::gpu::shader::registry;
use simtlab::gpu::PreparedRun;
use simtlab::gpu::{BufferKind, GpuOptions, Step};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern, Prepared, RunOptions};
use simtlab::{Error, Gpu};

#[test]
fn devices_are_listed_with_measured_capabilities() {
    let reports = simtlab::gpu::survey(&GpuOptions::default()).unwrap();
    assert!(!reports.is_empty());
    let gpu = common::gpu();
    if let Some(w) = gpu.caps().subgroup_size {
        assert!(w.is_power_of_two() && (4..=128).contains(&w), "subgroup size {w}");
        assert!(w >= gpu.caps().subgroup_min_size.min(w) && w <= gpu.caps().subgroup_max_size.max(w));
    }
}

#[test]
fn unknown_adapter_is_a_clear_error() {
    let err = Gpu::new(&GpuOptions { adapter: Some("no-such-gpu-xyz".into()), ..Default::default() }).unwrap_err();
    assert!(matches!(err, Error::NoAdapter { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("no-such-gpu-xyz") && text.contains("`adapter`"), "{text}");
}

#[test]
fn over_limit_buffer_is_an_error_not_a_panic() {
    let gpu = common::gpu();
    let too_big = gpu.caps().max_storage_buffer_binding_size / 4 + 1;
    let err = gpu.buffer_zeroed::<u32>("huge", too_big as usize, BufferKind::Storage).unwrap_err();
    match err {
        Error::Limit { requested, limit, .. } => assert!(requested > limit),
        other => panic!("expected a limit error, got {other}"),
    }
    let err = gpu.grid(u64::MAX / 2, 256).unwrap_err();
    assert!(err.to_string().contains("split the problem"), "{err}");
}

#[test]
fn buffers_round_trip() {
    let gpu = common::gpu();
    let data: Vec<u32> = simtlab::rng::Rng::new(3).vec_u32(1001);
    let b = gpu.buffer("rt", &data, BufferKind::Storage).unwrap();
    assert_eq!(gpu.read(&b).unwrap(), data);
}

fn check_micro(gpu: &Gpu, cfg: &MicroConfig) {
    let input = micro::generate(cfg).unwrap();
    let expected = micro::reference(cfg, &input);
    let run = Prepared::new(gpu, cfg, &input, RunOptions::default()).unwrap();
    run.dispatch(gpu).unwrap();
    let got = run.results(gpu).unwrap();
    assert_eq!(got.len(), expected.len());
    let bad = got.iter().zip(&expected).position(|(g, e)| g != e);
    assert!(bad.is_none(), "{cfg:?}: first mismatch at {bad:?}");
    // the inputs are not degenerate: outputs differ from each other
    assert!(expected.iter().any(|&x| x != expected[0]) || cfg.n == 1);
}

#[test]
fn micro_kernels_equal_cpu_reference_at_odd_sizes() {
    let gpu = common::gpu();
    for (k, n) in [1usize, 255, 1000, 4097, 70_001].into_iter().enumerate() {
        for distribution in [Distribution::Uniform, Distribution::OneLong, Distribution::Random, Distribution::Sorted] {
            let cfg = MicroConfig { n, distribution, seed: 10 + k as u64, long: 64, short: 3, ..Default::default() };
            check_micro(&gpu, &cfg);
        }
        for p in [0.0, 0.3, 1.0] {
            let cfg = MicroConfig {
                pattern: Pattern::If,
                distribution: Distribution::Random,
                n,
                probability: p,
                heavy: 40,
                seed: 20 + k as u64,
                ..Default::default()
            };
            check_micro(&gpu, &cfg);
        }
    }
}

#[test]
fn redirected_loop_gives_identical_outputs() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 10_000, long: 100, short: 2, ..Default::default() };
    let input = micro::generate(&cfg).unwrap();
    let expected = micro::reference(&cfg, &input);
    // thread i works on element order[i]: longest trips first
    let mut order: Vec<u32> = (0..cfg.n as u32).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(input.primary[i as usize]));
    let run = Prepared::new(&gpu, &cfg, &input, RunOptions { remap: Some(&order), ..Default::default() }).unwrap();
    run.dispatch(&gpu).unwrap();
    assert_eq!(run.results(&gpu).unwrap(), expected);
}

#[test]
fn bench_record_carries_check_divergence_and_environment() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 5000, long: 40, short: 4, ..Default::default() };
    let rec = micro::bench(&gpu, &cfg, &simtlab::harness::Protocol { warmup: 1, samples: 3 }).unwrap();
    assert!(rec.check.passed && rec.check.checked == 5000);
    assert_eq!(rec.stats.samples.len(), 3);
    assert!(rec.stats.min <= rec.stats.median && rec.stats.median <= rec.stats.max && rec.stats.min > 0.0);
    let d = rec.divergence.unwrap();
    // one long lane per 32 threads: a subgroup of width W < 32 diverges with probability W/32
    let w = gpu.caps().subgroup_size.unwrap_or(cfg.group) as f64;
    let expected = (w / cfg.group as f64).min(1.0);
    assert!((d.divergence_ratio - expected).abs() < 0.06, "{d:?}, expected about {expected}");
    assert!(d.simt_efficiency < 0.8);
    assert_eq!(rec.environment.adapter, gpu.info().name);
    let json = serde_json::to_string(&rec).unwrap();
    let back: simtlab::harness::Record = serde_json::from_str(&json).unwrap();
    assert_eq!(back.schema, simtlab::harness::SCHEMA_VERSION);
}

#[test]
fn short_timed_runs_repeat_to_the_minimum_sample_time_when_asked() {
    let gpu = Gpu::new(&GpuOptions::from_env()).unwrap();
    if !gpu.caps().timestamps {
        eprintln!("no timestamps on {}: repetition applies to device-timed runs only", gpu.adapter_name());
        return;
    }
    // relaunch: workgroup 0 adds 1 to word 2 per dispatch, so the word counts the runs
    let kernel = gpu.kernel(registry::pt::capability::RELAUNCH, &[]).unwrap();
    let result = gpu.buffer_zeroed::<u32>("runs", 4, BufferKind::Storage).unwrap();
    let bind = kernel.bind(&gpu, &[&result]).unwrap();
    let steps = [simtlab::gpu::Step::dispatch(&kernel, &bind, [1, 1, 1])];
    let runs = |gpu: &Gpu| gpu.read(&result).unwrap()[2];

    let alone = gpu.run(&steps, true).unwrap();
    assert_eq!(runs(&gpu), 1, "off by default: one run");
    gpu.set_min_timed_seconds(0.02);
    assert_eq!(gpu.min_timed_seconds(), 0.02);
    let repeated = gpu.run(&steps, true).unwrap();
    let copies = runs(&gpu) - 2; // the first run of the call, then the repetitions
    assert!(copies >= 2, "{copies} repetitions of a {} s run", alone.seconds);
    assert!(copies <= 1000);
    assert!(repeated.seconds > 0.0 && repeated.seconds < 0.02, "time per repetition: {}", repeated.seconds);
    // untimed runs never repeat
    gpu.run(&steps, false).unwrap();
    assert_eq!(runs(&gpu), 2 + copies + 1);
    gpu.set_min_timed_seconds(f64::NAN);
    assert_eq!(gpu.min_timed_seconds(), 0.0, "a bad value turns it off");
}

#[test]
fn micro_sizes_past_memory_are_refused_before_generating() {
    let gpu = common::gpu();
    let p = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let t0 = std::time::Instant::now();
    for pattern in [Pattern::Loop, Pattern::If] {
        let distribution = if pattern == Pattern::If { Distribution::Random } else { Distribution::OneLong };
        let cfg = MicroConfig { pattern, distribution, n: u32::MAX as usize, ..Default::default() };
        let err = micro::bench(&gpu, &cfg, &p).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Limit { requested, limit, .. } if requested == 4 * u32::MAX as u64 && requested > limit), "{text}");
        assert!(text.contains("`n=4294967295`") && text.contains("lower `n`"), "{text}");
        // the generator alone refuses what the host cannot hold
        if simtlab::harness::footprint::host_limit() < cfg.footprint().host {
            let err = micro::generate(&cfg).unwrap_err();
            assert!(matches!(err, Error::Limit { .. }) && err.to_string().contains("host memory"), "{err}");
        }
    }
    assert!(t0.elapsed().as_secs() < 10, "refused before generating: {:?}", t0.elapsed());
}

#[test]
fn micro_errors_name_options_not_structs() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 1000, ..Default::default() };
    let input = micro::generate(&cfg).unwrap();
    let tile = micro::TileSort { lo: 16, width: 50, classes: 10, workgroup: 0, per_thread: 4 };
    let err = Prepared::new(&gpu, &cfg, &input, RunOptions { tile: Some(tile), ..Default::default() }).err().unwrap().to_string();
    assert!(err.contains("invalid tile_workgroup: ") && err.contains("0 invocations × 4 elements"), "{err}");
    assert!(!err.contains("TileSort") && !err.contains('{'), "{err}");
    let err = MicroConfig { short: 9, long: 8, ..cfg.clone() }.validate().unwrap_err().to_string();
    assert!(err.contains("invalid short/long: short 9 is above long 8"), "{err}");
    if let Some(limit) = gpu.loop_iteration_limit() {
        // lavapipe would cut these loops short: an error, not a failed check
        let long = MicroConfig { long: limit as u32 + 1, ..cfg.clone() };
        let err = micro::bench(&gpu, &long, &simtlab::harness::Protocol { warmup: 0, samples: 1 }).unwrap_err();
        assert!(matches!(err, Error::Limit { .. }) && err.to_string().contains("lower `long`"), "{err}");
    }
}

/// A kernel over two bind groups: group 0 holds buffers, group 1 a buffer, a uniform and a
/// storage texture, bound by number; the texture is then copied by a step and read back.
const TWO_GROUPS: &str = "
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(1) @binding(0) var<storage, read> b: array<u32>;
@group(1) @binding(1) var tex: texture_storage_2d<r32uint, write>;
@group(1) @binding(2) var<uniform> k: vec4<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let v = a[i] * k.x + b[i];
    out[i] = v;
    textureStore(tex, vec2<u32>(i % 64u, i / 64u), vec4<u32>(v ^ k.y, 0u, 0u, 1u));
}
";

fn two_group_kernel(gpu: &Gpu) -> simtlab::gpu::Kernel {
    let source = simtlab::gpu::shader::preprocess_text("two_groups.wgsl", TWO_GROUPS, &[], &|_| None).unwrap();
    gpu.compile(&source, "two_groups", "main", &[]).unwrap()
}

#[test]
fn a_kernel_binds_every_group_it_uses() {
    let gpu = common::gpu();
    let kernel = two_group_kernel(&gpu);
    let numbers: Vec<u32> = kernel.groups().iter().map(|g| g.group).collect();
    assert_eq!(numbers, [0, 1]);
    assert_eq!((kernel.bindings(0), kernel.bindings(1)), (&[0, 1][..], &[0, 1, 2][..]));

    let n = 256usize;
    let a: Vec<u32> = simtlab::rng::Rng::new(11).vec_u32(n);
    let b: Vec<u32> = simtlab::rng::Rng::new(12).vec_u32(n);
    let k = [2_654_435_761u32, 0x5a5a_5a5a, 0, 0];
    let expected: Vec<u32> = a.iter().zip(&b).map(|(&x, &y)| x.wrapping_mul(k[0]).wrapping_add(y)).collect();

    let a_buf = gpu.buffer("a", &a, BufferKind::Storage).unwrap();
    let out = gpu.buffer_zeroed::<u32>("out", n, BufferKind::Storage).unwrap();
    let b_buf = gpu.buffer("b", &b, BufferKind::Storage).unwrap();
    let k_buf = gpu.buffer("k", &k, BufferKind::Uniform).unwrap();
    let texture = |usage| {
        gpu.device().create_texture(&wgpu::TextureDescriptor {
            label: Some("two groups"),
            size: wgpu::Extent3d { width: 64, height: 4, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R32Uint,
            usage: usage | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        })
    };
    let written = texture(wgpu::TextureUsages::STORAGE_BINDING);
    let copied = texture(wgpu::TextureUsages::COPY_DST);
    let view = written.create_view(&Default::default());

    let group0 = kernel.bind(&gpu, &[&a_buf, &out]).unwrap();
    let group1 = kernel
        .bind_group(
            &gpu,
            1,
            &[(2, k_buf.buffer.as_entire_binding()), (0, b_buf.buffer.as_entire_binding()), (1, wgpu::BindingResource::TextureView(&view))],
        )
        .unwrap();
    let groups = [(0, &group0), (1, &group1)];
    let steps = [Step::dispatch_groups(&kernel, &groups, [4, 1, 1]), Step::copy_texture(&written, &copied)];
    gpu.run(&steps, false).unwrap();
    let got = gpu.read(&out).unwrap();
    assert_eq!(got, expected);
    assert!(expected.iter().any(|&v| v != expected[0]), "the inputs are not degenerate");

    // the copied texture holds every value with k.y mixed in (rows of 64 texels = 256 bytes)
    let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("texels"),
        size: (n * 4) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        copied.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(256), rows_per_image: Some(4) },
        },
        copied.size(),
    );
    gpu.queue().submit([encoder.finish()]);
    let texels: Vec<u32> = bytemuck::pod_collect_to_vec(&gpu.read_bytes(&staging, (n * 4) as u64).unwrap());
    let mixed: Vec<u32> = expected.iter().map(|v| v ^ k[1]).collect();
    assert_eq!(texels, mixed);
}

#[test]
fn a_missing_binding_of_any_group_is_named_with_its_group() {
    let gpu = common::gpu();
    let kernel = two_group_kernel(&gpu);
    let b = gpu.buffer("b", &[1u32; 64], BufferKind::Storage).unwrap();
    let k = gpu.buffer("k", &[1u32; 4], BufferKind::Uniform).unwrap();
    let err = kernel.bind_group(&gpu, 1, &[(0, b.buffer.as_entire_binding()), (2, k.buffer.as_entire_binding())]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(&err, Error::Invalid { what, .. } if what == "bindings"), "{text}");
    assert!(text.contains("two_groups uses group 1 binding 1, which was not given"), "{text}");
    // group 0's message stays as it was
    let text = kernel.bind(&gpu, &[&b]).unwrap_err().to_string();
    assert!(text.contains("two_groups uses binding 1, which was not given"), "{text}");
    // a group the pipeline does not have
    let text = kernel.bind_group(&gpu, 2, &[]).unwrap_err().to_string();
    assert!(text.contains("has no bind group 2") && text.contains("[0, 1]"), "{text}");
}
