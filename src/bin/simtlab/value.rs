//! clap parsers for library types, so that the library needs no clap: an enum is parsed by its
//! serde names (kebab-case), and `--help` lists them.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde::de::DeserializeOwned;

/// Parses one of `names` (the enum's serde names) into `T`.
pub fn named<T>(names: &'static [&'static str]) -> impl TypedValueParser<Value = T>
where
    T: DeserializeOwned + Clone + Send + Sync + 'static,
{
    PossibleValuesParser::new(names)
        .try_map(|name: String| serde_json::from_value::<T>(serde_json::Value::String(name.clone())).map_err(|e| format!("'{name}': {e}")))
}

/// As [`named`], with a help line per name (`""`: none), which `--help` lists under the option.
pub fn described<T>(values: &'static [(&'static str, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: DeserializeOwned + Clone + Send + Sync + 'static,
{
    let values = values.iter().map(|&(name, help)| {
        let value = PossibleValue::new(name);
        if help.is_empty() {
            value
        } else {
            value.help(help)
        }
    });
    PossibleValuesParser::new(values)
        .try_map(|name: String| serde_json::from_value::<T>(serde_json::Value::String(name.clone())).map_err(|e| format!("'{name}': {e}")))
}

#[cfg(test)]
mod tests {
    /// Every name listed for a parser is a variant of its type.
    pub fn all_names_parse<T: serde::de::DeserializeOwned>(names: &[&str]) {
        for name in names {
            assert!(serde_json::from_value::<T>(serde_json::Value::String(name.to_string())).is_ok(), "'{name}' is not a variant");
        }
    }

    #[test]
    fn names_parse() {
        use crate::bench::micro::{DISTRIBUTIONS, PATTERNS};
        all_names_parse::<simtlab::kernels::micro::Pattern>(PATTERNS);
        all_names_parse::<simtlab::kernels::micro::Distribution>(DISTRIBUTIONS);
        use simtlab::kernels::flowshop::{commands, gpu::ThreadMapping, Branching, Exploration, LowerBound};
        let names = |values: &[(&'static str, &'static str)]| values.iter().map(|v| v.0).collect::<Vec<_>>();
        all_names_parse::<LowerBound>(crate::flowshop::BOUNDS);
        all_names_parse::<Exploration>(crate::flowshop::EXPLORATIONS);
        all_names_parse::<commands::Device>(crate::flowshop::DEVICES);
        all_names_parse::<Branching>(&names(crate::flowshop::BRANCHINGS));
        all_names_parse::<commands::KernelVariant>(&names(crate::flowshop::KERNELS));
        all_names_parse::<ThreadMapping>(&names(crate::flowshop::MAPPINGS));
        all_names_parse::<commands::Heads>(crate::flowshop::HEADS);
        all_names_parse::<simtlab::experiments::zhang::Benchmark>(crate::bench::zhang::BENCHMARKS);
        all_names_parse::<simtlab::remap::Variants>(&names(crate::bench::zhang::VARIANTS));
        all_names_parse::<simtlab::kernels::split::MaskLayout>(&names(crate::bench::carrillo::MASK_LAYOUTS));
        all_names_parse::<simtlab::kernels::micro::Distribution>(&names(crate::bench::remap::DISTRIBUTIONS));
        all_names_parse::<simtlab::pt::cases::sync::Work>(&names(crate::bench::pt::WORKS));
        all_names_parse::<simtlab::remap::Strategy>(&names(crate::remap::STRATEGIES));
        all_names_parse::<simtlab::pt::cases::forest::Shape>(&names(crate::bench::pt::SHAPES));
        all_names_parse::<simtlab::pt::cases::prodcons::Workload>(&names(crate::bench::pt::WORKLOADS));
        all_names_parse::<simtlab::pt::barrier::BarrierFence>(&names(crate::bench::pt::FENCES));
        all_names_parse::<simtlab::pt::barrier::BarrierArrival>(&names(crate::bench::pt::ARRIVALS));
        all_names_parse::<simtlab::pt::queue::QueueKind>(&names(crate::bench::pt::QUEUE_KINDS));
        all_names_parse::<simtlab::pt::sweep::Bench>(&names(crate::bench::pt::CASES));
    }
}
