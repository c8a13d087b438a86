//! The library's errors name the configuration field that is wrong (`samples`, `tile_workgroup`)
//! and write the fields a message mentions in backticks (`` lower `n` ``, `` `bench=queue` ``);
//! the command line names its flags. This maps one to the other in the messages it prints.

use clap::CommandFactory;
use simtlab::Error;

/// Fields whose flag has another name than the field, in one subcommand (or in every one where
/// the words are empty): (subcommand words, library field, flag without `--`).
const RENAMED: &[(&[&str], &str, &str)] = &[
    // pt::sweep::Sweep::bench
    (&["bench", "pt"], "bench", "case"),
    // matmul::Ladder's lists
    (&["bench", "matmul"], "variants", "kernel"),
    (&["bench", "matmul"], "compilers", "compiler"),
    // experiments::zhang::BenchmarkSweep
    (&["bench", "zhang"], "benchmark", "kernel"),
    (&["bench", "zhang"], "variants", "strategy"),
    // the kernels' sizes that `bench zhang --n` sets (lbm and mcubes: the grid's edge)
    (&["bench", "zhang"], "edge", "n"),
    (&["bench", "zhang"], "children", "n"),
    // kernels::flowshop::commands::SolveOptions' fields, and the checkpoint's (SearchOptions')
    (&["flowshop", "solve"], "upper_bound", "ub"),
    (&["flowshop", "solve"], "memory_mib", "memory"),
    // kernels::flowshop::bench::BenchConfig's lists
    (&["bench", "flowshop"], "pool_sizes", "pools"),
    (&["bench", "flowshop"], "strategies", "exploration"),
    (&["bench", "flowshop"], "branchless", "kernel"),
    (&["bench", "flowshop"], "walk_prefix", "heads"),
    // profile::compiled_kernels' filter
    (&["registers"], "filter", "shader"),
    // profile::ShaderDispatch::bindings (profile, remap, pt)
    (&[], "bindings", "bind"),
];

/// `e` with the fields it names written as the flags that set them, in the subcommand this
/// process was started with: see [`name_flags_in`].
pub fn name_flags(e: Error) -> Error {
    let cli = crate::Cli::command();
    let words = subcommand_words(&cli, std::env::args().skip(1));
    name_flags_in(e, &cli, &words)
}

/// `e` with the fields it names written as the flags that set them in subcommand `words` of
/// `cli`: an [`Error::Invalid`]'s field (`samples` becomes `--samples`, `loop_n/loop_len`
/// becomes `--loop-n/--loop-len`), and in every message each backticked field (`` `n` ``
/// becomes `--n`, `` `n=512` `` becomes `--n 512`) where one of the command line's flags has
/// that field's name. Anything else is left as the library wrote it.
pub fn name_flags_in(e: Error, cli: &clap::Command, words: &[String]) -> Error {
    let flag = |field: &str| flag_of(cli, words, field);
    let text = |s: String| flags_in_text(&flag, &s);
    match e {
        Error::Invalid { what, message } => {
            let parts: Vec<Option<String>> = what.split('/').map(flag).collect();
            let what = if parts.iter().all(Option::is_some) { parts.into_iter().flatten().collect::<Vec<_>>().join("/") } else { what };
            Error::Invalid { what, message: text(message) }
        }
        Error::Limit { what, requested, limit, hint } => Error::Limit { what: text(what), requested, limit, hint: text(hint) },
        Error::NoAdapter { wanted, available, hint } => Error::NoAdapter { wanted, available, hint: text(hint) },
        Error::Unsupported { what, adapter, hint } => Error::Unsupported { what: text(what), adapter, hint: text(hint) },
        Error::Timeout { what, seconds, hint } => Error::Timeout { what: text(what), seconds, hint: text(hint) },
        Error::Cancelled { what, kept } => Error::Cancelled { what, kept: text(kept) },
        Error::CheckFailed { failed, total, first } => Error::CheckFailed { failed, total, first: text(first) },
        other => other,
    }
}

/// The subcommand names at the start of `args` (`bench`, `pt` of `bench pt --case sync`):
/// each word that names a subcommand of the one before it.
fn subcommand_words(cli: &clap::Command, args: impl Iterator<Item = String>) -> Vec<String> {
    let mut command = cli;
    let mut words = Vec::new();
    for arg in args {
        if let Some(sub) = command.find_subcommand(&arg) {
            words.push(sub.get_name().to_string());
            command = sub;
        }
    }
    words
}

/// `text` with each backticked field that is a flag (`` `n` ``, `` `n=512` ``) written as the
/// flag (`--n`, `--n 512`); other backticked words stay as they are.
fn flags_in_text(flag: &dyn Fn(&str) -> Option<String>, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`').map(|c| open + 1 + c) else { break };
        out.push_str(&rest[..open]);
        let span = &rest[open + 1..close];
        let (field, value) = match span.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (span, None),
        };
        let is_field = !field.is_empty() && field.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        match (is_field.then(|| flag(field)).flatten(), value) {
            (Some(flag), Some(v)) => out.push_str(&format!("{flag} {v}")),
            (Some(flag), None) => out.push_str(&flag),
            (None, _) => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The long flag (`--tile-workgroup`) of the argument named `field` (`tile_workgroup`, or a
/// field of [`RENAMED`] in subcommand `words`): looked for in that subcommand and the ones
/// above it first, then anywhere in `cli`.
fn flag_of(cli: &clap::Command, words: &[String], field: &str) -> Option<String> {
    if let Some((_, _, flag)) = RENAMED.iter().find(|(w, f, _)| *f == field && (w.is_empty() || w.iter().eq(words.iter()))) {
        return Some(format!("--{flag}"));
    }
    let mut chain = vec![cli];
    for w in words {
        let Some(sub) = chain.last().and_then(|c| c.find_subcommand(w)) else { break };
        chain.push(sub);
    }
    chain.iter().rev().find_map(|c| own_flag(c, field)).or_else(|| flag_in(cli, field))
}

/// The long flag of `command`'s own argument named `field`.
fn own_flag(command: &clap::Command, field: &str) -> Option<String> {
    let long = field.replace('_', "-");
    command
        .get_arguments()
        .find(|a| a.get_id().as_str() == field || a.get_long() == Some(long.as_str()))
        .and_then(|a| a.get_long())
        .map(|l| format!("--{l}"))
}

/// [`own_flag`] in `command` or any of its subcommands.
fn flag_in(command: &clap::Command, field: &str) -> Option<String> {
    own_flag(command, field).or_else(|| command.get_subcommands().find_map(|c| flag_in(c, field)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_is_named_by_its_flag() {
        let e = name_flags(Error::invalid("samples", "0: at least one timed sample is needed"));
        assert!(e.to_string().starts_with("invalid --samples: 0"), "{e}");
        let e = name_flags(Error::invalid("tile_workgroup", "0: use 1..=256 invocations per workgroup"));
        assert!(e.to_string().contains("--tile-workgroup"), "{e}");
        // not a flag: left as the library wrote it
        let e = name_flags(Error::invalid("the shader's bindings", "x"));
        assert!(e.to_string().starts_with("invalid the shader's bindings: x"), "{e}");
    }

    #[test]
    fn fields_in_a_message_are_named_by_their_flags() {
        let cli = crate::Cli::command();
        let pt = ["bench".to_string(), "pt".to_string()];
        let e = name_flags_in(Error::invalid("launch", "`bench=queue` launches `workgroups` when given: give one of them"), &cli, &pt);
        assert_eq!(e.to_string(), "invalid --launch: --case queue launches --workgroups when given: give one of them");
        let e = name_flags(Error::invalid("loop_n/loop_len", "`loop_n=0` (`loop_len` 1..=4096)"));
        assert_eq!(e.to_string(), "invalid --loop-n/--loop-len: --loop-n 0 (--loop-len 1..=4096)");
        let e = name_flags(Error::Limit { what: "`n=512`".into(), requested: 2, limit: 1, hint: "lower `n`".into() });
        assert_eq!(e.to_string(), "--n 512: 2 exceeds the limit 1; lower --n");
        // backticked words that are no flag stay as written
        let e = name_flags(Error::invalid("seed", "`no_such_field` and `main()` and an odd ` tick"));
        assert_eq!(e.to_string(), "invalid --seed: `no_such_field` and `main()` and an odd ` tick");
    }

    #[test]
    fn a_renamed_field_is_named_by_its_subcommand_s_flag() {
        let cli = crate::Cli::command();
        let words = subcommand_words(&cli, ["--backend", "vulkan", "bench", "zhang", "--n", "8"].map(String::from).into_iter());
        assert_eq!(words, ["bench", "zhang"]);
        let e = name_flags_in(Error::invalid("variants", "'x' (use none, redirect or all)"), &cli, &words);
        assert!(e.to_string().starts_with("invalid --strategy: "), "{e}");
        let matmul = ["bench".to_string(), "matmul".to_string()];
        let e = name_flags_in(Error::invalid("variants", "no kernel named"), &cli, &matmul);
        assert!(e.to_string().starts_with("invalid --kernel: "), "{e}");
        let solve = ["flowshop".to_string(), "solve".to_string()];
        let e = name_flags_in(Error::invalid("resume", "written for `upper_bound=1300`, not `memory_mib`"), &cli, &solve);
        assert_eq!(e.to_string(), "invalid --resume: written for --ub 1300, not --memory");
        let bench = ["bench".to_string(), "flowshop".to_string()];
        let e = name_flags_in(Error::invalid("pool_sizes", "x"), &cli, &bench);
        assert_eq!(e.to_string(), "invalid --pools: x");
        let e = name_flags_in(Error::invalid("strategies", "x"), &cli, &bench);
        assert_eq!(e.to_string(), "invalid --exploration: x");
    }
}
