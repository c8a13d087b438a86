// Ryoo et al., Figure 3(a): one invocation per element of C = A·B (f32, row-major, M×K times
// K×N), reading A and B straight from global memory. Workgroups of 16×16 like the paper's
// 256-thread blocks. CPU reference: kernels::matmul::cpu::matmul.
//! variants: (none)

alias MatmulElement = f32;
#import matmul_bindings

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if (row >= params.m || col >= params.n) {
        return;
    }
    var acc = 0.0;
    var ia = row * params.k;
    var ib = col;
    for (var i = 0u; i < params.k; i++) {
        acc += a[ia] * b[ib];
        ia += 1u;
        ib += params.n;
    }
    c[row * params.n + col] = acc;
}
