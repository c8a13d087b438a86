// The 16×16 tiling of Ryoo et al.'s unrolled kernels (matmul/unrolled.wgsl,
// matmul/prefetch.wgsl): an invocation's place in C and in the tiles, the tiles of A and B in
// workgroup memory, the loads that fill them (0 outside the matrices, so any M, N, K works),
// the tile product with its 16 multiply-adds written out, and the guarded store of C.

alias MatmulElement = f32;
#import matmul_bindings

const TILE: u32 = 16u;

var<workgroup> As: array<f32, 256>;
var<workgroup> Bs: array<f32, 256>;

// Invocation (tx, ty) of workgroup wid: element (row, col) of C, slot ty·TILE + tx of the
// tiles, row ty of As starting at arow. (Not uniform: a loop bound taken from it would put
// the barriers in non-uniform control flow for Tint; see tile_steps.)
struct TilePosition {
    tx: u32,
    ty: u32,
    row: u32,
    col: u32,
    slot: u32,
    arow: u32,
}

fn tile_position(lid: vec3<u32>, wid: vec3<u32>) -> TilePosition {
    let tx = lid.x;
    let ty = lid.y;
    return TilePosition(
        tx,
        ty,
        wid.y * TILE + ty,
        wid.x * TILE + tx,
        ty * TILE + tx,
        ty * TILE,
    );
}

// Steps of TILE along K (uniform).
fn tile_steps() -> u32 {
    return (params.k + TILE - 1u) / TILE;
}

// This invocation's element of the A tile of step t.
fn load_a(at: TilePosition, t: u32) -> f32 {
    let ka = t * TILE + at.tx;
    if (at.row < params.m && ka < params.k) {
        return a[at.row * params.k + ka];
    }
    return 0.0;
}

// This invocation's element of the B tile of step t.
fn load_b(at: TilePosition, t: u32) -> f32 {
    let kb = t * TILE + at.ty;
    if (kb < params.k && at.col < params.n) {
        return b[kb * params.n + at.col];
    }
    return 0.0;
}

// acc plus row ty of As times column tx of Bs, added in order along K: constant offsets into
// workgroup memory, no induction variable or loop branch. Keep in step with tiled.wgsl.
fn multiply_tiles(acc: f32, at: TilePosition) -> f32 {
    let arow = at.arow;
    let tx = at.tx;
    var sum = acc;
    sum += As[arow + 0u] * Bs[0u + tx];
    sum += As[arow + 1u] * Bs[16u + tx];
    sum += As[arow + 2u] * Bs[32u + tx];
    sum += As[arow + 3u] * Bs[48u + tx];
    sum += As[arow + 4u] * Bs[64u + tx];
    sum += As[arow + 5u] * Bs[80u + tx];
    sum += As[arow + 6u] * Bs[96u + tx];
    sum += As[arow + 7u] * Bs[112u + tx];
    sum += As[arow + 8u] * Bs[128u + tx];
    sum += As[arow + 9u] * Bs[144u + tx];
    sum += As[arow + 10u] * Bs[160u + tx];
    sum += As[arow + 11u] * Bs[176u + tx];
    sum += As[arow + 12u] * Bs[192u + tx];
    sum += As[arow + 13u] * Bs[208u + tx];
    sum += As[arow + 14u] * Bs[224u + tx];
    sum += As[arow + 15u] * Bs[240u + tx];
    return sum;
}

fn store_c(at: TilePosition, value: f32) {
    if (at.row < params.m && at.col < params.n) {
        c[at.row * params.n + at.col] = value;
    }
}
