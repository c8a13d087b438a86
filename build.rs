// Embeds every WGSL file under shaders/ so the binary carries its kernels.
use std::{env, fs, path::Path};

fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("shaders/ is readable").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            // a new file changes its own folder, which cargo then notices
            println!("cargo:rerun-if-changed={}", p.display());
            walk(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "wgsl") {
            out.push(p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest).join("shaders");
    println!("cargo:rerun-if-changed=shaders");
    // Checkouts sharing one target dir tell themselves apart with this variable.
    println!("cargo:rerun-if-env-changed=SIMTLAB_TREE");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    let mut code = String::from("pub(crate) static FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed=shaders/{f}");
        code += &format!("    ({f:?}, include_str!({:?})),\n", root.join(f).to_string_lossy());
    }
    code += "];\n";
    code += &registry(&root, &files);
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("shaders.rs"), code).unwrap();

    // The papers' published values, assets/papers/<paper>.toml.
    let papers = Path::new(&manifest).join("assets/papers");
    println!("cargo:rerun-if-changed=assets/papers");
    let mut code = String::from("pub(crate) static PAPERS: &[(&str, &str)] = &[\n");
    let mut names: Vec<_> = fs::read_dir(&papers).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    names.sort();
    for p in names.iter().filter(|p| p.extension().is_some_and(|x| x == "toml")) {
        let stem = p.file_stem().unwrap().to_string_lossy();
        code += &format!("    ({stem:?}, include_str!({:?})),\n", p.to_string_lossy());
    }
    code += "];\n";
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("papers.rs"), code).unwrap();

    // The commit a benchmark record was measured with.
    let hash = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SIMTLAB_GIT_HASH={hash}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}

/// A compute entry point found in a WGSL file: name and its `@workgroup_size` text.
struct EntryPoint {
    name: String,
    workgroup_size: String,
}

/// The compute entry points of `text`: each `fn` preceded by `@compute` (attributes may sit on
/// the lines before it).
fn entry_points(text: &str) -> Vec<EntryPoint> {
    let mut found = Vec::new();
    let (mut compute, mut size) = (false, String::new());
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        if code.contains("@compute") {
            compute = true;
        }
        if let Some(rest) = code.split("@workgroup_size(").nth(1) {
            size = rest.split(')').next().unwrap_or("").trim().to_string();
        }
        if let Some(rest) = code.split("fn ").nth(1).filter(|_| compute) {
            let name = rest.split('(').next().unwrap_or("").trim().to_string();
            found.push(EntryPoint { name, workgroup_size: std::mem::take(&mut size) });
            compute = false;
        }
    }
    found
}

/// The resource bindings a WGSL file declares itself (not its imports): (group, binding, name,
/// declaration text).
fn bindings(text: &str) -> Vec<(u32, u32, String, String)> {
    let number = |code: &str, attr: &str| code.split(attr).nth(1).and_then(|r| r.split(')').next()).and_then(|n| n.trim().parse().ok());
    text.lines()
        .filter_map(|line| {
            let code = line.split("//").next().unwrap_or("").trim();
            let (group, binding) = (number(code, "@group(")?, number(code, "@binding(")?);
            let decl = code.split("var").skip(1).collect::<Vec<_>>().join("var");
            let decl = format!("var{}", decl.trim_end_matches(';'));
            // `var<space, access> name: type`: the name sits between the qualifier and the colon
            let unqualified = decl.trim_start_matches("var").trim_start();
            let unqualified =
                if unqualified.starts_with('<') { unqualified.split_once('>').map_or("", |(_, rest)| rest) } else { unqualified };
            let name = unqualified.split(':').next().unwrap_or("").trim().to_string();
            Some((group, binding, name, decl))
        })
        .collect()
}

/// The bindings a file declares and those of the files it imports (`#import name` is
/// `shaders/shared/name.wgsl`), as a kernel compiled from it sees them.
fn bindings_with_imports(root: &Path, text: &str) -> Vec<(u32, u32, String, String)> {
    let mut all = bindings(text);
    for name in text.lines().filter_map(|l| l.trim().strip_prefix("#import ")) {
        let imported = fs::read_to_string(root.join("shared").join(format!("{}.wgsl", name.trim()))).unwrap_or_default();
        all.extend(bindings_with_imports(root, &imported));
    }
    all
}

/// A WGSL struct's fields: (name, type).
type Fields = Vec<(String, String)>;

/// The structs of a file whose fields are all 32-bit scalars (`u32`, `i32`, `f32`): name and
/// fields (name, type). Laid out as `#[repr(C)]` Rust, such a struct has WGSL's own layout.
fn scalar_structs(text: &str) -> Vec<(String, Fields)> {
    let mut out = Vec::new();
    // the struct being read, its fields so far, and whether all are scalars
    let mut current: Option<(String, Fields, bool)> = None;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if let Some(name) = code.strip_prefix("struct ").and_then(|r| r.strip_suffix('{')) {
            current = Some((name.trim().to_string(), Vec::new(), true));
        } else if code.starts_with('}') {
            if let Some((name, fields, true)) = current.take().filter(|c| !c.1.is_empty()) {
                out.push((name, fields));
            }
        } else if let Some((_, fields, scalar)) = current.as_mut() {
            if let Some((field, ty)) = code.trim_end_matches(',').split_once(':') {
                let ty = ty.trim().to_string();
                *scalar &= matches!(ty.as_str(), "u32" | "i32" | "f32");
                fields.push((field.trim().to_string(), ty));
            }
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// `pub mod registry`: one module per folder, one per file (its path, declared variants and
/// bindings), one constant per compute entry point, so that a wrong shader or entry name
/// does not compile.
fn registry(root: &Path, files: &[String]) -> String {
    // The types live here too, so that the generated file compiles on its own.
    let mut code = String::from(TYPES);
    code += "/// Every WGSL file under `shaders/` and its compute entry points.\n#[allow(dead_code, reason = \"a kernel's constants exist whether or not the crate names them\")]\npub mod registry {\n";
    let mut folder = String::new();
    // the path of each entry constant, for ALL
    let mut all = Vec::new();
    for f in files {
        let text = fs::read_to_string(root.join(f)).expect("a shader file is readable");
        let entries = entry_points(&text);
        let (dir, file) = f.rsplit_once('/').unwrap_or(("", f));
        let stem = ident(file.trim_end_matches(".wgsl"));
        all.extend(entries.iter().map(|e| format!("{}::{stem}::{}", ident(dir), ident(&e.name).to_uppercase())));
        if dir != folder {
            if !folder.is_empty() {
                code += "    }\n";
            }
            folder = dir.to_string();
            code += &format!("    /// `shaders/{dir}/`.\n    pub mod {} {{\n", ident(dir));
        }
        let variants: Vec<String> = text
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("//! variants:")
                    .map(|v| v.split_whitespace().filter(|w| *w != "(none)").map(|w| format!("{w:?}")).collect())
            })
            .unwrap_or_default();
        let binds: Vec<String> = bindings(&text)
            .iter()
            .map(|(g, b, n, d)| format!("Binding {{ group: {g}, binding: {b}, name: {n:?}, declaration: {d:?} }}"))
            .collect();
        code += &format!("        /// `shaders/{f}`.\n        pub mod {stem} {{\n");
        let mut used = vec!["ShaderFile"];
        if !entries.is_empty() {
            used.push("Entry");
        }
        if !binds.is_empty() {
            used.push("Binding");
        }
        code += &format!("            use super::super::super::{{{}}};\n", used.join(", "));
        code += &format!(
            "            /// The file.\n            pub const FILE: ShaderFile = ShaderFile {{ path: {f:?}, variants: &[{}], bindings: &[{}] }};\n",
            variants.join(", "),
            binds.join(", ")
        );
        // a name declared under several `#ifdef` variants appears once
        for (name, fields) in scalar_structs(&text) {
            code += &format!(
                "            /// WGSL `struct {name}` of this file, laid out as the shader reads it.\n            #[repr(C)]\n            #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]\n            pub struct {name} {{\n"
            );
            for (field, ty) in fields {
                code += &format!("                /// `{field}`.\n                pub {field}: {ty},\n");
            }
            code += "            }\n";
        }
        let mut group0: Vec<_> =
            bindings_with_imports(root, &text).into_iter().filter(|(g, ..)| *g == 0).map(|(_, b, n, _)| (b, n)).collect();
        group0.sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)));
        group0.dedup();
        if let Some(w) = group0.windows(2).find(|w| w[0].1 == w[1].1) {
            panic!("shaders/{f}: `{}` is declared at bindings {} and {}; give each binding one name", w[0].1, w[0].0, w[1].0);
        }
        group0.sort();
        if !group0.is_empty() {
            code += "            /// Binding numbers in group 0 of the variables the file and its imports declare, by name.\n            pub mod binding {\n";
            for (b, n) in &group0 {
                code += &format!("                /// `{n}`.\n                pub const {}: u32 = {b};\n", ident(n).to_uppercase());
            }
            code += "            }\n";
        }
        for e in &entries {
            code += &format!(
                "            /// Entry point `{}`, `@workgroup_size({})`.\n            pub const {}: Entry = Entry {{ file: FILE, name: {:?}, workgroup_size: {:?} }};\n",
                e.name,
                e.workgroup_size,
                ident(&e.name).to_uppercase(),
                e.name,
                e.workgroup_size
            );
        }
        code += "        }\n";
    }
    if !folder.is_empty() {
        code += "    }\n";
    }
    code += "    /// Every compute entry point.\n    pub const ALL: &[super::Entry] = &[\n";
    for path in &all {
        code += &format!("        {path},\n");
    }
    code += "    ];\n}\n";
    code
}

const TYPES: &str = r#"
/// A WGSL file under `shaders/`, as the build found it ([`registry`]).
#[allow(dead_code, reason = "part of the registry's vocabulary whether or not a build uses every field")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderFile {
    /// Path under `shaders/`.
    pub path: &'static str,
    /// The defines it reacts to (its `//! variants:` line).
    pub variants: &'static [&'static str],
    /// The bindings it declares itself (not those of its imports).
    pub bindings: &'static [Binding],
}

/// One `@group(g) @binding(b) var…` declaration.
#[allow(dead_code, reason = "part of the registry's vocabulary whether or not a build uses every field")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Bind group.
    pub group: u32,
    /// Binding number in the group.
    pub binding: u32,
    /// The variable's name.
    pub name: &'static str,
    /// The declaration from `var` on, e.g. `var<storage, read> input: array<u32>`.
    pub declaration: &'static str,
}

/// A compute entry point of a [`ShaderFile`]: what `Gpu::kernel` compiles.
#[allow(dead_code, reason = "part of the registry's vocabulary whether or not a build uses every field")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file it is in.
    pub file: ShaderFile,
    /// The entry point's name.
    pub name: &'static str,
    /// Its `@workgroup_size` arguments as written (literals or override constants).
    pub workgroup_size: &'static str,
}
"#;
