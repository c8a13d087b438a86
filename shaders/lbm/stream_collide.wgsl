// D3Q19 lattice-Boltzmann stream-and-collide step (Zhang 5.2, "streamAndCollision_k"), pull
// scheme, BGK collision. Thread t updates cell c: for each of the 19 directions q it checks
// whether the upstream neighbour c - e_q exists (inside the box and not an obstacle, site q);
// if so it streams that neighbour's f_q, otherwise it bounces back its own f_opp(q). Fluid
// cells then collide (site 19); obstacle cells keep the streamed values.
// Layout: f[q * N + c], c = x + nx * (y + ny * z); flags[c] = 1 for fluid, 0 for obstacle.
// CPU reference: kernels::lbm::cpu::stream_collide. With REMAP, thread t updates cell
// remap_index[t] (cells grouped by path vector).
//! variants: PROBE REMAP

#import grid
#import probe

const PROBE_SITES: u32 = 20u;
const WG: u32 = 256u;
const Q: u32 = 19u;

const EX = array<i32, 19>(0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0);
const EY = array<i32, 19>(0, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, 1, -1);
const EZ = array<i32, 19>(0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1);
const OPP = array<u32, 19>(0u, 2u, 1u, 4u, 3u, 6u, 5u, 8u, 7u, 10u, 9u, 12u, 11u, 14u, 13u, 16u, 15u, 18u, 17u);
const W = array<f32, 19>(
    1.0 / 3.0,
    1.0 / 18.0, 1.0 / 18.0, 1.0 / 18.0, 1.0 / 18.0, 1.0 / 18.0, 1.0 / 18.0,
    1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0,
    1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0, 1.0 / 36.0,
);

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
#ifdef REMAP
@group(0) @binding(4) var<storage, read> remap_index: array<u32>;
#endif

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    let n = params.n;
    if (t < n) {
#ifdef REMAP
        let c = remap_index[t];
#else
        let c = t;
#endif
        let nx = i32(params.nx);
        let ny = i32(params.ny);
        let nz = i32(params.nz);
        let x = i32(c % params.nx);
        let y = i32((c / params.nx) % params.ny);
        let z = i32(c / (params.nx * params.ny));
        var f: array<f32, 19>;
        for (var q = 0u; q < Q; q++) {
            let sx = x - EX[q];
            let sy = y - EY[q];
            let sz = z - EZ[q];
            let inside = (sx >= 0) & (sx < nx) & (sy >= 0) & (sy < ny) & (sz >= 0) & (sz < nz);
            let src = select(c, u32(sx + nx * (sy + ny * sz)), inside);
            let exists = inside & (flags[src] != 0u);
            if (probe(q, exists)) {
                f[q] = f_in[q * n + src];
            } else {
                f[q] = f_in[OPP[q] * n + c];
            }
        }
        if (probe(19u, flags[c] != 0u)) {
            var rho = 0.0;
            var ux = 0.0;
            var uy = 0.0;
            var uz = 0.0;
            for (var q = 0u; q < Q; q++) {
                rho += f[q];
                ux += f32(EX[q]) * f[q];
                uy += f32(EY[q]) * f[q];
                uz += f32(EZ[q]) * f[q];
            }
            ux /= rho;
            uy /= rho;
            uz /= rho;
            let usq = 1.5 * (ux * ux + uy * uy + uz * uz);
            for (var q = 0u; q < Q; q++) {
                let cu = 3.0 * (f32(EX[q]) * ux + f32(EY[q]) * uy + f32(EZ[q]) * uz);
                let feq = W[q] * rho * (1.0 + cu + 0.5 * cu * cu - usq);
                f[q] = f[q] - params.omega * (f[q] - feq);
            }
        }
        for (var q = 0u; q < Q; q++) {
            f_out[q * n + c] = f[q];
        }
    }
    probe_end();
}
