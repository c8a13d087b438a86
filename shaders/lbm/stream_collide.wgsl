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
// predicated source index, one flags load and a two-armed branch with a single load per arm.
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
        let in1 = (x > 0u);
        let s1 = select(c, c - 1u, in1);
        var f1: f32;
        if (probe(1u, in1 & (flags[s1] != 0u))) {
            f1 = f_in[n + s1];
        } else {
            f1 = f_in[2u * n + c];
        }
        // q = 2, e = (-1, 0, 0), bounce-back from 1
        let in2 = (x + 1u < nx);
        let s2 = select(c, c + 1u, in2);
        var f2: f32;
        if (probe(2u, in2 & (flags[s2] != 0u))) {
            f2 = f_in[2u * n + s2];
        } else {
            f2 = f_in[n + c];
        }
        // q = 3, e = (0, 1, 0), bounce-back from 4
        let in3 = (y > 0u);
        let s3 = select(c, c - nx, in3);
        var f3: f32;
        if (probe(3u, in3 & (flags[s3] != 0u))) {
            f3 = f_in[3u * n + s3];
        } else {
            f3 = f_in[4u * n + c];
        }
        // q = 4, e = (0, -1, 0), bounce-back from 3
        let in4 = (y + 1u < ny);
        let s4 = select(c, c + nx, in4);
        var f4: f32;
        if (probe(4u, in4 & (flags[s4] != 0u))) {
            f4 = f_in[4u * n + s4];
        } else {
            f4 = f_in[3u * n + c];
        }
        // q = 5, e = (0, 0, 1), bounce-back from 6
        let in5 = (z > 0u);
        let s5 = select(c, c - nxy, in5);
        var f5: f32;
        if (probe(5u, in5 & (flags[s5] != 0u))) {
            f5 = f_in[5u * n + s5];
        } else {
            f5 = f_in[6u * n + c];
        }
        // q = 6, e = (0, 0, -1), bounce-back from 5
        let in6 = (z + 1u < nz);
        let s6 = select(c, c + nxy, in6);
        var f6: f32;
        if (probe(6u, in6 & (flags[s6] != 0u))) {
            f6 = f_in[6u * n + s6];
        } else {
            f6 = f_in[5u * n + c];
        }
        // q = 7, e = (1, 1, 0), bounce-back from 8
        let in7 = (x > 0u) & (y > 0u);
        let s7 = select(c, c - 1u - nx, in7);
        var f7: f32;
        if (probe(7u, in7 & (flags[s7] != 0u))) {
            f7 = f_in[7u * n + s7];
        } else {
            f7 = f_in[8u * n + c];
        }
        // q = 8, e = (-1, -1, 0), bounce-back from 7
        let in8 = (x + 1u < nx) & (y + 1u < ny);
        let s8 = select(c, c + 1u + nx, in8);
        var f8: f32;
        if (probe(8u, in8 & (flags[s8] != 0u))) {
            f8 = f_in[8u * n + s8];
        } else {
            f8 = f_in[7u * n + c];
        }
        // q = 9, e = (1, -1, 0), bounce-back from 10
        let in9 = (x > 0u) & (y + 1u < ny);
        let s9 = select(c, c + nx - 1u, in9);
        var f9: f32;
        if (probe(9u, in9 & (flags[s9] != 0u))) {
            f9 = f_in[9u * n + s9];
        } else {
            f9 = f_in[10u * n + c];
        }
        // q = 10, e = (-1, 1, 0), bounce-back from 9
        let in10 = (x + 1u < nx) & (y > 0u);
        let s10 = select(c, c + 1u - nx, in10);
        var f10: f32;
        if (probe(10u, in10 & (flags[s10] != 0u))) {
            f10 = f_in[10u * n + s10];
        } else {
            f10 = f_in[9u * n + c];
        }
        // q = 11, e = (1, 0, 1), bounce-back from 12
        let in11 = (x > 0u) & (z > 0u);
        let s11 = select(c, c - 1u - nxy, in11);
        var f11: f32;
        if (probe(11u, in11 & (flags[s11] != 0u))) {
            f11 = f_in[11u * n + s11];
        } else {
            f11 = f_in[12u * n + c];
        }
        // q = 12, e = (-1, 0, -1), bounce-back from 11
        let in12 = (x + 1u < nx) & (z + 1u < nz);
        let s12 = select(c, c + 1u + nxy, in12);
        var f12: f32;
        if (probe(12u, in12 & (flags[s12] != 0u))) {
            f12 = f_in[12u * n + s12];
        } else {
            f12 = f_in[11u * n + c];
        }
        // q = 13, e = (1, 0, -1), bounce-back from 14
        let in13 = (x > 0u) & (z + 1u < nz);
        let s13 = select(c, c + nxy - 1u, in13);
        var f13: f32;
        if (probe(13u, in13 & (flags[s13] != 0u))) {
            f13 = f_in[13u * n + s13];
        } else {
            f13 = f_in[14u * n + c];
        }
        // q = 14, e = (-1, 0, 1), bounce-back from 13
        let in14 = (x + 1u < nx) & (z > 0u);
        let s14 = select(c, c + 1u - nxy, in14);
        var f14: f32;
        if (probe(14u, in14 & (flags[s14] != 0u))) {
            f14 = f_in[14u * n + s14];
        } else {
            f14 = f_in[13u * n + c];
        }
        // q = 15, e = (0, 1, 1), bounce-back from 16
        let in15 = (y > 0u) & (z > 0u);
        let s15 = select(c, c - nx - nxy, in15);
        var f15: f32;
        if (probe(15u, in15 & (flags[s15] != 0u))) {
            f15 = f_in[15u * n + s15];
        } else {
            f15 = f_in[16u * n + c];
        }
        // q = 16, e = (0, -1, -1), bounce-back from 15
        let in16 = (y + 1u < ny) & (z + 1u < nz);
        let s16 = select(c, c + nx + nxy, in16);
        var f16: f32;
        if (probe(16u, in16 & (flags[s16] != 0u))) {
            f16 = f_in[16u * n + s16];
        } else {
            f16 = f_in[15u * n + c];
        }
        // q = 17, e = (0, 1, -1), bounce-back from 18
        let in17 = (y > 0u) & (z + 1u < nz);
        let s17 = select(c, c + nxy - nx, in17);
        var f17: f32;
        if (probe(17u, in17 & (flags[s17] != 0u))) {
            f17 = f_in[17u * n + s17];
        } else {
            f17 = f_in[18u * n + c];
        }
        // q = 18, e = (0, -1, 1), bounce-back from 17
        let in18 = (y + 1u < ny) & (z > 0u);
        let s18 = select(c, c + nx - nxy, in18);
        var f18: f32;
        if (probe(18u, in18 & (flags[s18] != 0u))) {
            f18 = f_in[18u * n + s18];
        } else {
            f18 = f_in[17u * n + c];
        }
        if (probe(19u, fluid)) {
            let rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8 + f9 + f10 + f11 + f12 + f13 + f14 + f15 + f16 + f17 + f18;
            let ux = ((f1 + f7 + f9 + f11 + f13) - (f2 + f8 + f10 + f12 + f14)) / rho;
            let uy = ((f3 + f7 + f10 + f15 + f17) - (f4 + f8 + f9 + f16 + f18)) / rho;
            let uz = ((f5 + f11 + f14 + f15 + f18) - (f6 + f12 + f13 + f16 + f17)) / rho;
            let usq = 1.5 * (ux * ux + uy * uy + uz * uz);
            let omega = params.omega;
            f0 = f0 - omega * (f0 - (1.0 / 3.0) * rho * (1.0 - usq));
            let cu1 = 3.0 * (ux);
            f1 = f1 - omega * (f1 - (1.0 / 18.0) * rho * (1.0 + cu1 + 0.5 * cu1 * cu1 - usq));
            let cu2 = 3.0 * (-ux);
            f2 = f2 - omega * (f2 - (1.0 / 18.0) * rho * (1.0 + cu2 + 0.5 * cu2 * cu2 - usq));
            let cu3 = 3.0 * (uy);
            f3 = f3 - omega * (f3 - (1.0 / 18.0) * rho * (1.0 + cu3 + 0.5 * cu3 * cu3 - usq));
            let cu4 = 3.0 * (-uy);
            f4 = f4 - omega * (f4 - (1.0 / 18.0) * rho * (1.0 + cu4 + 0.5 * cu4 * cu4 - usq));
            let cu5 = 3.0 * (uz);
            f5 = f5 - omega * (f5 - (1.0 / 18.0) * rho * (1.0 + cu5 + 0.5 * cu5 * cu5 - usq));
            let cu6 = 3.0 * (-uz);
            f6 = f6 - omega * (f6 - (1.0 / 18.0) * rho * (1.0 + cu6 + 0.5 * cu6 * cu6 - usq));
            let cu7 = 3.0 * (ux + uy);
            f7 = f7 - omega * (f7 - (1.0 / 36.0) * rho * (1.0 + cu7 + 0.5 * cu7 * cu7 - usq));
            let cu8 = 3.0 * (-ux - uy);
            f8 = f8 - omega * (f8 - (1.0 / 36.0) * rho * (1.0 + cu8 + 0.5 * cu8 * cu8 - usq));
            let cu9 = 3.0 * (ux - uy);
            f9 = f9 - omega * (f9 - (1.0 / 36.0) * rho * (1.0 + cu9 + 0.5 * cu9 * cu9 - usq));
            let cu10 = 3.0 * (-ux + uy);
            f10 = f10 - omega * (f10 - (1.0 / 36.0) * rho * (1.0 + cu10 + 0.5 * cu10 * cu10 - usq));
            let cu11 = 3.0 * (ux + uz);
            f11 = f11 - omega * (f11 - (1.0 / 36.0) * rho * (1.0 + cu11 + 0.5 * cu11 * cu11 - usq));
            let cu12 = 3.0 * (-ux - uz);
            f12 = f12 - omega * (f12 - (1.0 / 36.0) * rho * (1.0 + cu12 + 0.5 * cu12 * cu12 - usq));
            let cu13 = 3.0 * (ux - uz);
            f13 = f13 - omega * (f13 - (1.0 / 36.0) * rho * (1.0 + cu13 + 0.5 * cu13 * cu13 - usq));
            let cu14 = 3.0 * (-ux + uz);
            f14 = f14 - omega * (f14 - (1.0 / 36.0) * rho * (1.0 + cu14 + 0.5 * cu14 * cu14 - usq));
            let cu15 = 3.0 * (uy + uz);
            f15 = f15 - omega * (f15 - (1.0 / 36.0) * rho * (1.0 + cu15 + 0.5 * cu15 * cu15 - usq));
            let cu16 = 3.0 * (-uy - uz);
            f16 = f16 - omega * (f16 - (1.0 / 36.0) * rho * (1.0 + cu16 + 0.5 * cu16 * cu16 - usq));
            let cu17 = 3.0 * (uy - uz);
            f17 = f17 - omega * (f17 - (1.0 / 36.0) * rho * (1.0 + cu17 + 0.5 * cu17 * cu17 - usq));
            let cu18 = 3.0 * (-uy + uz);
            f18 = f18 - omega * (f18 - (1.0 / 36.0) * rho * (1.0 + cu18 + 0.5 * cu18 * cu18 - usq));
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
