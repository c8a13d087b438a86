// GAFORT-like children generation (Zhang 5.3; written from the paper's description, SPEC
// OMP's gafort source is not public). Thread t makes child c: two tournaments pick the mates
// (the fitter of two random candidates each), the child copies mate 1 with a jump mutation,
// then, if the crossover draw is below the threshold (site 0), takes genes icross..L-1 from
// mate 2 (site 1: a loop of L - icross trips, 0 without crossover), and finally evaluates its
// fitness. Random numbers come from the host. Genes are bits stored gene-major
// (gene n of member c at n * P + c) so adjacent threads touch adjacent words.
// CPU reference: kernels::gafort::cpu::children. With REMAP, thread t makes child
// remap_index[t] (children grouped by crossover trip count).
//! variants: PROBE REMAP

#import grid
#import probe
#import remap

const PROBE_SITES: u32 = 2u;
const WG: u32 = 256u;

struct Params {
    // population size P (parents = children)
    population: u32,
    // genes per chromosome L
    genes: u32,
    // crossover when draw < threshold
    threshold: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> parents: array<u32>;
@group(0) @binding(1) var<storage, read> parent_fitness: array<u32>;
// per child: 4 candidate parents, crossover draw, crossover point, jump-mutation gene
@group(0) @binding(2) var<storage, read> draws: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> children: array<u32>;
@group(0) @binding(4) var<storage, read_write> child_fitness: array<u32>;
@group(0) @binding(5) var<uniform> params: Params;

fn fitter(a: u32, b: u32) -> u32 {
    return select(b, a, parent_fitness[a] >= parent_fitness[b]);
}

// Gene weights of the fitness function.
fn weight(n: u32) -> u32 {
    return 1u + (n * 7u) % 13u;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    let p = params.population;
    let genes = params.genes;
    if (t < p) {
        let c = remapped_id(t);
        let candidates = draws[2u * c];
        let cross = draws[2u * c + 1u];
        let mate1 = fitter(candidates.x, candidates.y);
        let mate2 = fitter(candidates.z, candidates.w);
        let jump = cross.z;
        for (var n = 0u; n < genes; n++) {
            children[n * p + c] = parents[n * p + mate1] ^ select(0u, 1u, n == jump);
        }
        var start = genes;
        if (probe(0u, cross.x < params.threshold)) {
            start = cross.y;
        }
        let trips = genes - start;
        for (var k = 0u; probe(1u, k < trips); k++) {
            let n = start + k;
            children[n * p + c] = parents[n * p + mate2] ^ select(0u, 1u, n == jump);
        }
        var fitness = 0u;
        for (var n = 0u; n < genes; n++) {
            fitness += children[n * p + c] * weight(n);
        }
        child_fitness[c] = fitness;
    }
    probe_end();
}
