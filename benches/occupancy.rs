//! Times the occupancy calculator and its three curves, which a UI recomputes every frame.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use simtlab::occupancy::{calculate, find_arch, occupancy_curves, registers_curve, shared_memory_curve, threads_curve, Launch};

fn calculator(c: &mut Criterion) {
    let g80 = find_arch("g80").unwrap();
    let h100 = find_arch("h100").unwrap();
    let matmul = Launch::new(256, 11, 4096);
    let hopper = Launch::new(256, 64, 48 * 1024);

    c.bench_function("calculate/g80", |b| b.iter(|| calculate(black_box(g80), black_box(matmul)).unwrap()));
    c.bench_function("calculate/h100", |b| b.iter(|| calculate(black_box(h100), black_box(hopper)).unwrap()));
    c.bench_function("curve/threads/h100", |b| b.iter(|| threads_curve(black_box(h100), black_box(hopper)).unwrap()));
    c.bench_function("curve/registers/h100", |b| b.iter(|| registers_curve(black_box(h100), black_box(hopper)).unwrap()));
    c.bench_function("curve/shared_memory/h100", |b| b.iter(|| shared_memory_curve(black_box(h100), black_box(hopper)).unwrap()));
    c.bench_function("curves/all/h100", |b| b.iter(|| occupancy_curves(black_box(h100), black_box(hopper)).unwrap()));
    c.bench_function("curves/all/g80", |b| b.iter(|| occupancy_curves(black_box(g80), black_box(matmul)).unwrap()));
}

criterion_group!(benches, calculator);
criterion_main!(benches);
