//! `remap::Remapper` inside an app-style frame loop: the app's own pipeline on its own device,
//! recorded into its own encoder, polled without blocking; the signatures of dispatch t order
//! dispatch t+1, and every remapped dispatch writes the bytes the shader as written writes.

mod common;

use simtlab::remap::{RemapUpdate, Remapper, RemapperOptions};
use std::time::{Duration, Instant};

const WGSL: &str = include_str!("fixtures/remap/scattered_loop.wgsl");
const ELEMENTS: u32 = 4096;
const WORKGROUPS: [u32; 3] = [ELEMENTS / 64, 1, 1];
const FRAMES: usize = 6;

fn storage(device: &wgpu::Device, label: &str, contents: &[u32]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::cast_slice(contents),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

fn pipeline(device: &wgpu::Device, wgsl: &str) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(wgsl.into()) });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn app_group(device: &wgpu::Device, pipeline: &wgpu::ComputePipeline, buffers: [&wgpu::Buffer; 3]) -> wgpu::BindGroup {
    let entries: Vec<_> =
        buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &entries })
}

fn identity(index: &[u32]) -> bool {
    index.iter().enumerate().all(|(i, &e)| i as u32 == e)
}

/// An app's frame loop over `FRAMES` dispatches of `wgsl` (bindings: 0 input, 1 output,
/// 2 work = [1]) through a [`Remapper`], remapping turned off before frame 4: every frame's
/// output is compared with the shader as written, and the index each dispatch read with the one
/// the remapper said it would use. Returns the updates.
fn app_loop(wgsl: &str, input: &[u32]) -> Vec<RemapUpdate> {
    let gpu = common::gpu();
    let (device, queue) = (gpu.device().clone(), gpu.queue().clone());
    let width = gpu.caps().subgroup_size.unwrap_or(8);
    let input_buffer = storage(&device, "input", input);
    let work = storage(&device, "work", &[1]);

    // the shader as written, once, with a plain pipeline
    let plain_out = storage(&device, "plain output", &vec![0; ELEMENTS as usize]);
    let plain = pipeline(&device, wgsl);
    let plain_group = app_group(&device, &plain, [&input_buffer, &plain_out, &work]);
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&plain);
        pass.set_bind_group(0, Some(&plain_group), &[]);
        pass.dispatch_workgroups(WORKGROUPS[0], WORKGROUPS[1], WORKGROUPS[2]);
    }
    queue.submit([encoder.finish()]);
    let expected = gpu.read_bytes(&plain_out, ELEMENTS as u64 * 4).unwrap();

    // the app: its own pipeline from the remapper's shader, its group and the remapper's
    let options = RemapperOptions { width, ..Default::default() };
    let mut remapper = Remapper::new(&device, wgsl, "main", WORKGROUPS, &options).unwrap();
    assert!(identity(remapper.index()));
    let remapped = pipeline(&device, remapper.shader());
    let out = storage(&device, "output", &vec![0; ELEMENTS as usize]);
    let group = app_group(&device, &remapped, [&input_buffer, &out, &work]);
    let remap_group = remapper.bind_group_for(&remapped);

    let mut updates = Vec::new();
    let started = Instant::now();
    for frame in 0..FRAMES {
        if frame == 4 {
            remapper.set_enabled(false);
            assert!(identity(remapper.index()), "off, the identity order is back");
        }
        let used = remapper.index().to_vec();
        let mut encoder = device.create_command_encoder(&Default::default());
        remapper.begin(&mut encoder);
        encoder.clear_buffer(&out, 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&remapped);
            pass.set_bind_group(0, Some(&group), &[]);
            pass.set_bind_group(remapper.group(), Some(&remap_group), &[]);
            pass.dispatch_workgroups(WORKGROUPS[0], WORKGROUPS[1], WORKGROUPS[2]);
        }
        let copied = remapper.end(&mut encoder);
        assert_eq!(copied, frame < 4, "frame {frame}: signatures are read while remapping is on");
        queue.submit([encoder.finish()]);
        remapper.after_submit();

        // the app's frame loop: poll, never wait, for at most a few seconds
        let deadline = Instant::now() + Duration::from_secs(5);
        while remapper.in_flight() && Instant::now() < deadline {
            match remapper.poll().unwrap() {
                Some(update) => updates.push(update),
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        assert!(!remapper.in_flight(), "frame {frame}: the signatures did not come back within 5 s");

        let bytes = gpu.read_bytes(&out, ELEMENTS as u64 * 4).unwrap();
        assert!(bytes == expected, "frame {frame}: the remapped dispatch wrote other bytes than the shader as written");
        let on_device: Vec<u32> = bytemuck::pod_collect_to_vec(&gpu.read_bytes(remapper.index_buffer(), ELEMENTS as u64 * 4).unwrap());
        assert!(on_device == used, "frame {frame}: the dispatch did not read the index the remapper said it would");
        match frame {
            0 => assert!(identity(&used), "the first dispatch runs in the identity order"),
            1..=3 => assert!(!identity(&used), "frame {frame}: the order follows the signatures of the frame before"),
            _ => assert!(identity(&used), "frame {frame}: off, the identity order"),
        }
    }
    eprintln!("{FRAMES} frames in {:.2} s; updates: {updates:?}", started.elapsed().as_secs_f64());
    assert_eq!(updates.iter().map(|u| u.dispatch).collect::<Vec<_>>(), [0, 1, 2, 3], "one update per dispatch read while on");
    let (first, second) = (&updates[0], &updates[1]);
    assert!(first.applied && first.classes > 1 && first.after > first.before, "{first:?}");
    // dispatch 1 ran in the new order: its own signatures show the efficiency predicted for it
    assert!((second.before - first.after).abs() < 1e-9, "dispatch 1 ran the order predicted at {}: {second:?}", first.after);
    assert!(!second.applied, "the same data needs no new order: {second:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    updates
}

#[test]
fn remapper_orders_each_dispatch_by_the_last_ones_paths_and_keeps_the_outputs() {
    let trips = simtlab::rng::Rng::new(39).vec_u32(ELEMENTS as usize);
    let first = &app_loop(WGSL, &trips)[0];
    assert!(first.after >= 0.8, "predicted SIMT efficiency: {first:?}");
}

#[test]
fn remapper_keeps_the_outputs_of_a_switch_and_a_tolerance_loop() {
    let mut rng = simtlab::rng::Rng::new(40);
    let kinds = rng.vec_u32(ELEMENTS as usize);
    let values: Vec<u32> = (0..ELEMENTS).map(|_| rng.next_f32().to_bits()).collect();
    for (name, wgsl, input) in [
        ("kinds_switch", include_str!("fixtures/remap/kinds_switch.wgsl"), kinds),
        ("newton_tolerance", include_str!("fixtures/remap/newton_tolerance.wgsl"), values),
    ] {
        let first = &app_loop(wgsl, &input)[0];
        eprintln!("{name}: predicted SIMT efficiency {:.3} -> {:.3}", first.before, first.after);
        assert!(first.after >= 0.8, "{name}: {first:?}");
    }
}

#[test]
fn remapper_errors_say_what_to_do() {
    let gpu = common::gpu();
    let device = gpu.device();
    let options = RemapperOptions::default();
    let no_branch = "@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    v[g.x] = v[g.x] * 2u;\n}\n";
    let cases: [(&str, [u32; 3], RemapperOptions, &str); 4] = [
        (WGSL, [0, 1, 1], options.clone(), "at least 1"),
        (WGSL, [1, 1, 1], RemapperOptions { width: 0, ..Default::default() }, "subgroup width"),
        (no_branch, [1, 1, 1], options.clone(), "nothing to gain"),
        (WGSL, [1, 1, 1], RemapperOptions { slot: Some((0, 7)), ..Default::default() }, "bind group of its own"),
    ];
    for (wgsl, workgroups, options, expected) in cases {
        match Remapper::new(device, wgsl, "main", workgroups, &options) {
            Err(e) => assert!(e.to_string().contains(expected), "{expected}: {e}"),
            Ok(_) => panic!("{expected}: accepted"),
        }
    }
}
