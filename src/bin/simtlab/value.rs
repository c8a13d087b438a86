//! clap parsers for library types, so that the library needs no clap: an enum is parsed by its
//! name table ([`Named`]: each value by its short name where it has one), and `--help` lists
//! them.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use simtlab::harness::Named;

/// Parses one of `T`'s values by [`Named::short_name`] (its name table, in its order); `help`
/// gives a line for some of its values, which `--help` lists under the option.
pub fn choice<T: Named + Send + Sync>(help: &'static [(T, &'static str)]) -> impl TypedValueParser<Value = T> {
    choice_of(T::VALUES, help)
}

/// As [`choice`], offering only `values`: any other value is refused as an unknown name is.
pub fn choice_of<T: Named + Send + Sync>(values: &'static [T], help: &'static [(T, &'static str)]) -> impl TypedValueParser<Value = T> {
    let values = values.iter().map(|&value| {
        let name = PossibleValue::new(value.short_name());
        match help.iter().find(|h| h.0 == value) {
            Some(&(_, line)) => name.help(line),
            None => name,
        }
    });
    PossibleValuesParser::new(values).try_map(|name: String| T::from_name(&name).ok_or_else(|| format!("'{name}' names no value")))
}

#[cfg(test)]
mod tests {
    use simtlab::harness::Named;

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
        table_is_serde::<simtlab::kernels::flowshop::Exploration>();
        table_is_serde::<simtlab::pt::sweep::Bench>();
        table_is_serde::<simtlab::remap::Strategy>();
    }

    /// Each short name is what the command line offers for its value (the name is not), JSON
    /// reads it, and serde writes the name.
    fn short_names_are_the_command_lines<T>(short: &[(&str, T)])
    where
        T: Named + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned + Send + Sync,
    {
        use clap::builder::TypedValueParser;
        assert_eq!(T::SHORT_NAMES, short);
        let cmd = clap::Command::new("simtlab");
        let parser = super::choice::<T>(&[]);
        let offered: Vec<String> = parser.possible_values().unwrap().map(|v| v.get_name().to_string()).collect();
        assert_eq!(offered, T::VALUES.iter().map(|v| v.short_name()).collect::<Vec<_>>());
        for &(name, value) in short {
            assert_eq!(value.short_name(), name);
            assert_eq!(T::from_name(name), Some(value), "{name}");
            assert_eq!(serde_json::from_value::<T>(serde_json::Value::from(name)).unwrap(), value, "{name}");
            assert_eq!(serde_json::to_value(value).unwrap(), serde_json::Value::from(value.name()), "{name}");
            assert_eq!(parser.parse_ref(&cmd, None, std::ffi::OsStr::new(name)).unwrap(), value, "{name}");
            assert!(parser.parse_ref(&cmd, None, std::ffi::OsStr::new(value.name())).is_err(), "{name}");
        }
    }

    #[test]
    fn names_parse() {
        use simtlab::kernels::flowshop::Exploration;
        fn names<T: Named>(help: &[(T, &str)]) -> Vec<&'static str> {
            help.iter().map(|h| h.0.short_name()).collect()
        }
        all_names_parse::<Exploration>(&names(crate::flowshop::EXPLORATIONS));
        all_names_parse::<simtlab::remap::Strategy>(&names(crate::remap::STRATEGIES));
        all_names_parse::<simtlab::pt::sweep::Bench>(&names(crate::bench::pt::CASES));
    }

    #[test]
    fn short_names_parse() {
        use simtlab::kernels::flowshop::Exploration;
        use simtlab::pt::sweep::Bench;
        short_names_are_the_command_lines(&[("dfs", Exploration::DepthFirst), ("bfs", Exploration::BreadthFirst)]);
        short_names_are_the_command_lines(&[("probe", Bench::Capability)]);
        short_names_are_the_command_lines::<simtlab::remap::Strategy>(&[]);
    }

    #[test]
    fn remap_offers_the_strategies_for_shaders() {
        use clap::builder::TypedValueParser;
        use simtlab::remap::Strategy;
        let cmd = clap::Command::new("simtlab");
        let parser = super::choice_of(Strategy::FOR_SHADERS, crate::remap::STRATEGIES);
        let offered: Vec<String> = parser.possible_values().unwrap().map(|v| v.get_name().to_string()).collect();
        assert_eq!(offered, ["auto", "redirect", "gpu", "none"]);
        assert_eq!(parser.parse_ref(&cmd, None, std::ffi::OsStr::new("gpu")).unwrap(), Strategy::GpuRegroup);
        for refused in ["lam", "tile", "defer"] {
            assert!(parser.parse_ref(&cmd, None, std::ffi::OsStr::new(refused)).is_err(), "{refused}");
        }
        for &(s, line) in crate::remap::STRATEGIES {
            assert!(Strategy::FOR_SHADERS.contains(&s) && !line.is_empty(), "{s}");
        }
        assert_eq!(crate::remap::STRATEGIES.len(), Strategy::FOR_SHADERS.len());
    }
}
