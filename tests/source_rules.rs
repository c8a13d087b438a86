//! Rules the library's source keeps, read from `src/` (everything but `src/bin`): its messages
//! name configuration fields, never the command line's flags (`--n`), and a module imports only
//! its own layer or the ones beneath it (ARCHITECTURE.md).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files that still spell flags in string literals, with how many such literals each holds.
/// Every other file of the library holds none: its messages name the configuration field and
/// its range (`invalid n: 0 (use 1..=...)`, `` lower `n` ``), and the binary writes each field
/// as its flag (`src/bin/simtlab/flags.rs`). A file here may only go down (then lower its
/// number); any other file holding one fails.
const FLAGS_LEFT: &[(&str, usize)] = &[
    // Point keys, not messages: the `simtlab bench` arguments that rerun each `reproduce`
    // point (the binary's tests parse them back into the point's configuration); results files
    // (benches/results/h100) name their points by them, so they stay as they are.
    ("experiments/carrillo.rs", 5),
    ("experiments/gupta.rs", 26),
    ("experiments/ryoo.rs", 3),
    // Chromium's own switch (--enable-unsafe-webgpu), not one of simtlab's flags
    ("gpu/mod.rs", 1),
];

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's source files as (path under `src/`, text), `src/bin` left out.
fn library_sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out: Vec<(String, String)> = files
        .into_iter()
        .map(|p| (p.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/"), std::fs::read_to_string(&p).unwrap()))
        .filter(|(name, _)| !name.starts_with("bin/"))
        .collect();
    out.sort();
    out
}

/// The string literals of Rust source `text` with their lines; comments (doc comments
/// included) and char literals are skipped.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && next == Some('*') {
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            i += 2;
            continue;
        } else if c == '\'' {
            // a char literal ('"', '\'', '\u{..}'); a lifetime has no closing quote near
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 2;
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // a raw string: r"..." or r#"..."#
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                let start_line = line;
                let mut j = i + 2 + hashes;
                let mut body = String::new();
                while j < chars.len() && !(chars[j] == '"' && chars[j + 1..].iter().take(hashes).filter(|&&h| h == '#').count() == hashes) {
                    line += usize::from(chars[j] == '\n');
                    body.push(chars[j]);
                    j += 1;
                }
                out.push((start_line, body));
                i = j + 1 + hashes;
                continue;
            }
        } else if c == '"' {
            let start_line = line;
            let mut body = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    body.push(chars[i]);
                    i += 1;
                }
                line += usize::from(chars[i] == '\n');
                body.push(chars[i]);
                i += 1;
            }
            out.push((start_line, body));
        }
        i += 1;
    }
    out
}

/// Whether `s` holds a command-line flag: `--` and then a letter (`---` rules and `--` alone
/// are not flags).
fn has_flag(s: &str) -> bool {
    s.as_bytes().windows(3).any(|w| w[0] == b'-' && w[1] == b'-' && w[2].is_ascii_alphabetic()) && !s.contains("---")
}

#[test]
fn library_messages_name_fields_not_flags() {
    let left: BTreeMap<&str, usize> = FLAGS_LEFT.iter().copied().collect();
    let mut problems = Vec::new();
    for (name, text) in library_sources() {
        let flags: Vec<(usize, String)> = string_literals(&text).into_iter().filter(|(_, s)| has_flag(s)).collect();
        let allowed = left.get(name.as_str()).copied().unwrap_or(0);
        if flags.len() > allowed {
            let lines: Vec<String> = flags.iter().map(|(l, s)| format!("  src/{name}:{l}: \"{s}\"")).collect();
            problems.push(format!(
                "src/{name} spells {} command-line flag(s) in strings (allowed {allowed}); name the field and its range, the binary maps it to its flag:\n{}",
                flags.len(),
                lines.join("\n")
            ));
        } else if flags.len() < allowed {
            problems.push(format!("src/{name} now holds {} flag string(s): lower its FLAGS_LEFT entry from {allowed}", flags.len()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_finds_flags_in_strings_only() {
    let text = "/// a doc --n\n// a comment --n\nlet a = '\"'; let b = \"--n\"; let c = r#\"x --tier\"#; let d = \"---\";\n";
    let found: Vec<(usize, String)> = string_literals(text).into_iter().filter(|(_, s)| has_flag(s)).collect();
    assert_eq!(found, [(3, "--n".to_string()), (3, "x --tier".to_string())]);
}

/// The layer of a top-level module, bottom first, as ARCHITECTURE.md draws them; `None` for the
/// crate root.
fn layer(module: &str) -> Option<usize> {
    Some(match module {
        "error" | "rng" | "gpu" | "harness" | "divergence" => 0,
        "profile" | "remap" | "pt" | "occupancy" | "kernels" => 1,
        "workload" => 2,
        "experiments" | "report" => 3,
        "ui" => 4,
        _ => return None,
    })
}

/// The top-level modules that `text` names as `crate::MODULE` (in `use crate::{a, b::c}` too),
/// comments left out.
fn crate_modules(text: &str) -> Vec<String> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(body.split(',').map(|p| ident(p.trim())).filter(|n| !n.is_empty()));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let mut found = Vec::new();
    for (name, text) in library_sources() {
        let own = name.split('/').next().unwrap().trim_end_matches(".rs");
        let Some(own_layer) = layer(own) else { continue };
        for module in crate_modules(&text) {
            if layer(&module).is_some_and(|l| l > own_layer) && !found.contains(&(name.clone(), module.clone())) {
                found.push((name.clone(), module));
            }
        }
    }
    let upward: Vec<String> = found.iter().map(|(f, m)| format!("src/{f} imports crate::{m}, a layer above its own")).collect();
    assert!(upward.is_empty(), "{}", upward.join("\n"));
}

const NATIVE_ONLY: &str = "cfg(not(target_arch = \"wasm32\"))";

/// The name of the function a line declares (`pub async fn x<T>(` gives `x`), if it does.
fn declared_fn(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once("fn ")?;
    let before = &line[..line.len() - rest.len() - 3];
    if !before.split_whitespace().all(|w| matches!(w, "pub" | "pub(crate)" | "pub(super)" | "async" | "const" | "unsafe")) {
        return None;
    }
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// Every `block_on(` call of the library's source as (file, enclosing function, whether the
/// function, its attributes or its body before the call carry the native-only cfg).
fn block_on_calls() -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for (name, text) in library_sources() {
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !code.contains("block_on(") || declared_fn(code).is_some() {
                continue;
            }
            let Some(start) = (0..at).rev().find(|&i| declared_fn(lines[i]).is_some()) else { continue };
            let function = declared_fn(lines[start]).unwrap().to_string();
            let attributes =
                (0..start).rev().take_while(|&i| lines[i].trim_start().starts_with("#[") || lines[i].trim_start().starts_with("///"));
            let native = attributes.chain(start..at).any(|i| lines[i].contains(NATIVE_ONLY));
            out.push((name.clone(), function, native));
        }
    }
    out
}

/// No blocking call is compiled for wasm32: there the browser answers the GPU only after
/// control returns to the page's event loop, so a call that waits could only fail in the page.
/// Native-only, a page that calls one fails to compile instead.
#[test]
fn blocking_calls_are_native_only() {
    let calls = block_on_calls();
    assert!(
        calls.iter().any(|(file, f, native)| file == "gpu/mod.rs" && f == "new" && *native),
        "Gpu::new not found native-only: {calls:?}"
    );
    let on_wasm: Vec<String> = calls.iter().filter(|(_, _, native)| !native).map(|(file, f, _)| format!("src/{file}: {f}")).collect();
    assert!(
        on_wasm.is_empty(),
        "a blocking call compiled for wasm32 fails only in the page: mark its function {NATIVE_ONLY}:\n{}",
        on_wasm.join("\n")
    );
}

#[test]
fn declared_fn_reads_declarations_only() {
    assert_eq!(declared_fn("    pub async fn read_async<T: bytemuck::Pod>(&self)"), Some("read_async"));
    assert_eq!(declared_fn("pub(crate) fn block_on<F>(future: F)"), Some("block_on"));
    assert_eq!(declared_fn("        let f = |x| x; // fn here"), None);
    assert_eq!(declared_fn("    warps: Option<fn(&Gpu) -> u32>,"), None);
}
