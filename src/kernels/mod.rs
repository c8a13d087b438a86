//! Benchmark kernel families: one folder each, with the runner in `mod.rs` and the CPU
//! reference in `cpu.rs`, named like the WGSL files under `shaders/<family>/`.

pub mod blackscholes;
pub mod flowshop;
pub mod gafort;
pub mod lbm;
pub mod matmul;
pub mod mcubes;
pub mod micro;
pub mod redirect;
pub mod reduction;
pub mod split;

/// Splits `0..n` into one contiguous range per available core and runs `f` on each range on
/// its own thread; results come back in order. CPU references use it for large inputs. With
/// one core (or none known, as in the browser, which has no threads) `f` runs on the caller's.
pub fn parallel_ranges<T: Send>(n: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map(|p| p.get()).unwrap_or(1).min(n.max(1));
    if threads == 1 {
        return vec![f(0..n)];
    }
    let chunk = n.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let f = &f;
                let range = (t * chunk).min(n)..((t + 1) * chunk).min(n);
                s.spawn(move || f(range))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("reference thread panicked")).collect()
    })
}
