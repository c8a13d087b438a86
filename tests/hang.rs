//! A kernel that runs far past the timeout: the caller gets `Error::Timeout` within about the
//! timeout, and dropping the context afterwards does not wait for the kernel either.

mod common;

use simtlab::gpu::{shader, BufferKind, GpuBuffer, Kernel, Step};
use simtlab::Gpu;
use std::time::{Duration, Instant};

/// 65535 × 64 invocations of 60000 dependent steps each: minutes on a CPU adapter.
const SPIN: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = id.x;
    for (var i = 0u; i < 60000u; i++) { x = x * 1664525u + 1013904223u; }
    out[id.x] = x;
}";

/// Runs SPIN over `workgroups` workgroups with a 1 s timeout and checks that the timeout is
/// reported before `bound`; returns what the dispatch used, for the caller to go on with.
fn spin_past_a_one_second_timeout(gpu: &mut Gpu, workgroups: u32, bound: Duration) -> (Kernel, GpuBuffer<u32>, wgpu::BindGroup) {
    gpu.set_timeout(Duration::from_secs(1));
    let source = shader::preprocess_text("spin.wgsl", SPIN, &[], &|_| None).unwrap();
    let kernel = gpu.compile(&source, "spin", "main", &[]).unwrap();
    let out = gpu.buffer_zeroed::<u32>("out", workgroups as usize * 64, BufferKind::Storage).unwrap();
    let bind = kernel.bind(gpu, &[&out]).unwrap();
    let t0 = Instant::now();
    let err = gpu.run(&[Step::dispatch(&kernel, &bind, [workgroups, 1, 1])], false).unwrap_err();
    let reported = t0.elapsed();
    assert!(matches!(err, simtlab::Error::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("within 1 s"), "{err}");
    assert!(reported < bound, "reported after {reported:?}");
    (kernel, out, bind)
}

#[test]
fn a_kernel_past_the_timeout_is_reported_within_it_and_the_context_drops_at_once() {
    let mut gpu = common::gpu();
    if gpu.info().device_type != wgpu::DeviceType::Cpu {
        eprintln!("skipped: the spin kernel is sized for a CPU adapter");
        return;
    }
    let (kernel, out, bind) = spin_past_a_one_second_timeout(&mut gpu, 65535, Duration::from_secs(5));
    let t1 = Instant::now();
    drop((bind, out, kernel, gpu));
    assert!(t1.elapsed() < Duration::from_secs(2), "dropping waited {:?} for the kernel", t1.elapsed());
}

/// wgpu's GL backend runs commands inside `queue.submit`, and llvmpipe returns from a dispatch
/// only when it ends: 8192 × 64 invocations of 60000 steps take 5–20 s there. The caller still
/// gets `Error::Timeout` within about the timeout, later work on that device fails at once,
/// and dropping everything does not wait for the kernel.
#[test]
fn a_kernel_past_the_timeout_on_gl_is_reported_within_it() {
    let options = simtlab::GpuOptions { backend: Some("gl".into()), ..Default::default() };
    let mut gpu = match simtlab::Gpu::new(&options) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("skipped: no GL adapter ({e})");
            return;
        }
    };
    if gpu.info().device_type != wgpu::DeviceType::Cpu {
        eprintln!("skipped: the spin kernel is sized for a CPU adapter");
        return;
    }
    let (kernel, out, bind) = spin_past_a_one_second_timeout(&mut gpu, 8192, Duration::from_secs(4));
    let t1 = Instant::now();
    let again = gpu.run(&[Step::dispatch(&kernel, &bind, [1, 1, 1])], false).unwrap_err();
    assert!(again.to_string().contains("did not finish within its timeout"), "{again}");
    assert!(gpu.buffer_zeroed::<u32>("more", 4, BufferKind::Storage).is_err());
    drop((bind, out, kernel, gpu));
    assert!(t1.elapsed() < Duration::from_secs(2), "went on after {:?} behind the kernel", t1.elapsed());
}
