// One round of integer mixing (multiply, xor-shift, multiply-add): the unit of work of the
// divergent loop and branch kernels (micro/data_loop.wgsl, micro/if_branch.wgsl,
// split/branch_split.wgsl). CPU reference: kernels::micro::cpu::mix.

fn mix(h: u32) -> u32 {
    var x = h * 0x9E3779B1u;
    x ^= x >> 15u;
    return x * 0x85EBCA77u + 1u;
}
