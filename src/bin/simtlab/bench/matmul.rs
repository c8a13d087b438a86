//! `simtlab bench matmul`: Ryoo's matmul ladder.

use crate::output::{finish, Output};
use crate::output::{say, sayln};
use clap::Args;
use simtlab::gpu::spirv::SpirvModule;
use simtlab::harness::Record;
use simtlab::kernels::matmul::{self, Compiler, Ladder, RegtileConfig, Variant};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct MatmulCli {
    #[command(flatten)]
    pub args: MatmulArgs,
    #[command(flatten)]
    pub output: Output,
}

/// `simtlab bench matmul`.
#[derive(Clone, Debug, Args)]
pub struct MatmulArgs {
    /// Kernels: naive, tiled4, tiled8, tiled12, tiled16, unrolled, prefetch, regtile or all
    /// (comma list).
    #[arg(long, default_value = "all")]
    pub kernel: String,
    /// Square size M = N = K. Default: the paper's 4096, or 512 on a CPU adapter (lavapipe,
    /// llvmpipe), where 4096 runs past the submission timeout.
    #[arg(long)]
    pub n: Option<usize>,
    /// Rows of A and C (default: n).
    #[arg(long)]
    pub m: Option<usize>,
    /// Columns of A, rows of B (default: n).
    #[arg(long)]
    pub k: Option<usize>,
    /// regtile: invocations per workgroup along N and M.
    #[arg(long, default_value_t = 16)]
    pub wg_x: u32,
    #[arg(long, default_value_t = 8)]
    pub wg_y: u32,
    /// regtile: outputs per invocation along M and N (4 or 8).
    #[arg(long, default_value_t = 8)]
    pub tm: u32,
    #[arg(long, default_value_t = 8)]
    pub tn: u32,
    /// regtile: step along K (multiple of 4).
    #[arg(long, default_value_t = 16)]
    pub bk: u32,
    /// regtile: consecutive invocations form warp_x × warp_y blocks (row order if they do not
    /// divide wg_x, wg_y).
    #[arg(long, default_value_t = 8)]
    pub warp_x: u32,
    #[arg(long, default_value_t = 4)]
    pub warp_y: u32,
    /// regtile: workgroups run in groups of this many tile rows (1 = row order).
    #[arg(long, default_value_t = 8)]
    pub group_m: u32,
    /// regtile: the form with loops for the driver to unroll (8×8 outputs per invocation only)
    /// instead of every step written out.
    #[arg(long)]
    pub loops: bool,
    /// What builds each kernel (comma list, each kernel runs once per entry): wgpu (WGSL
    /// through wgpu), naga (naga's SPIR-V with wgpu's checks, passed through to the driver),
    /// naga-unchecked (naga's SPIR-V without bounds checks, loop bounding, zeroed workgroup
    /// memory or division checks), naga-unroll (naga-unchecked with every loop marked for the
    /// driver to unroll). The passthrough paths need a Vulkan adapter.
    #[arg(long, default_value = "wgpu")]
    pub compiler: String,
    /// A SPIR-V module built elsewhere (e.g. `glslangValidator -V`) to run in place of each
    /// kernel, after the --compiler runs; repeatable. It must use the kernel's bindings,
    /// workgroup size and tile (benches/sgemm/regtile.comp is regtile's).
    #[arg(long, value_name = "FILE")]
    pub spirv: Vec<std::path::PathBuf>,
    /// Write the SPIR-V of each naga-built kernel into DIR as
    /// `<kernel>-<compiler>.spv` (for spirv-dis, spirv-opt), before running them.
    #[arg(long, value_name = "DIR")]
    pub save_spirv: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl MatmulArgs {
    /// The ladder these options ask for (the kernel list is checked here).
    pub fn ladder(&self) -> Result<Ladder> {
        Ok(Ladder {
            variants: Variant::parse_list(&self.kernel)?,
            n: self.n,
            m: self.m,
            k: self.k,
            regtile: RegtileConfig {
                wg_x: self.wg_x,
                wg_y: self.wg_y,
                tm: self.tm,
                tn: self.tn,
                bk: self.bk,
                warp_x: self.warp_x,
                warp_y: self.warp_y,
                group_m: self.group_m,
                loops: self.loops,
            },
            compilers: self.compilers()?,
            seed: self.seed,
        })
    }

    /// --compiler's list, then a passthrough entry per --spirv file.
    fn compilers(&self) -> Result<Vec<Compiler>> {
        let mut out = Compiler::parse_list(&self.compiler)?;
        for path in &self.spirv {
            let bytes = std::fs::read(path).map_err(|e| simtlab::Error::io(path, e))?;
            let label = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
            out.push(Compiler::Spirv(SpirvModule::from_bytes(label, &bytes)?));
        }
        Ok(out)
    }
}

pub fn run(gpu: &Gpu, c: &MatmulCli) -> Result<()> {
    let protocol = c.output.protocol();
    let ladder = c.args.ladder()?;
    if let Some(dir) = &c.args.save_spirv {
        save_spirv(gpu, &ladder, dir)?;
    }
    let records = simtlab::experiments::run_ladder(gpu, &ladder, &protocol)?;
    if let Some(note) = records.first().and_then(|r| r.extra_as::<matmul::MatmulExtra>()).and_then(|e| e.size_note) {
        say!("{note}");
    }
    let out = finish(&records, &c.output);
    say!("{}", ladder_table(&records));
    out
}

/// naga's SPIR-V of every kernel the ladder passes through, as files.
fn save_spirv(gpu: &Gpu, ladder: &Ladder, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| simtlab::Error::io(dir, e))?;
    let (shape, _) = ladder.shape(gpu);
    for &variant in &ladder.variants {
        let spec = matmul::spec(variant, shape, &ladder.regtile)?;
        for compiler in ladder.compilers.iter().filter(|c| matches!(c, Compiler::Naga(_))) {
            if let Some(module) = compiler.module(gpu, &spec)? {
                let path = dir.join(format!("{}-{}.spv", variant.name(), compiler.name()));
                let bytes: Vec<u8> = module.words.iter().flat_map(|w| w.to_le_bytes()).collect();
                simtlab::harness::write_file(&path, &bytes)?;
                sayln!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}

/// The ladder as in Ryoo's Figure 4: GFLOPS, speed-up over naive, threads per workgroup and
/// workgroup memory per thread.
fn ladder_table(records: &[Record]) -> String {
    let naive = records.iter().find(|r| r.family == "matmul" && r.kernel == Variant::Naive.name()).map(|r| r.stats.median);
    let width = records.iter().map(|r| r.kernel.chars().count()).max().unwrap_or(0).max(9);
    let mut out = format!("{:<width$}  GFLOPS     vs naive  threads/wg  wg bytes/thread  check\n", "kernel");
    for r in records.iter().filter(|r| r.family == "matmul") {
        let gflops = r.throughput.as_ref().map_or(f64::NAN, |t| t.value);
        let speedup = naive.map_or("-".to_string(), |t| format!("{:.2}x", t / r.stats.median));
        let extra = r.extra_as::<matmul::MatmulExtra>();
        out += &format!(
            "{:<width$}  {:>9.1}  {:>8}  {:>10}  {:>15.1}  {}\n",
            r.kernel,
            gflops,
            speedup,
            extra.as_ref().map_or("-".to_string(), |e| e.resources.threads_per_workgroup.to_string()),
            extra.as_ref().map_or(f64::NAN, |e| e.resources.workgroup_bytes_per_thread),
            if r.check.passed { "ok" } else { "FAILED" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;

    fn ladder(words: &str) -> Ladder {
        ArgsOnly::<MatmulArgs>::parse_words(words).unwrap().ladder().unwrap()
    }

    /// The defaults of the command line are the library's.
    #[test]
    fn defaults_are_the_ladders() {
        assert_eq!(ladder(""), Ladder::default());
        assert_eq!(ladder("--kernel naive,regtile --n 96 --bk 8").variants, [Variant::Naive, Variant::Regtile]);
    }

    /// A row per kernel (named with its compiler when not wgpu), its speed-up over naive and
    /// its workgroup size.
    #[test]
    fn ladder_rows_name_each_kernel_with_its_compiler() {
        let gpu = Gpu::new(&Default::default()).unwrap();
        let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
        let shape = matmul::Shape { m: 40, n: 30, k: 20 };
        let regtile = RegtileConfig::default();
        let mut records = vec![matmul::bench(&gpu, Variant::Naive, shape, &regtile, &protocol, 3).unwrap()];
        records.push(matmul::bench(&gpu, Variant::Tiled12, shape, &regtile, &protocol, 3).unwrap());
        let unchecked = Compiler::Naga(simtlab::gpu::spirv::NagaSpirvOptions::UNCHECKED);
        match matmul::bench_compiled(&gpu, Variant::Tiled12, &unchecked, shape, &regtile, &protocol, 3) {
            Ok(r) => records.push(r),
            Err(simtlab::Error::Unsupported { .. }) => {}
            Err(e) => panic!("{e}"),
        }
        let table = ladder_table(&records);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), records.len() + 1, "{table}");
        assert!(rows[1].starts_with("naive") && rows[1].contains("1.00x"), "{table}");
        assert!(rows[2].starts_with("tiled12 ") && rows[2].contains(" 144 "), "{table}");
        if let Some(row) = rows.get(3) {
            assert!(row.starts_with("tiled12 [naga-unchecked]"), "{table}");
        }
        assert!(rows[1..].iter().all(|r| r.ends_with("ok")), "{table}");
    }

    /// `reproduce` keys its ladder points by the options they stand for.
    #[test]
    fn reproduce_points_are_their_keys() {
        for (words, config) in super::super::keyed_configs::<Ladder>("ryoo") {
            assert_eq!(ladder(&words), config, "{words}");
        }
    }
}
