// The parts of the register-tiled SGEMM that every form of its main loop shares
// (shaders/matmul/regtile.wgsl, written out; shaders/matmul/regtile_loops.wgsl, loops): tile
// overrides, bindings, the double-buffered workgroup tiles, and the global loads and stores with
// their bounds guards. Defines: TM4, TN4 (4 outputs per invocation along M / N instead of 8),
// UNALIGNED (scalar global access for any K, N).
override WG_X: u32 = 16u;
override WG_Y: u32 = 16u;
override BK: u32 = 8u;
// Invocations tid = 32w + lane form WARP_X × WARP_Y blocks of (tx, ty), so that a 32-wide
// subgroup reads few distinct fragments (8 × 4: 4 of A, 8 of B, one 128-byte wavefront each).
// WARP_X must divide WG_X and WARP_Y divide WG_Y; WARP_X = WG_X, WARP_Y = 1 is row order.
override WARP_X: u32 = 8u;
override WARP_Y: u32 = 4u;
// Workgroups run in groups of GROUP_M tile rows, column by column inside a group, so the
// tiles of A and B that run at the same time share more of L2 (1 = plain row order).
override GROUP_M: u32 = 8u;

#ifdef TM4
const TM: u32 = 4u;
#else
const TM: u32 = 8u;
#endif
#ifdef TN4
const TN: u32 = 4u;
#else
const TN: u32 = 8u;
#endif

override THREADS: u32 = WG_X * WG_Y;
override BM: u32 = WG_Y * TM;
override BN: u32 = WG_X * TN;
// vec4 per step: A tile (BM rows × BK/4), B tile (BK rows × BN/4)
override A_VEC4: u32 = BM * BK / 4u;
override B_VEC4: u32 = BK * BN / 4u;
override A_LOADS: u32 = (A_VEC4 + THREADS - 1u) / THREADS;
override B_LOADS: u32 = (B_VEC4 + THREADS - 1u) / THREADS;

#ifdef UNALIGNED
alias MatmulElement = f32;
#else
alias MatmulElement = vec4<f32>;
#endif
#import matmul_bindings

// Two buffers each: As[buf][k][m] (A transposed), Bs[buf][k][n], as vec4 along m / n.
var<workgroup> As: array<vec4<f32>, 2u * A_VEC4>;
var<workgroup> Bs: array<vec4<f32>, 2u * B_VEC4>;

#ifdef UNALIGNED
fn a_at(row: u32, k: u32) -> f32 {
    if (k < params.k) {
        return a[row * params.k + k];
    }
    return 0.0;
}

fn b_at(base: u32, col: u32) -> f32 {
    if (col < params.n) {
        return b[base + col];
    }
    return 0.0;
}
#endif

// Four consecutive elements A[row][k..k+4] (zero outside A).
fn load_a(row: u32, k: u32) -> vec4<f32> {
#ifdef UNALIGNED
    if (row < params.m) {
        return vec4<f32>(a_at(row, k), a_at(row, k + 1u), a_at(row, k + 2u), a_at(row, k + 3u));
    }
#else
    if (row < params.m && k < params.k) {
        return a[(row * params.k + k) / 4u];
    }
#endif
    return vec4<f32>(0.0);
}

// Four consecutive elements B[k][col..col+4] (zero outside B).
fn load_b(k: u32, col: u32) -> vec4<f32> {
#ifdef UNALIGNED
    if (k < params.k) {
        let base = k * params.n;
        return vec4<f32>(b_at(base, col), b_at(base, col + 1u), b_at(base, col + 2u), b_at(base, col + 3u));
    }
#else
    if (k < params.k && col < params.n) {
        return b[(k * params.n + col) / 4u];
    }
#endif
    return vec4<f32>(0.0);
}

// Stores the A vec4 number l of a step (row l / (BK/4), columns 4·(l % (BK/4))) transposed.
fn put_a(buf: u32, l: u32, v: vec4<f32>) {
    if (l < A_VEC4) {
        let row = l / (BK / 4u);
        let base = buf * A_VEC4 + 4u * (l % (BK / 4u)) * (BM / 4u) + row / 4u;
        let lane = row % 4u;
        As[base][lane] = v.x;
        As[base + BM / 4u][lane] = v.y;
        As[base + 2u * (BM / 4u)][lane] = v.z;
        As[base + 3u * (BM / 4u)][lane] = v.w;
    }
}

fn put_b(buf: u32, l: u32, v: vec4<f32>) {
    if (l < B_VEC4) {
        Bs[buf * B_VEC4 + l] = v;
    }
}

fn store_c(row: u32, col: u32, v: vec4<f32>) {
    let n = params.n;
    if (row >= params.m) {
        return;
    }
#ifdef UNALIGNED
    let base = row * n + col;
    if (col < n) { c[base] = v.x; }
    if (col + 1u < n) { c[base + 1u] = v.y; }
    if (col + 2u < n) { c[base + 2u] = v.z; }
    if (col + 3u < n) { c[base + 3u] = v.w; }
#else
    if (col < n) {
        c[(row * n + col) / 4u] = v;
    }
#endif
}

// Where an invocation works: its column and row (tx, ty) in the workgroup's grid, each warp a
// WARP_X × WARP_Y block, and the origin (m0, n0) in C of its workgroup's tile, in the grouped
// tile order.
struct Place {
    tx: u32,
    ty: u32,
    m0: u32,
    n0: u32,
}

fn place(tid: u32, wid: vec3<u32>, groups: vec3<u32>) -> Place {
    let lane = tid % (WARP_X * WARP_Y);
    let warp = tid / (WARP_X * WARP_Y);
    let tx = (warp % (WG_X / WARP_X)) * WARP_X + lane % WARP_X;
    let ty = (warp / (WG_X / WARP_X)) * WARP_Y + lane / WARP_X;
    // grouped tile order
    let pid = wid.y * groups.x + wid.x;
    let per_group = GROUP_M * groups.x;
    let first_m = (pid / per_group) * GROUP_M;
    let rows_in_group = min(groups.y - first_m, GROUP_M);
    let in_group = pid % per_group;
    return Place(tx, ty, (first_m + in_group % rows_in_group) * BM, (in_group / rows_in_group) * BN);
}

// The BK steps along K. Apart from place(): WGSL's uniformity analysis sees a struct that
// depends on the invocation as a whole, and the per-step barriers need this count uniform.
fn k_steps() -> u32 {
    return (params.k + BK - 1u) / BK;
}
