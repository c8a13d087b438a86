//! clap parsers for library types, so that the library needs no clap: an enum is parsed by its
//! serde names (kebab-case), and `--help` lists them.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde::de::DeserializeOwned;
use simtlab::harness::Named;

/// Parses one of `T`'s names (its name table, in its order); `help` gives a line for some of
/// its values, which `--help` lists under the option.
pub fn choice<T: Named + Send + Sync>(help: &'static [(T, &'static str)]) -> impl TypedValueParser<Value = T> {
    let values = T::VALUES.iter().map(|&value| {
        let name = PossibleValue::new(value.name());
        match help.iter().find(|h| h.0 == value) {
            Some(&(_, line)) => name.help(line),
            None => name,
        }
    });
    PossibleValuesParser::new(values)
        .try_map(|name: String| T::from_name(&name).ok_or_else(|| format!("'{name}' is not one of {}", T::NAMES.join(", "))))
}

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
        use simtlab::kernels::flowshop::{commands, Branching, Exploration};
        let names = |values: &[(&'static str, &'static str)]| values.iter().map(|v| v.0).collect::<Vec<_>>();
        all_names_parse::<Exploration>(crate::flowshop::EXPLORATIONS);
        all_names_parse::<commands::Device>(crate::flowshop::DEVICES);
        all_names_parse::<Branching>(&names(crate::flowshop::BRANCHINGS));
        all_names_parse::<commands::KernelVariant>(&names(crate::flowshop::KERNELS));
        all_names_parse::<commands::Heads>(crate::flowshop::HEADS);
        all_names_parse::<simtlab::experiments::zhang::Benchmark>(crate::bench::zhang::BENCHMARKS);
        all_names_parse::<simtlab::remap::Variants>(&names(crate::bench::zhang::VARIANTS));
        all_names_parse::<simtlab::kernels::split::MaskLayout>(&names(crate::bench::carrillo::MASK_LAYOUTS));
        all_names_parse::<simtlab::remap::Strategy>(&names(crate::remap::STRATEGIES));
        all_names_parse::<simtlab::pt::sweep::Bench>(&names(crate::bench::pt::CASES));
    }
}
