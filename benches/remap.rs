//! Host remap mechanisms per element at 2^20 elements, R = 10 classes, W = 32, against a
//! comparison sort by class.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use simtlab::remap::{best_defer_threshold, classify_loops, gpu_regroup_reference, redirect_index, Bucketing, LamPlan};

const N: usize = 1 << 20;
const CLASSES: usize = 10;
const WIDTH: u32 = 32;

/// Trip counts with warps mostly of one value plus 25% strays: the case LAM is built for
/// (many elements already in place), deterministic across runs.
fn trips() -> Vec<u32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..N)
        .map(|i| {
            let r = next();
            let class = if r % 4 == 0 { (r >> 8) % CLASSES as u64 } else { (i / WIDTH as usize % CLASSES) as u64 };
            (class * 100 + (r >> 32) % 100) as u32
        })
        .collect()
}

fn remap(c: &mut Criterion) {
    let trips = trips();
    let classes = classify_loops(&trips, CLASSES, Bucketing::EqualWidth).expect("classify");
    let mut group = c.benchmark_group("remap_2^20_R10_W32");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));

    group.bench_function("classify_loops_equal_width", |b| {
        b.iter(|| classify_loops(black_box(&trips), CLASSES, Bucketing::EqualWidth).expect("classify"))
    });
    group.bench_function("lam_plan", |b| b.iter(|| LamPlan::new(black_box(&classes), WIDTH).expect("plan")));
    let plan = LamPlan::new(&classes, WIDTH).expect("plan");
    group.bench_function("lam_permute_u32", |b| b.iter(|| plan.permute(black_box(&trips)).expect("permute")));
    group.bench_function("redirect_counting_sort", |b| b.iter(|| redirect_index(black_box(&classes))));
    group.bench_function("gpu_regroup_reference", |b| {
        b.iter(|| gpu_regroup_reference(black_box(classes.ids()), CLASSES as u32, 256).expect("regroup"))
    });
    // once per workload, not per launch: one emulation per class boundary
    group.bench_function("defer_threshold", |b| {
        b.iter(|| best_defer_threshold(black_box(&trips), WIDTH, CLASSES as u32).expect("threshold"))
    });
    group.bench_function("sort_by_key_baseline", |b| {
        b.iter_batched(
            || (0..N as u32).collect::<Vec<u32>>(),
            |mut index| {
                let ids = classes.ids();
                index.sort_by_key(|&i| ids[i as usize]);
                index
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
    eprintln!("LAM moves {} of {N} elements ({:.1}%)", plan.moved(), 100.0 * plan.moved() as f64 / N as f64);
}

criterion_group!(benches, remap);
criterion_main!(benches);
