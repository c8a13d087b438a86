//! The library's errors name the configuration field that is wrong (`samples`, `tile_workgroup`)
//! and write the fields a message mentions in backticks (`` lower `n` ``, `` `bench=queue` ``);
//! the command line names its flags. This maps one to the other in the messages it prints.

use clap::CommandFactory;
use simtlab::Error;

/// Fields whose flag has another name than the field: (library field, flag without `--`).
const RENAMED: &[(&str, &str)] = &[
    // pt::sweep::Sweep::bench is `bench pt --case`
    ("bench", "case"),
    // matmul::Ladder's lists are `bench matmul --kernel` and `--compiler`
    ("variants", "kernel"),
    ("compilers", "compiler"),
];

/// `e` with the fields it names written as the flags that set them: an [`Error::Invalid`]'s
/// field (`samples` becomes `--samples`, `loop_n/loop_len` becomes `--loop-n/--loop-len`), and
/// in every message each backticked field (`` `n` `` becomes `--n`, `` `n=512` `` becomes
/// `--n 512`) where one of the command line's flags has that field's name. Anything else is left
/// as the library wrote it.
pub fn name_flags(e: Error) -> Error {
    let cli = crate::Cli::command();
    let text = |s: String| flags_in_text(&cli, &s);
    match e {
        Error::Invalid { what, message } => {
            let parts: Vec<Option<String>> = what.split('/').map(|p| flag_of(&cli, p)).collect();
            let what = if parts.iter().all(Option::is_some) { parts.into_iter().flatten().collect::<Vec<_>>().join("/") } else { what };
            Error::Invalid { what, message: text(message) }
        }
        Error::Limit { what, requested, limit, hint } => Error::Limit { what: text(what), requested, limit, hint: text(hint) },
        Error::Unsupported { what, adapter, hint } => Error::Unsupported { what: text(what), adapter, hint: text(hint) },
        Error::Timeout { what, seconds, hint } => Error::Timeout { what: text(what), seconds, hint: text(hint) },
        Error::Cancelled { what, kept } => Error::Cancelled { what, kept: text(kept) },
        Error::CheckFailed { failed, total, first } => Error::CheckFailed { failed, total, first: text(first) },
        other => other,
    }
}

/// `text` with each backticked field that is a flag (`` `n` ``, `` `n=512` ``) written as the
/// flag (`--n`, `--n 512`); other backticked words stay as they are.
fn flags_in_text(cli: &clap::Command, text: &str) -> String {
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
        match (is_field, is_field.then(|| flag_of(cli, field)).flatten()) {
            (true, Some(flag)) => match value {
                Some(v) => out.push_str(&format!("{flag} {v}")),
                None => out.push_str(&flag),
            },
            _ => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The long flag (`--tile-workgroup`) of the argument named `field` (`tile_workgroup`, or a
/// field of [`RENAMED`]) in the command line or any of its subcommands.
fn flag_of(cli: &clap::Command, field: &str) -> Option<String> {
    match RENAMED.iter().find(|(f, _)| *f == field) {
        Some((_, flag)) => Some(format!("--{flag}")),
        None => flag_in(cli, field),
    }
}

/// [`flag_of`] without the renamed fields, searched in `command` and its subcommands.
fn flag_in(command: &clap::Command, field: &str) -> Option<String> {
    let long = field.replace('_', "-");
    command
        .get_arguments()
        .find(|a| a.get_id().as_str() == field || a.get_long() == Some(long.as_str()))
        .and_then(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .or_else(|| command.get_subcommands().find_map(|c| flag_in(c, field)))
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
        let e = name_flags(Error::invalid("launch", "`bench=queue` launches `workgroups` when given: give one of them"));
        assert_eq!(e.to_string(), "invalid --launch: --case queue launches --workgroups when given: give one of them");
        let e = name_flags(Error::invalid("loop_n/loop_len", "`loop_n=0` (`loop_len` 1..=4096)"));
        assert_eq!(e.to_string(), "invalid --loop-n/--loop-len: --loop-n 0 (--loop-len 1..=4096)");
        let e = name_flags(Error::Limit { what: "`n=512`".into(), requested: 2, limit: 1, hint: "lower `n`".into() });
        assert_eq!(e.to_string(), "--n 512: 2 exceeds the limit 1; lower --n");
        // backticked words that are no flag stay as written
        let e = name_flags(Error::invalid("variants", "`no_such_field` and `main()` and an odd ` tick"));
        assert_eq!(e.to_string(), "invalid --kernel: `no_such_field` and `main()` and an odd ` tick");
    }
}
