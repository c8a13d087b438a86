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

    /// `T`'s name table is its JSON spelling both ways.
    fn table_is_serde<T: simtlab::harness::Named + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned>() {
        for (&value, &name) in T::VALUES.iter().zip(T::NAMES) {
            assert_eq!(serde_json::to_value(value).unwrap(), serde_json::Value::from(name));
            assert_eq!(serde_json::from_value::<T>(serde_json::Value::from(name)).unwrap(), value);
        }
    }

    #[test]
    fn name_tables_are_serde_names() {
        use simtlab::kernels::flowshop::{commands, Branching};
        table_is_serde::<commands::Device>();
        table_is_serde::<commands::Search>();
        table_is_serde::<commands::KernelVariant>();
        table_is_serde::<commands::Heads>();
        table_is_serde::<Branching>();
        table_is_serde::<simtlab::kernels::split::MaskLayout>();
        table_is_serde::<simtlab::remap::Variants>();
        table_is_serde::<simtlab::experiments::zhang::Benchmark>();
    }

    #[test]
    fn names_parse() {
        use simtlab::kernels::flowshop::Exploration;
        let names = |values: &[(&'static str, &'static str)]| values.iter().map(|v| v.0).collect::<Vec<_>>();
        all_names_parse::<Exploration>(crate::flowshop::EXPLORATIONS);
        all_names_parse::<simtlab::remap::Strategy>(&names(crate::remap::STRATEGIES));
        all_names_parse::<simtlab::pt::sweep::Bench>(&names(crate::bench::pt::CASES));
    }
}
