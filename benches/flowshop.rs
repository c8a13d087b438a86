//! Host side of the flow-shop B&B: building a pool (what the driver does every round before the
//! GPU bounds it) per child, and one CPU LB2 bound per child (the work the GPU takes over).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use simtlab::kernels::flowshop::bench::search_pool;
use simtlab::kernels::flowshop::{cpu, taillard, BoundData, Exploration, LowerBound, Pool};

/// A parent as (heads, tails, unscheduled jobs).
type Parent = (Vec<u32>, Vec<u32>, Vec<usize>);

/// The parents of a real depth-first pool of Taillard instance `number`.
fn parents(number: usize, children: usize) -> (BoundData, Vec<Parent>) {
    let instance = taillard(number).unwrap();
    let data = BoundData::new(&instance);
    let pool = search_pool(&instance, Exploration::DepthFirst, children).unwrap();
    let parents = (0..pool.parent_count())
        .map(|p| {
            let mask = pool.unscheduled_mask(p);
            let unscheduled = (0..data.jobs).filter(|&j| mask[j / 32] >> (j % 32) & 1 == 1).collect();
            (pool.heads(p).to_vec(), pool.tails(p).to_vec(), unscheduled)
        })
        .collect();
    (data, parents)
}

fn pool_building(c: &mut Criterion) {
    let mut group = c.benchmark_group("flowshop");
    for (number, label) in [(21, "20x20"), (111, "500x20")] {
        let (data, parents) = parents(number, 16384);
        let children: usize = parents.iter().map(|p| p.2.len()).sum();
        group.throughput(Throughput::Elements(children as u64));
        group.bench_function(format!("pool build/{label}/{children} children"), |b| {
            b.iter_batched_ref(
                || Pool::for_data(&data),
                |pool| {
                    for (heads, tails, unscheduled) in &parents {
                        let parent = pool.add_parent(heads, tails, unscheduled, &data).unwrap();
                        for &job in unscheduled {
                            pool.add_child(parent, job).unwrap();
                        }
                    }
                    black_box(pool.child_count())
                },
                BatchSize::LargeInput,
            )
        });
        let pool = search_pool(&taillard(number).unwrap(), Exploration::DepthFirst, 1024).unwrap();
        group.throughput(Throughput::Elements(pool.child_count() as u64));
        group.bench_function(format!("cpu lb2 one core/{label}/{} children", pool.child_count()), |b| {
            b.iter(|| cpu::bound_pool(&data, black_box(&pool), LowerBound::Lb2, 1))
        });
    }
    group.finish();
}

criterion_group!(benches, pool_building);
criterion_main!(benches);
