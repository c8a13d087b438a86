use super::*;
use crate::error::Error;

fn arch(name: &str) -> &'static Arch {
    find_arch(name).unwrap()
}

fn run(name: &str, threads: u32, registers: u32, shared: u32) -> Occupancy {
    calculate(arch(name), Launch::new(threads, registers, shared)).unwrap()
}

/// Runs the calculator and checks the resident blocks and what limits them.
fn expect(name: &str, threads: u32, registers: u32, shared: u32, blocks: u32, limited_by: Limiter) -> Occupancy {
    let r = run(name, threads, registers, shared);
    assert_eq!(
        (r.active_blocks_per_sm, r.limited_by),
        (blocks, limited_by),
        "{name}, {threads} threads, {registers} registers, {shared} B"
    );
    r
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

// --- Ryoo et al. PPoPP'08 section 4: tiled matmul on the GeForce 8800 GTX ---

#[test]
fn ryoo_matmul_g80_ten_registers_fills_the_sm() {
    let r = expect("g80", 256, 10, 0, 3, Limiter::Warps);
    assert_eq!(r.active_threads_per_sm, 768);
    assert_eq!(r.active_warps_per_sm, 24);
    assert_eq!(r.occupancy, 1.0);
    assert!(r.tied_limits.contains(&Limiter::Registers));
}

#[test]
fn ryoo_matmul_g80_eleven_registers_drops_a_block() {
    // 3 blocks x 256 threads x 11 registers = 8448 > 8192 registers.
    let r = expect("g80", 256, 11, 0, 2, Limiter::Registers);
    assert_eq!(r.active_threads_per_sm, 512);
    assert!(close(r.occupancy, 2.0 / 3.0, 1e-12));
}

// --- Carrillo et al. section 4/5: if-kernel 6 registers, else-kernel 13, 256 threads ---

#[test]
fn carrillo_kernels_on_g80() {
    let else_kernel = run("cc1.0", 256, 13, 0);
    assert_eq!(else_kernel.active_blocks_per_sm, 2);
    assert!(close(else_kernel.occupancy, 0.67, 0.005));
    assert_eq!(else_kernel.limited_by, Limiter::Registers);
    let if_kernel = run("cc1.0", 256, 6, 0);
    assert_eq!(if_kernel.occupancy, 1.0);
}

#[test]
fn cc1_registers_are_allocated_per_block_with_even_warps() {
    // 3 warps round up to 4: 4 x 32 x 10 = 1280 -> 1280 (multiple of 256); 8192/1280 = 6,
    // capped by warps (24/3 = 8) and blocks (8): 6 blocks, 18 warps.
    let r = expect("cc1.0", 96, 10, 0, 6, Limiter::Registers);
    assert_eq!(r.allocated_registers_per_block, 1280);
    // CC 1.3, unit 512: 3 warps -> 4 x 32 x 10 = 1280 -> 1536; 16384/1536 = 10 -> blocks cap 8.
    let r = expect("cc1.3", 96, 10, 0, 8, Limiter::Blocks);
    assert_eq!(r.allocated_registers_per_block, 1536);
    // 512 threads x 17 registers = 8704 registers: no block fits in 8192.
    let r = expect("cc1.0", 512, 17, 0, 0, Limiter::DoesNotLaunch);
    assert!(r.reason.as_deref().unwrap().contains("8704"));
}

// --- Cases derived from NVIDIA's documented limits ---

#[test]
fn cc2_needs_at_most_20_registers_for_full_occupancy() {
    // Fermi: 32 K registers, 48 warps, registers per warp in units of 64.
    // 20 regs: 640 per warp, 51 warps fit -> 50 (granularity 2) -> 6 blocks of 8 warps = 100 %.
    let r = run("cc2.0", 256, 20, 0);
    assert_eq!(r.active_blocks_per_sm, 6);
    assert_eq!(r.occupancy, 1.0);
    // 21 regs: 672 -> 704 per warp, 46 warps fit -> 5 blocks = 40 warps = 83.3 %.
    let r = expect("cc2.0", 256, 21, 0, 5, Limiter::Registers);
    assert!(close(r.occupancy, 40.0 / 48.0, 1e-12));
    // 64-thread blocks: 8 resident blocks of 2 warps = 16 of 48 warps.
    let r = expect("cc2.0", 64, 16, 0, 8, Limiter::Blocks);
    assert!(close(r.occupancy, 1.0 / 3.0, 1e-12));
}

#[test]
fn cc8_0_register_and_shared_memory_limits() {
    // A100: 64 K registers, 64 warps. 32 regs/thread -> full; 64 -> 32 warps.
    assert_eq!(run("a100", 256, 32, 0).occupancy, 1.0);
    let r = expect("a100", 256, 64, 0, 4, Limiter::Registers);
    assert_eq!(r.occupancy, 0.5);
    // 48 KB + 1 KB reserved = 50176 B per block; 164 KB / 50176 = 3 blocks of 4 warps.
    let r = expect("cc8.0", 128, 32, 48 * 1024, 3, Limiter::SharedMemory);
    assert_eq!(r.allocated_shared_memory_per_block, 50176);
    assert!(close(r.occupancy, 12.0 / 64.0, 1e-12));
    // Small blocks: 32 resident blocks of one warp = 50 %.
    let r = expect("cc8.0", 32, 16, 0, 32, Limiter::Blocks);
    assert_eq!(r.occupancy, 0.5);
}

#[test]
fn cc9_0_hopper_cases() {
    // 1024 threads x 32 regs: two blocks fill the 64 warps.
    let r = expect("h100", 1024, 32, 0, 2, Limiter::Warps);
    assert_eq!(r.occupancy, 1.0);
    // 64 regs: 2048 per warp, 32 warps fit -> one block.
    let r = expect("h100", 1024, 64, 0, 1, Limiter::Registers);
    assert_eq!(r.occupancy, 0.5);
    // 65 regs: 2304 per warp x 32 warps = 73728 > 65536 registers per block.
    let r = run("h100", 1024, 65, 0);
    assert_eq!(r.limited_by, Limiter::DoesNotLaunch);
    assert_eq!(r.occupancy, 0.0);
    assert!(r.reason.as_deref().unwrap().contains("73728"));
    // 100 KB + 1 KB per block: 228 KB holds 2 blocks.
    expect("cc9.0", 128, 32, 100 * 1024, 2, Limiter::SharedMemory);
    // 227 KB is the per-block maximum; 228 KB does not launch.
    assert_eq!(run("cc9.0", 128, 32, 227 * 1024).active_blocks_per_sm, 1);
    let r = run("cc9.0", 128, 32, 228 * 1024);
    assert_eq!(r.limited_by, Limiter::DoesNotLaunch);
    assert!(r.reason.as_deref().unwrap().contains("per-block maximum"));
}

#[test]
fn shared_memory_limited_on_g80() {
    // 5000 B rounds to 5120 (unit 512): 16 KB / 5120 = 3 blocks of 4 warps = 50 %.
    let r = expect("g80", 128, 8, 5000, 3, Limiter::SharedMemory);
    assert_eq!(r.allocated_shared_memory_per_block, 5120);
    assert_eq!(r.occupancy, 0.5);
    assert_eq!(run("g80", 128, 8, 16 * 1024 + 1).limited_by, Limiter::DoesNotLaunch);
}

// --- AMD ---

#[test]
fn amd_waves_per_simd_from_vgprs() {
    let gcn = arch("gcn");
    assert_eq!(gcn.warps_per_register_bank(24), 10);
    assert_eq!(gcn.warps_per_register_bank(84), 3); // 84 -> 84, 256/84 = 3
    assert_eq!(gcn.warps_per_register_bank(128), 2);
    assert_eq!(arch("cdna3").warps_per_register_bank(128), 4); // 512/128
    assert_eq!(arch("cdna2").warps_per_register_bank(20), 8); // capped at 8
    assert_eq!(arch("rdna2").warps_per_register_bank(40), 16); // 40 -> 48, 1024/48 = 21 -> 16
    assert_eq!(arch("rdna3").warps_per_register_bank(100), 12); // 100 -> 120, 1536/120 = 12
    assert_eq!(arch("rdna1").warps_per_register_bank(8), 20);

    // GCN, 256 threads = 4 waves, 64 VGPRs: 4 waves per SIMD, 16 per CU -> 4 workgroups, 40 %.
    let r = expect("gcn", 256, 64, 0, 4, Limiter::Registers);
    assert_eq!(r.active_warps_per_sm, 16);
    assert!(close(r.occupancy, 0.4, 1e-12));
    // 1024 threads at 256 VGPRs: 16 waves, but only one wave per SIMD fits.
    assert_eq!(run("gcn", 1024, 256, 0).limited_by, Limiter::DoesNotLaunch);
    // Single-wave workgroups need no barrier, so only wave slots bound them.
    let r = run("gcn", 64, 16, 0);
    assert_eq!(r.active_blocks_per_sm, 40);
    assert_eq!(r.occupancy, 1.0);
    // Two-wave workgroups are bound by the 16 barriers.
    expect("gcn", 128, 16, 0, 16, Limiter::Blocks);
}

// --- Errors ---

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let g80 = arch("g80");
    assert!(matches!(calculate(g80, Launch::new(0, 10, 0)), Err(Error::Invalid { .. })));
    assert!(matches!(calculate(g80, Launch::new(513, 10, 0)), Err(Error::Limit { requested: 513, limit: 512, .. })));
    assert!(matches!(calculate(g80, Launch::new(256, 125, 0)), Err(Error::Limit { requested: 125, limit: 124, .. })));
    assert!(calculate(arch("cc8.0"), Launch::new(256, 256, 0)).is_err());
    assert!(calculate(arch("cc8.0"), Launch::new(u32::MAX, u32::MAX, u32::MAX)).is_err());
    // Huge shared memory does not overflow.
    assert_eq!(run("cc8.0", 1, 0, u32::MAX).limited_by, Limiter::DoesNotLaunch);
    let message = find_arch("cc4.2").unwrap_err().to_string();
    assert!(message.contains("cc4.2"));
    assert!(message.contains("cc1.0") && message.contains("cc9.0") && message.contains("rdna3"));
    assert!(threads_curve(g80, Launch::new(0, 1, 0)).is_err());
}

#[test]
fn arch_names_and_aliases() {
    assert_eq!(arch("G80").name, "cc1.0");
    assert_eq!(arch("8.0").name, "cc8.0");
    assert_eq!(arch("sm_86").name, "cc8.6");
    assert_eq!(arch("sm90").name, "cc9.0");
    assert_eq!(arch("H200").name, "cc9.0");
    assert_eq!(arch("MI300X").name, "cdna3");
    assert_eq!(arch("cc1.0").sm_count, 16);
    assert_eq!(arch("h100").sm_count, 132);
    for required in [
        "cc1.0", "cc1.1", "cc1.2", "cc1.3", "cc2.0", "cc3.5", "cc5.2", "cc6.0", "cc7.0", "cc7.5", "cc8.0", "cc8.6", "cc8.9", "cc9.0",
        "gcn", "cdna2", "cdna3", "rdna1", "rdna2", "rdna3",
    ] {
        assert_eq!(arch(required).name, required);
    }
}

#[test]
fn presets_are_consistent() {
    for a in ARCHS {
        assert_eq!(a.max_threads_per_sm, a.max_warps_per_sm * a.threads_per_warp, "{}", a.name);
        assert!(a.max_threads_per_block / a.threads_per_warp <= a.max_warps_per_sm, "{}", a.name);
        assert!(a.max_registers_per_block <= a.registers_per_sm, "{}", a.name);
        assert_eq!(a.registers_per_sm % a.register_banks(), 0, "{}", a.name);
        assert!(a.max_shared_memory_per_block + a.reserved_shared_memory_per_block <= a.shared_memory_per_sm, "{}", a.name);
        // The smallest launch reaches the block or warp cap.
        let r = calculate(a, Launch::new(a.threads_per_warp, 1, 0)).unwrap();
        assert!(r.active_blocks_per_sm > 0, "{}", a.name);
        // Every preset has a full-occupancy configuration.
        let full = (1..=a.max_threads_per_block / a.threads_per_warp)
            .any(|w| calculate(a, Launch::new(w * a.threads_per_warp, 8, 0)).unwrap().occupancy == 1.0);
        assert!(full, "{}", a.name);
    }
}

// --- Curves ---

#[test]
fn curves_are_monotone_in_registers_and_shared_memory() {
    for a in ARCHS {
        let launch = Launch::new(a.threads_per_warp * 4, 16, 0);
        let curves = occupancy_curves(a, launch).unwrap();
        for curve in [&curves.registers_per_thread, &curves.shared_memory_per_block] {
            assert!(curve.points.windows(2).all(|w| w[1].1 <= w[0].1), "{} {:?} not monotone", a.name, curve.axis);
            assert!(curve.points.iter().all(|&(_, o)| (0.0..=1.0).contains(&o)));
        }
        assert_eq!(curves.registers_per_thread.points.len(), a.max_registers_per_thread as usize);
        assert_eq!(curves.threads_per_block.points.len(), (a.max_threads_per_block / a.threads_per_warp) as usize);
        assert_eq!(curves.shared_memory_per_block.points[0].0, 0);
    }
}

#[test]
fn curves_mark_the_current_point() {
    let g80 = arch("g80");
    let curves = occupancy_curves(g80, Launch::new(256, 11, 0)).unwrap();
    let r = &curves.registers_per_thread;
    let i = r.current_index.unwrap();
    assert_eq!(r.points[i], (11, 2.0 / 3.0));
    assert_eq!(r.current, (11, 2.0 / 3.0));
    assert_eq!(r.points[9], (10, 1.0));
    let t = &curves.threads_per_block;
    assert_eq!(t.points[t.current_index.unwrap()].0, 256);
    // Off-grid values still report their own occupancy.
    let odd = threads_curve(g80, Launch::new(100, 10, 0)).unwrap();
    assert_eq!(odd.current_index, None);
    assert_eq!(odd.current.1, run("g80", 100, 10, 0).occupancy);
    let s = shared_memory_curve(g80, Launch::new(256, 10, 1000)).unwrap();
    assert_eq!(s.current_index, None);
    assert_eq!(s.current.1, 1.0);
}

// --- Carrillo model ---

#[test]
fn carrillo_equal_occupancies_reduce_to_launch_overhead() {
    let branches = [Branch { time: 3.0, occupancy: 0.5 }, Branch { time: 5.0, occupancy: 0.5 }];
    let s = carrillo_speedup(8.0, &branches, 0.5, 0.4).unwrap();
    assert!(close(s, 8.0 / (8.0 + 0.4), 1e-12));
    assert!(close(carrillo_speedup(8.0, &branches, 0.5, 0.0).unwrap(), 1.0, 1e-12));
    let worst = carrillo_worst_case(&branches, 0.0).unwrap();
    assert!(close(worst.speedup, 1.0, 1e-12));
}

#[test]
fn carrillo_section_5_worst_case() {
    // Eq. (2): 2 / (1 x 0.67/1 + 1 x 0.67/0.67 + 0) = 1.197, "about 19.7 %".
    let branches = [Branch { time: 1.0, occupancy: 1.0 }, Branch { time: 1.0, occupancy: 0.67 }];
    let w = carrillo_worst_case(&branches, 0.0).unwrap();
    assert!(close(w.branched_occupancy, 0.67, 1e-12));
    assert!(close(w.split_time, 1.67, 1e-12));
    assert!(close(w.gain_percent, 19.76, 0.01));
    // Same with occupancies from the calculator: 6 vs 13 registers at 256 threads on G80.
    let kernels = [BranchKernel { registers_per_thread: 6 }, BranchKernel { registers_per_thread: 13 }];
    let w = branch_split_on_arch(arch("g80"), 256, 0, &kernels, &[1.0, 1.0], 0.0).unwrap();
    assert!(close(w.branched_occupancy, 2.0 / 3.0, 1e-12));
    assert!(close(w.speedup, 1.2, 1e-12));
    // Launch overhead eats the gain.
    let slow = branch_split_on_arch(arch("g80"), 256, 0, &kernels, &[1.0, 1.0], 0.5).unwrap();
    assert!(slow.speedup < 1.0);
}

#[test]
fn carrillo_rejects_bad_input() {
    let ok = [Branch { time: 1.0, occupancy: 1.0 }];
    assert!(carrillo_speedup(1.0, &[], 1.0, 0.0).is_err());
    assert!(carrillo_speedup(0.0, &ok, 1.0, 0.0).is_err());
    assert!(carrillo_speedup(1.0, &ok, 0.0, 0.0).is_err());
    assert!(carrillo_speedup(1.0, &ok, 1.0, -1.0).is_err());
    assert!(carrillo_speedup(1.0, &[Branch { time: f64::NAN, occupancy: 1.0 }], 1.0, 0.0).is_err());
    assert!(carrillo_speedup(1.0, &[Branch { time: 1.0, occupancy: 1.5 }], 1.0, 0.0).is_err());
    assert!(carrillo_worst_case(&[Branch { time: 0.0, occupancy: 1.0 }], 0.0).is_err());
    assert!(branch_split_on_arch(arch("g80"), 256, 0, &[BranchKernel { registers_per_thread: 6 }], &[], 0.0).is_err());
}

// --- Ryoo model ---

#[test]
fn ryoo_throughput_and_bandwidth_on_8800_gtx() {
    assert!(close(GEFORCE_8800_GTX.issue_rate_gops(), 172.8, 1e-9));
    let quarter =
        ryoo_estimate(&GEFORCE_8800_GTX, InstructionMix { fma_fraction: 0.25, global_load_fraction: 0.0, bytes_per_load: 4.0 }).unwrap();
    assert!(close(quarter.potential_gflops, 86.4, 1e-9));
    // Plain matmul: 1 FMA in 8 instructions, 1/4 of them 4-byte global loads.
    let plain =
        ryoo_estimate(&GEFORCE_8800_GTX, InstructionMix { fma_fraction: 1.0 / 8.0, global_load_fraction: 0.25, bytes_per_load: 4.0 })
            .unwrap();
    assert!(close(plain.potential_gflops, 43.2, 1e-9));
    assert!(close(plain.required_bandwidth_gb_per_s, 172.8, 1e-9)); // "173 GB/s"
    assert!(close(plain.bandwidth_ratio, 2.0, 1e-9));
    assert!(plain.bandwidth_bound);
    assert!(close(plain.bandwidth_limited_gflops, 21.6, 1e-9));
    // Unrolled 16x16 tiles: 16 FMAs in 59 instructions -> 93.72 GFLOPS.
    let unrolled = ryoo_estimate(
        &GEFORCE_8800_GTX,
        InstructionMix { fma_fraction: 16.0 / 59.0, global_load_fraction: 0.25 / 16.0, bytes_per_load: 4.0 },
    )
    .unwrap();
    assert!(close(unrolled.potential_gflops, 93.72, 0.01));
    assert!(!unrolled.bandwidth_bound);
    assert!(ryoo_estimate(&GEFORCE_8800_GTX, InstructionMix { fma_fraction: 1.5, global_load_fraction: 0.0, bytes_per_load: 4.0 }).is_err());
}

// --- WGSL kernels ---

const TWO_ARRAYS: &str = r#"
var<workgroup> tile_a: array<f32, 256>;
var<workgroup> tile_b: array<vec4<f32>, 64>;
var<workgroup> unused: array<f32, 4096>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64, 2, 1)
fn main(@builtin(local_invocation_index) i: u32) {
    tile_a[i] = f32(i);
    tile_b[i % 64u] = vec4<f32>(1.0);
    workgroupBarrier();
    out[i] = tile_a[255u - i] + tile_b[i % 64u].x;
}

@compute @workgroup_size(8)
fn other() {
    unused[0] = 1.0;
}
"#;

#[test]
fn kernel_resources_reads_workgroup_memory_and_size() {
    let k = kernel_resources(TWO_ARRAYS, "main").unwrap();
    assert_eq!(k.workgroup_size, [64, 2, 1]);
    assert_eq!(k.threads_per_workgroup, 128);
    assert_eq!(k.workgroup_memory_bytes, 256 * 4 + 64 * 16);
    assert_eq!(k.workgroup_variables.len(), 2);
    assert_eq!(k.workgroup_variables[0].name.as_deref(), Some("tile_a"));
    let other = kernel_resources(TWO_ARRAYS, "other").unwrap();
    assert_eq!(other.workgroup_memory_bytes, 4096 * 4);
    // 2 KB, 128 threads, 32 registers on an A100: registers allow 16 blocks, warps 16.
    let o = kernel_occupancy(arch("a100"), &k, 32).unwrap();
    assert_eq!(o.shared_memory_per_block, 2048);
    assert_eq!(o.occupancy, 1.0);
}

#[test]
fn kernel_resources_errors() {
    assert!(matches!(kernel_resources(TWO_ARRAYS, "nope"), Err(Error::Invalid { .. })));
    let message = kernel_resources(TWO_ARRAYS, "nope").unwrap_err().to_string();
    assert!(message.contains("main") && message.contains("other"));
    assert!(matches!(kernel_resources("fn broken( {", "main"), Err(Error::Shader { line: 1, .. })));

    let overridden = r#"
override block: u32 = 64;
var<workgroup> scratch: array<u32, 128>;
@compute @workgroup_size(block)
fn main(@builtin(local_invocation_index) i: u32) { scratch[i] = i; }
"#;
    let message = kernel_resources(overridden, "main").unwrap_err().to_string();
    assert!(message.contains("override"), "{message}");
    let k = kernel_resources_with_workgroup_size(overridden, "main", Some([256, 1, 1])).unwrap();
    assert_eq!(k.threads_per_workgroup, 256);
    assert_eq!(k.workgroup_memory_bytes, 512);
    assert!(kernel_resources_with_workgroup_size(overridden, "main", Some([0, 1, 1])).is_err());

    let sized_by_override = r#"
override n: u32 = 64;
var<workgroup> scratch: array<u32, n>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) { scratch[i] = i; }
"#;
    let message = kernel_resources(sized_by_override, "main").unwrap_err().to_string();
    assert!(message.contains("override"), "{message}");

    let fragment = "@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
    assert!(kernel_resources(fragment, "fs").is_err());
}

#[test]
fn adapter_names_pick_their_preset() {
    let of = |n: &str| super::arch_for_adapter(n).map(|a| a.name);
    assert_eq!(of("NVIDIA H100 80GB HBM3"), Some("cc9.0"));
    assert_eq!(of("NVIDIA H200"), Some("cc9.0"));
    assert_eq!(of("NVIDIA A100-SXM4-40GB"), Some("cc8.0"));
    assert_eq!(of("NVIDIA GeForce RTX 4090"), Some("cc8.9"));
    assert_eq!(of("llvmpipe (LLVM 15.0.6, 256 bits)"), None);
    assert_eq!(of("AMD Radeon RX 7900 XTX (RADV NAVI31)"), Some("rdna3"));
    assert_eq!(of("NVIDIA L40S"), None, "not an L40");
    // an alias inside a longer word is not a match
    assert_eq!(of("Microsoft Basic Render Driver adapter"), None);
    assert_eq!(of("NVIDIA A1000"), None);
}
