//! `simtlab list` and `simtlab run WORKLOAD`: the registry from the command line.

use crate::gpu_args::{open_gpu, BenchGpuArgs};
use crate::output::{finish, Output};
use simtlab::{Error, Result};

pub fn list(json: bool) -> Result<()> {
    let all = simtlab::workload::registry();
    if json {
        let list: Vec<_> = all.iter().map(|w| w.describe()).collect();
        println!("{}", serde_json::to_string_pretty(&list).map_err(|e| Error::invalid("json", e.to_string()))?);
        return Ok(());
    }
    let width = all.iter().map(|w| w.name().len()).max().unwrap_or(0);
    for w in &all {
        println!("{:<width$}  {:<12}  {}", w.name(), w.family(), w.summary());
    }
    println!("\n`simtlab run NAME --scale tiny|quick|paper [--param name=value]...`; `simtlab list --json` shows every parameter");
    Ok(())
}

pub fn run(gpu_args: &BenchGpuArgs, name: &str, params: &[String], scale: &str, output: &Output) -> Result<()> {
    use simtlab::workload::{self, Scale};
    let scale = match scale {
        "tiny" => Scale::Tiny,
        "quick" => Scale::Quick,
        _ => Scale::Full,
    };
    let w = workload::find(name)?;
    let overrides = params.iter().map(|p| workload::parse_override(p)).collect::<Result<Vec<_>>>()?;
    let values = workload::with_overrides(&*w, w.params(scale), &overrides)?;
    let gpu = open_gpu(gpu_args)?;
    let records = w.run(&gpu, &values, &output.protocol())?;
    finish(&records, output)
}
