// D3Q19 lattice-Boltzmann stream-and-collide step (Zhang 5.2, "streamAndCollision_k"), pull
// scheme, BGK collision. Thread t updates cell c: for each of the 19 directions q it checks
// whether the upstream neighbour c - e_q exists (inside the box and not an obstacle, site q);
// if so it streams that neighbour's f_q, otherwise it bounces back its own f_opp(q). Fluid
// cells then collide (site 19); obstacle cells keep the streamed values.
// Layout: f[q * N + c], c = x + nx * (y + ny * z); flags[c] = 1 for fluid, 0 for obstacle.
// CPU reference: kernels::lbm::cpu::stream_collide. With REMAP, thread t updates cell
// remap_index[t] (cells grouped by path vector).
// All 19 directions are written out with their offsets, weights and opposite directions as
// literals and the distributions held in 19 scalars: run-time indices into `const` arrays or a
// private `array<f32, 19>` become local-memory arrays in naga's SPIR-V. Each direction is one
// call of `pull` (a predicated source index, one flags load and a two-armed branch with a single
// load per arm) and, for fluid cells, one of `relax`.
// The part between BEGIN/END generated is written by kernels::lbm::generated::body from the
// direction tables of kernels::lbm::cpu; its unit test keeps the two in step.
//! variants: PROBE REMAP

#import grid
#import probe
#import remap

const PROBE_SITES: u32 = 20u;
const WG: u32 = 256u;

struct Params {
    nx: u32,
    ny: u32,
    nz: u32,
    n: u32,
    omega: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> f_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> f_out: array<f32>;
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

// f_q of cell c after streaming: pulled from the upstream neighbour `src` if that is `inside`
// the box and fluid, else bounced back from the cell's own f_opp.
fn pull(q: u32, opp: u32, inside: bool, src: u32, c: u32) -> f32 {
    let n = params.n;
    let s = select(c, src, inside);
    if (probe(q, inside & (flags[s] != 0u))) {
        return f_in[q * n + s];
    }
    return f_in[opp * n + c];
}

// BGK collision of one distribution f with weight w and cu = 3 e·u.
fn relax(f: f32, w: f32, rho: f32, cu: f32, usq: f32) -> f32 {
    return f - params.omega * (f - w * rho * (1.0 + cu + 0.5 * cu * cu - usq));
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    let n = params.n;
    if (t < n) {
        let c = remapped_id(t);
        let nx = params.nx;
        let ny = params.ny;
        let nxy = nx * ny;
        let x = c % nx;
        let y = (c / nx) % ny;
        let z = c / nxy;
        let nz = params.nz;
        // BEGIN generated
        let fluid = flags[c] != 0u;
        // q = 0, e = (0, 0, 0): the source is the cell itself and both outcomes read f_in[c].
        _ = probe(0u, fluid);
        var f0 = f_in[c];
        // q = 1, e = (1, 0, 0), bounce-back from 2
        var f1 = pull(1u, 2u, (x > 0u), c - 1u, c);
        // q = 2, e = (-1, 0, 0), bounce-back from 1
        var f2 = pull(2u, 1u, (x + 1u < nx), c + 1u, c);
        // q = 3, e = (0, 1, 0), bounce-back from 4
        var f3 = pull(3u, 4u, (y > 0u), c - nx, c);
        // q = 4, e = (0, -1, 0), bounce-back from 3
        var f4 = pull(4u, 3u, (y + 1u < ny), c + nx, c);
        // q = 5, e = (0, 0, 1), bounce-back from 6
        var f5 = pull(5u, 6u, (z > 0u), c - nxy, c);
        // q = 6, e = (0, 0, -1), bounce-back from 5
        var f6 = pull(6u, 5u, (z + 1u < nz), c + nxy, c);
        // q = 7, e = (1, 1, 0), bounce-back from 8
        var f7 = pull(7u, 8u, (x > 0u) & (y > 0u), c - 1u - nx, c);
        // q = 8, e = (-1, -1, 0), bounce-back from 7
        var f8 = pull(8u, 7u, (x + 1u < nx) & (y + 1u < ny), c + 1u + nx, c);
        // q = 9, e = (1, -1, 0), bounce-back from 10
        var f9 = pull(9u, 10u, (x > 0u) & (y + 1u < ny), c + nx - 1u, c);
        // q = 10, e = (-1, 1, 0), bounce-back from 9
        var f10 = pull(10u, 9u, (x + 1u < nx) & (y > 0u), c + 1u - nx, c);
        // q = 11, e = (1, 0, 1), bounce-back from 12
        var f11 = pull(11u, 12u, (x > 0u) & (z > 0u), c - 1u - nxy, c);
        // q = 12, e = (-1, 0, -1), bounce-back from 11
        var f12 = pull(12u, 11u, (x + 1u < nx) & (z + 1u < nz), c + 1u + nxy, c);
        // q = 13, e = (1, 0, -1), bounce-back from 14
        var f13 = pull(13u, 14u, (x > 0u) & (z + 1u < nz), c + nxy - 1u, c);
        // q = 14, e = (-1, 0, 1), bounce-back from 13
        var f14 = pull(14u, 13u, (x + 1u < nx) & (z > 0u), c + 1u - nxy, c);
        // q = 15, e = (0, 1, 1), bounce-back from 16
        var f15 = pull(15u, 16u, (y > 0u) & (z > 0u), c - nx - nxy, c);
        // q = 16, e = (0, -1, -1), bounce-back from 15
        var f16 = pull(16u, 15u, (y + 1u < ny) & (z + 1u < nz), c + nx + nxy, c);
        // q = 17, e = (0, 1, -1), bounce-back from 18
        var f17 = pull(17u, 18u, (y > 0u) & (z + 1u < nz), c + nxy - nx, c);
        // q = 18, e = (0, -1, 1), bounce-back from 17
        var f18 = pull(18u, 17u, (y + 1u < ny) & (z > 0u), c + nx - nxy, c);
        if (probe(19u, fluid)) {
            let rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8 + f9 + f10 + f11 + f12 + f13 + f14 + f15 + f16 + f17 + f18;
            let ux = ((f1 + f7 + f9 + f11 + f13) - (f2 + f8 + f10 + f12 + f14)) / rho;
            let uy = ((f3 + f7 + f10 + f15 + f17) - (f4 + f8 + f9 + f16 + f18)) / rho;
            let uz = ((f5 + f11 + f14 + f15 + f18) - (f6 + f12 + f13 + f16 + f17)) / rho;
            let usq = 1.5 * (ux * ux + uy * uy + uz * uz);
            f0 = relax(f0, 1.0 / 3.0, rho, 0.0, usq);
            f1 = relax(f1, 1.0 / 18.0, rho, 3.0 * (ux), usq);
            f2 = relax(f2, 1.0 / 18.0, rho, 3.0 * (-ux), usq);
            f3 = relax(f3, 1.0 / 18.0, rho, 3.0 * (uy), usq);
            f4 = relax(f4, 1.0 / 18.0, rho, 3.0 * (-uy), usq);
            f5 = relax(f5, 1.0 / 18.0, rho, 3.0 * (uz), usq);
            f6 = relax(f6, 1.0 / 18.0, rho, 3.0 * (-uz), usq);
            f7 = relax(f7, 1.0 / 36.0, rho, 3.0 * (ux + uy), usq);
            f8 = relax(f8, 1.0 / 36.0, rho, 3.0 * (-ux - uy), usq);
            f9 = relax(f9, 1.0 / 36.0, rho, 3.0 * (ux - uy), usq);
            f10 = relax(f10, 1.0 / 36.0, rho, 3.0 * (-ux + uy), usq);
            f11 = relax(f11, 1.0 / 36.0, rho, 3.0 * (ux + uz), usq);
            f12 = relax(f12, 1.0 / 36.0, rho, 3.0 * (-ux - uz), usq);
            f13 = relax(f13, 1.0 / 36.0, rho, 3.0 * (ux - uz), usq);
            f14 = relax(f14, 1.0 / 36.0, rho, 3.0 * (-ux + uz), usq);
            f15 = relax(f15, 1.0 / 36.0, rho, 3.0 * (uy + uz), usq);
            f16 = relax(f16, 1.0 / 36.0, rho, 3.0 * (-uy - uz), usq);
            f17 = relax(f17, 1.0 / 36.0, rho, 3.0 * (uy - uz), usq);
            f18 = relax(f18, 1.0 / 36.0, rho, 3.0 * (-uy + uz), usq);
        }
        f_out[c] = f0;
        f_out[n + c] = f1;
        f_out[2u * n + c] = f2;
        f_out[3u * n + c] = f3;
        f_out[4u * n + c] = f4;
        f_out[5u * n + c] = f5;
        f_out[6u * n + c] = f6;
        f_out[7u * n + c] = f7;
        f_out[8u * n + c] = f8;
        f_out[9u * n + c] = f9;
        f_out[10u * n + c] = f10;
        f_out[11u * n + c] = f11;
        f_out[12u * n + c] = f12;
        f_out[13u * n + c] = f13;
        f_out[14u * n + c] = f14;
        f_out[15u * n + c] = f15;
        f_out[16u * n + c] = f16;
        f_out[17u * n + c] = f17;
        f_out[18u * n + c] = f18;
        // END generated (by kernels::lbm::generated::body, checked by its test)
    }
    probe_end();
}
