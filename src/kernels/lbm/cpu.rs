//! CPU reference of `shaders/lbm/stream_collide.wgsl`, in f64 over the same f32 layout
//! (`f[q * n + c]`, c = x + nx (y + ny z)).

use crate::kernels::parallel_ranges;

/// Velocities of the D3Q19 lattice.
pub const Q: usize = 19;
/// x component of each lattice velocity.
pub const EX: [i32; Q] = [0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0];
/// y component of each lattice velocity.
pub const EY: [i32; Q] = [0, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 0, 0, 1, -1, 1, -1];
/// z component of each lattice velocity.
pub const EZ: [i32; Q] = [0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, -1, 1, 1, -1, -1, 1];
/// Index of the opposite velocity (bounce-back at obstacles).
pub const OPP: [usize; Q] = [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15, 18, 17];
/// Denominator of each velocity's equilibrium weight: 3 at rest, 18 along an axis, 36 on a
/// diagonal.
pub const fn weight_denominator(q: usize) -> u32 {
    match EX[q] * EX[q] + EY[q] * EY[q] + EZ[q] * EZ[q] {
        0 => 3,
        1 => 18,
        _ => 36,
    }
}
/// Equilibrium weight of each velocity (sum 1).
pub const W: [f64; Q] = {
    let mut w = [0.0; Q];
    let mut q = 0;
    while q < Q {
        w[q] = 1.0 / weight_denominator(q) as f64;
        q += 1;
    }
    w
};

/// Equilibrium distribution f_eq,q(rho, u).
pub fn equilibrium(q: usize, rho: f64, u: [f64; 3]) -> f64 {
    let cu = 3.0 * (EX[q] as f64 * u[0] + EY[q] as f64 * u[1] + EZ[q] as f64 * u[2]);
    let usq = 1.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    W[q] * rho * (1.0 + cu + 0.5 * cu * cu - usq)
}

/// The upstream neighbour of cell c in direction q, if it exists (inside and fluid).
pub fn upstream(c: usize, q: usize, dims: [usize; 3], flags: &[u32]) -> Option<usize> {
    let [nx, ny, nz] = dims;
    let (x, y, z) = ((c % nx) as i32, ((c / nx) % ny) as i32, (c / (nx * ny)) as i32);
    let (sx, sy, sz) = (x - EX[q], y - EY[q], z - EZ[q]);
    let inside = sx >= 0 && sx < nx as i32 && sy >= 0 && sy < ny as i32 && sz >= 0 && sz < nz as i32;
    if !inside {
        return None;
    }
    let src = sx as usize + nx * (sy as usize + ny * sz as usize);
    (flags[src] != 0).then_some(src)
}

/// Path vector of cell c: bit q = neighbour q exists (q < 19), bit 19 = the cell is fluid.
pub fn path(c: usize, dims: [usize; 3], flags: &[u32]) -> u32 {
    let mut p = ((flags[c] != 0) as u32) << 19;
    for q in 0..Q {
        p |= (upstream(c, q, dims, flags).is_some() as u32) << q;
    }
    p
}

/// `stream_collide.wgsl`: one step from `f` (f32) to the new distributions (f64).
pub fn stream_collide(f: &[f32], flags: &[u32], dims: [usize; 3], omega: f64) -> Vec<f64> {
    let n = flags.len();
    let cells: Vec<[f64; Q]> = parallel_ranges(n, |range| {
        range
            .map(|c| {
                let mut g = [0f64; Q];
                for q in 0..Q {
                    g[q] = match upstream(c, q, dims, flags) {
                        Some(src) => f[q * n + src] as f64,
                        None => f[OPP[q] * n + c] as f64,
                    };
                }
                if flags[c] != 0 {
                    let rho: f64 = g.iter().sum();
                    let mut u = [0f64; 3];
                    for q in 0..Q {
                        u[0] += EX[q] as f64 * g[q];
                        u[1] += EY[q] as f64 * g[q];
                        u[2] += EZ[q] as f64 * g[q];
                    }
                    u.iter_mut().for_each(|v| *v /= rho);
                    for (q, gq) in g.iter_mut().enumerate() {
                        *gq -= omega * (*gq - equilibrium(q, rho, u));
                    }
                }
                g
            })
            .collect::<Vec<_>>()
    })
    .concat();
    let mut out = vec![0f64; Q * n];
    for (c, g) in cells.iter().enumerate() {
        for q in 0..Q {
            out[q * n + c] = g[q];
        }
    }
    out
}
