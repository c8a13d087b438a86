// Ryoo et al., Figure 3(b): C = A·B with TILE×TILE workgroups that stage a TILE×TILE tile of A
// and of B in workgroup memory per step along K. TILE is an override (4, 8, 12, 16 in the
// paper's Figure 4). Loads outside the matrices read 0, which plays the role of the paper's
// padding (needed there for 12×12 tiles), so any M, N, K works.
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: (none)

override TILE: u32 = 16u;

alias MatmulElement = f32;
#import matmul_bindings

var<workgroup> As: array<f32, TILE * TILE>;
var<workgroup> Bs: array<f32, TILE * TILE>;

@compute @workgroup_size(TILE, TILE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let row = wid.y * TILE + ty;
    let col = wid.x * TILE + tx;
    let tiles = (params.k + TILE - 1u) / TILE;
    var acc = 0.0;
    for (var t = 0u; t < tiles; t++) {
        // load input tile elements
        let ka = t * TILE + tx;
        var va = 0.0;
        if (row < params.m && ka < params.k) {
            va = a[row * params.k + ka];
        }
        As[ty * TILE + tx] = va;
        let kb = t * TILE + ty;
        var vb = 0.0;
        if (kb < params.k && col < params.n) {
            vb = b[kb * params.n + col];
        }
        Bs[ty * TILE + tx] = vb;
        workgroupBarrier();
        // compute results for the tile
        for (var i = 0u; i < TILE; i++) {
            acc += As[ty * TILE + i] * Bs[i * TILE + tx];
        }
        workgroupBarrier();
    }
    if (row < params.m && col < params.n) {
        c[row * params.n + col] = acc;
    }
}
