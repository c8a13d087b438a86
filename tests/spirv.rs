//! SPIR-V passthrough on the default adapter (lavapipe in CI): regtile built by naga's SPIR-V
//! writer (with and without wgpu's checks) and by glslang (benches/sgemm/regtile.spv, from
//! benches/sgemm/regtile.comp) runs through wgpu's passthrough and matches the CPU product;
//! adapters without the feature and modules that do not fit the kernel are refused.

mod common;

use simtlab::gpu::spirv::{NagaSpirvOptions, SpirvModule};
use simtlab::harness::Protocol;
use simtlab::kernels::matmul::{self, Compiler, RegtileConfig, Shape, Variant};
use simtlab::{Error, Gpu, GpuOptions};

const GLSLANG_REGTILE: &[u8] = include_bytes!("../benches/sgemm/regtile.spv");

fn glslang_regtile() -> Compiler {
    Compiler::Spirv(SpirvModule::from_bytes("regtile.spv", GLSLANG_REGTILE).unwrap())
}

/// Each compiler's regtile on a shape that is not a multiple of the 64×128 workgroup tile (K
/// and N multiples of 4: the vec4 path the GLSL port has), checked row by row against the f64
/// CPU product by the benchmark itself.
#[test]
fn every_compiler_builds_regtile_that_matches_the_cpu_product() {
    let gpu = common::gpu();
    assert!(gpu.caps().spirv_passthrough, "{} lacks PASSTHROUGH_SHADERS", gpu.adapter_name());
    let shape = Shape { m: 136, n: 196, k: 84 };
    let protocol = Protocol { warmup: 0, samples: 1 };
    let compilers = Compiler::parse_list("wgpu,naga,naga-unchecked,naga-unroll").unwrap().into_iter().chain([glslang_regtile()]);
    for (seed, compiler) in compilers.enumerate() {
        // both forms of the WGSL kernel; the GLSL port is of the written-out one's algorithm
        for loops in [false, true].into_iter().take(if matches!(compiler, Compiler::Spirv(_)) { 1 } else { 2 }) {
            let regtile = RegtileConfig { loops, ..Default::default() };
            let r = matmul::bench_compiled(&gpu, Variant::Regtile, &compiler, shape, &regtile, &protocol, 20 + seed as u64).unwrap();
            assert!(r.check.passed, "{}: {:?}", r.kernel, r.check.first_mismatch);
            assert_eq!(r.check.checked, (shape.m * shape.n) as u64);
            assert_eq!(r.params["compiler"], compiler.name());
        }
    }
}

/// naga's passthrough is not regtile-specific: the tiled kernel through it, on odd sizes.
#[test]
fn naga_passthrough_builds_other_kernels() {
    let gpu = common::gpu();
    let protocol = Protocol { warmup: 0, samples: 1 };
    let compiler = Compiler::Naga(NagaSpirvOptions::UNCHECKED);
    let r =
        matmul::bench_compiled(&gpu, Variant::Tiled12, &compiler, Shape { m: 40, n: 30, k: 20 }, &RegtileConfig::default(), &protocol, 3)
            .unwrap();
    assert!(r.check.passed, "{:?}", r.check.first_mismatch);
    assert_eq!(r.kernel, "tiled12 [naga-unchecked]");
}

/// A module built for other tile sizes is refused before it runs.
#[test]
fn a_module_of_another_workgroup_size_is_refused() {
    let gpu = common::gpu();
    let mut rng = simtlab::rng::Rng::new(5);
    let shape = Shape::square(128);
    let a = matmul::random_matrix(128, 128, &mut rng);
    let b = matmul::random_matrix(128, 128, &mut rng);
    let other = RegtileConfig { wg_y: 16, ..Default::default() };
    let err = matmul::Prepared::compiled(&gpu, Variant::Regtile, &glslang_regtile(), shape, &a, &b, &other).expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("workgroup size [16, 8, 1]") && text.contains("[16, 16, 1]"), "{text}");
}

/// A device opened without PASSTHROUGH_SHADERS (an embedding app's, say) refuses passthrough
/// with an error that names the feature, and still runs the WGSL path.
#[test]
fn passthrough_is_refused_without_the_feature() {
    let adapter = simtlab::gpu::adapters(&GpuOptions::default()).unwrap().into_iter().next().expect("an adapter");
    let desc = wgpu::DeviceDescriptor { required_limits: adapter.limits(), ..Default::default() };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc)).unwrap();
    let gpu = Gpu::from_device(device, queue, adapter.get_info()).unwrap();
    assert!(!gpu.caps().spirv_passthrough);
    let protocol = Protocol { warmup: 0, samples: 1 };
    let shape = Shape::square(64);
    let err =
        matmul::bench_compiled(&gpu, Variant::Regtile, &glslang_regtile(), shape, &RegtileConfig::default(), &protocol, 1).unwrap_err();
    assert!(matches!(&err, Error::Unsupported { what, .. } if what.contains("PASSTHROUGH_SHADERS")), "{err}");
    let r = matmul::bench_compiled(&gpu, Variant::Regtile, &Compiler::Wgpu, shape, &RegtileConfig::default(), &protocol, 1).unwrap();
    assert!(r.check.passed);
}
