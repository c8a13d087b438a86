//! CPU reference of `shaders/gafort/children.wgsl`, over the same gene-major layout.

use crate::kernels::parallel_ranges;

/// The fitness weight of gene n.
pub fn weight(n: u32) -> u32 {
    1 + (n * 7) % 13
}

/// Crossover loop trips of child c: L - icross with crossover, 0 without.
pub fn trips(draws: &[u32], c: usize, genes: u32, threshold: u32) -> u32 {
    let d = &draws[8 * c + 4..8 * c + 8];
    if d[0] < threshold {
        genes - d[1]
    } else {
        0
    }
}

/// `children.wgsl`: (children genes gene-major, child fitness).
pub fn children(parents: &[u32], fitness: &[u32], draws: &[u32], population: usize, genes: u32, threshold: u32) -> (Vec<u32>, Vec<u32>) {
    let p = population;
    let fitter = |a: u32, b: u32| if fitness[a as usize] >= fitness[b as usize] { a } else { b };
    // Per child its own chromosome, transposed to gene-major at the end.
    let made: Vec<(Vec<u32>, u32)> = parallel_ranges(p, |range| {
        range
            .map(|c| {
                let d = &draws[8 * c..8 * c + 8];
                let (mate1, mate2, jump) = (fitter(d[0], d[1]) as usize, fitter(d[2], d[3]) as usize, d[6]);
                let start = genes - trips(draws, c, genes, threshold);
                let chromosome: Vec<u32> = (0..genes)
                    .map(|n| {
                        let mate = if n >= start { mate2 } else { mate1 };
                        parents[n as usize * p + mate] ^ (n == jump) as u32
                    })
                    .collect();
                let f = chromosome.iter().enumerate().map(|(n, &g)| g * weight(n as u32)).sum();
                (chromosome, f)
            })
            .collect::<Vec<_>>()
    })
    .concat();
    let mut genes_out = vec![0u32; genes as usize * p];
    for (c, (chromosome, _)) in made.iter().enumerate() {
        for (n, &g) in chromosome.iter().enumerate() {
            genes_out[n * p + c] = g;
        }
    }
    (genes_out, made.into_iter().map(|(_, f)| f).collect())
}
