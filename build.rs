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
    let mut code = String::from("pub static FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed=shaders/{f}");
        code += &format!("    ({f:?}, include_str!({:?})),\n", root.join(f).to_string_lossy());
    }
    code += "];\n";
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("shaders.rs"), code).unwrap();

    // The papers' published values, assets/papers/<paper>.toml.
    let papers = Path::new(&manifest).join("assets/papers");
    println!("cargo:rerun-if-changed=assets/papers");
    let mut code = String::from("pub static PAPERS: &[(&str, &str)] = &[\n");
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
