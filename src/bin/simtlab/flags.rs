//! The library's errors name the configuration field that is wrong (`samples`, `tile_workgroup`);
//! the command line names its flags. This maps one to the other in the messages it prints.

use clap::CommandFactory;
use simtlab::Error;

/// `e` with an [`Error::Invalid`]'s field named as the flag that sets it (`samples` becomes
/// `--samples`) where one of the command line's flags has that field's name; other errors as
/// they are.
pub fn name_flags(e: Error) -> Error {
    match e {
        Error::Invalid { what, message } => match flag_of(&crate::Cli::command(), &what) {
            Some(flag) => Error::Invalid { what: flag, message },
            None => Error::Invalid { what, message },
        },
        other => other,
    }
}

/// The long flag (`--tile-workgroup`) of the argument named `field` (`tile_workgroup`) in
/// `command` or any of its subcommands.
fn flag_of(command: &clap::Command, field: &str) -> Option<String> {
    let long = field.replace('_', "-");
    command
        .get_arguments()
        .find(|a| a.get_id().as_str() == field || a.get_long() == Some(long.as_str()))
        .and_then(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .or_else(|| command.get_subcommands().find_map(|c| flag_of(c, field)))
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
}
