//! The buffers a profiled entry point binds, and their contents from specs such as
//! `u32:1024:random:7` or `file:data.bin`.

use crate::error::{Error, Result};
use crate::rng::Rng;
use std::path::PathBuf;

/// What fills one binding.
#[derive(Clone, Debug, PartialEq)]
pub enum BindingSpec {
    /// `u32:N:seq`: 0, 1, …, N-1.
    U32Seq(usize),
    /// `u32:N:zero`.
    U32Zero(usize),
    /// `u32:N:random:SEED`: uniform 32-bit values.
    U32Random(usize, u64),
    /// `f32:N:zero`.
    F32Zero(usize),
    /// `f32:N:random:SEED`: uniform in [0, 1).
    F32Random(usize, u64),
    /// `file:PATH`: raw little-endian bytes.
    File(PathBuf),
    /// Bytes given by a library caller.
    Bytes(Vec<u8>),
}

impl std::str::FromStr for BindingSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(
                "binding spec",
                format!("'{s}': {why}; use u32:N:seq, u32:N:zero, u32:N:random:SEED, f32:N:zero, f32:N:random:SEED or file:PATH"),
            )
        };
        if let Some(path) = s.strip_prefix("file:") {
            return Ok(BindingSpec::File(path.into()));
        }
        let parts: Vec<&str> = s.split(':').collect();
        let n = || parts.get(1).and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0).ok_or_else(|| bad("N must be a positive count"));
        let seed = || parts.get(3).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| bad("random needs an integer SEED"));
        let arity = |k: usize| if parts.len() == k { Ok(()) } else { Err(bad("wrong number of fields")) };
        match (parts.first().copied(), parts.get(2).copied()) {
            // seq's values are u32: past 2^32 elements they would repeat
            (Some("u32"), Some("seq")) => arity(3).and_then(|_| match n()? {
                n if n as u64 > 1 << 32 => Err(bad("seq counts 0..N-1 in u32, so N is at most 4294967296")),
                n => Ok(BindingSpec::U32Seq(n)),
            }),
            (Some("u32"), Some("zero")) => arity(3).and(Ok(BindingSpec::U32Zero(n()?))),
            (Some("u32"), Some("random")) => arity(4).and(Ok(BindingSpec::U32Random(n()?, seed()?))),
            (Some("f32"), Some("zero")) => arity(3).and(Ok(BindingSpec::F32Zero(n()?))),
            (Some("f32"), Some("random")) => arity(4).and(Ok(BindingSpec::F32Random(n()?, seed()?))),
            _ => Err(bad("unknown form")),
        }
    }
}

impl BindingSpec {
    /// The scalar type the spec writes (None for raw file bytes).
    pub fn scalar(&self) -> Option<naga::Scalar> {
        match self {
            BindingSpec::U32Seq(_) | BindingSpec::U32Zero(_) | BindingSpec::U32Random(..) => Some(naga::Scalar::U32),
            BindingSpec::F32Zero(_) | BindingSpec::F32Random(..) => Some(naga::Scalar::F32),
            BindingSpec::File(_) | BindingSpec::Bytes(_) => None,
        }
    }

    /// Size in bytes of the contents, found without making them (a file's from its metadata);
    /// `label` names the binding in the error when the size overflows.
    pub fn byte_len(&self, label: &str) -> Result<u64> {
        match self {
            BindingSpec::U32Seq(n)
            | BindingSpec::U32Zero(n)
            | BindingSpec::U32Random(n, _)
            | BindingSpec::F32Zero(n)
            | BindingSpec::F32Random(n, _) => (*n as u64).checked_mul(4).ok_or_else(|| Error::Limit {
                what: format!("{label}: {n} elements of 4 bytes"),
                requested: *n as u64,
                limit: u64::MAX / 4,
                hint: "give a smaller element count".into(),
            }),
            BindingSpec::File(path) => std::fs::metadata(path).map(|m| m.len()).map_err(|e| Error::io(path, e)),
            BindingSpec::Bytes(bytes) => Ok(bytes.len() as u64),
        }
    }

    /// The bytes of the binding's initial contents.
    pub fn bytes(&self) -> Result<Vec<u8>> {
        let words: Vec<u32> = match *self {
            BindingSpec::U32Seq(n) => (0..n).map(|i| i as u32).collect(),
            BindingSpec::U32Zero(n) | BindingSpec::F32Zero(n) => vec![0; n],
            BindingSpec::U32Random(n, seed) => Rng::new(seed).vec_u32(n),
            BindingSpec::F32Random(n, seed) => {
                let mut rng = Rng::new(seed);
                (0..n).map(|_| rng.next_f32().to_bits()).collect()
            }
            BindingSpec::File(ref path) => return std::fs::read(path).map_err(|e| Error::io(path, e)),
            BindingSpec::Bytes(ref bytes) => return Ok(bytes.clone()),
        };
        Ok(bytemuck::cast_slice(&words).to_vec())
    }
}

/// One resource binding of the entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingInfo {
    /// Bind group index.
    pub group: u32,
    /// Binding number in its group.
    pub binding: u32,
    /// The variable's name.
    pub name: String,
    /// The declaration as written (`var<storage, read> seeds: array<u32>`).
    pub declaration: String,
    /// A uniform buffer (else storage).
    pub uniform: bool,
    /// Storage the shader may write (its final contents are outputs).
    pub writable: bool,
    /// The smallest size a buffer for it may have, in bytes.
    pub min_bytes: u64,
    /// The scalar types inside its type (a typed spec must be of the one type; a struct
    /// mixing 32-bit types takes any 32-bit spec as raw words).
    pub scalars: Vec<naga::Scalar>,
}

impl BindingInfo {
    /// Whether `key` names this binding: its variable name, `N` (group 0) or `G:N`.
    pub fn matches(&self, key: &str) -> bool {
        key == self.name || key == format!("{}:{}", self.group, self.binding) || (self.group == 0 && key == self.binding.to_string())
    }

    /// `group:binding name`, as errors name it.
    pub fn label(&self) -> String {
        format!("binding {}:{} '{}' ({})", self.group, self.binding, self.name, self.declaration)
    }
}

/// A scalar type as WGSL writes it (`u32`, `f32`, `bool`).
pub fn scalar_name(s: naga::Scalar) -> String {
    match s.kind {
        naga::ScalarKind::Bool => "bool".into(),
        naga::ScalarKind::Uint => format!("u{}", s.width * 8),
        naga::ScalarKind::Sint => format!("i{}", s.width * 8),
        naga::ScalarKind::Float => format!("f{}", s.width * 8),
        _ => format!("{s:?}"),
    }
}

fn scalars_of(types: &naga::UniqueArena<naga::Type>, ty: naga::Handle<naga::Type>, out: &mut Vec<naga::Scalar>) {
    match &types[ty].inner {
        naga::TypeInner::Scalar(s) | naga::TypeInner::Vector { scalar: s, .. } | naga::TypeInner::Matrix { scalar: s, .. } => out.push(*s),
        naga::TypeInner::Atomic(s) => out.push(*s),
        naga::TypeInner::Array { base, .. } => scalars_of(types, *base, out),
        naga::TypeInner::Struct { members, .. } => members.iter().for_each(|m| scalars_of(types, m.ty, out)),
        _ => {}
    }
    out.sort_by_key(|s| scalar_name(*s));
    out.dedup();
}

/// The buffer bindings entry point `entry` uses; any other resource type is an error naming it.
/// `src` is the text given to [`super::parse`] for `module` (as written or preprocessed).
pub fn entry_bindings(src: &str, module: &naga::Module, info: &naga::valid::ModuleInfo, entry: &str) -> Result<Vec<BindingInfo>> {
    // naga's spans point into the preprocessed text (LF line ends); preprocessing is idempotent
    let preprocessed = crate::gpu::shader::preprocess_text("shader", src, &[], &|_| None).map(|s| s.text);
    let src = preprocessed.as_deref().unwrap_or(src);
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry)
        .ok_or_else(|| Error::invalid("entry point", format!("'{entry}' is not in the shader")))?;
    let uses = info.get_entry_point(index);
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| Error::invalid("shader types", e.to_string()))?;
    let mut out = Vec::new();
    for (h, g) in module.global_variables.iter() {
        let Some(b) = &g.binding else { continue };
        if uses[h].is_empty() {
            continue;
        }
        let name = g.name.clone().unwrap_or_default();
        let declaration = module
            .global_variables
            .get_span(h)
            .to_range()
            .and_then(|r| src.get(r))
            .map(|t| t.trim_end_matches(';').split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| name.clone());
        let (uniform, writable) = match g.space {
            naga::AddressSpace::Uniform => (true, false),
            naga::AddressSpace::Storage { access } => (false, access.contains(naga::StorageAccess::STORE)),
            _ => {
                return Err(Error::invalid(
                    "binding",
                    format!(
                        "binding {}:{} '{name}' ({declaration}) is a texture, sampler or other resource; simtlab profile binds storage and uniform buffers only",
                        b.group, b.binding
                    ),
                ))
            }
        };
        let mut scalars = Vec::new();
        scalars_of(&module.types, g.ty, &mut scalars);
        let min_bytes = layouter[g.ty].size as u64;
        out.push(BindingInfo { group: b.group, binding: b.binding, name, declaration, uniform, writable, min_bytes, scalars });
    }
    out.sort_by_key(|b| (b.group, b.binding));
    Ok(out)
}

/// Matches `--bind KEY=SPEC` pairs to the bindings: every binding given once, every key a
/// binding, typed specs of the binding's scalar type, at least its minimum size. Sizes are
/// checked against no device: see [`contents_within`].
pub fn contents(bindings: &[BindingInfo], given: &[(String, BindingSpec)]) -> Result<Vec<Vec<u8>>> {
    contents_within(bindings, given, &|_, _| Ok(()))
}

/// [`contents`] where `fits` checks each binding's size in bytes (against a device's limits)
/// before any memory is taken for its contents.
pub fn contents_within(
    bindings: &[BindingInfo],
    given: &[(String, BindingSpec)],
    fits: &dyn Fn(&BindingInfo, u64) -> Result<()>,
) -> Result<Vec<Vec<u8>>> {
    for (key, _) in given {
        if !bindings.iter().any(|b| b.matches(key)) {
            let known: Vec<String> = bindings.iter().map(|b| format!("{} ({}:{})", b.name, b.group, b.binding)).collect();
            return Err(Error::invalid("--bind", format!("'{key}' names no binding the entry point uses; it uses {}", known.join(", "))));
        }
    }
    let mut out = Vec::new();
    for b in bindings {
        let mut specs = given.iter().filter(|(k, _)| b.matches(k));
        let (_, spec) = specs.next().ok_or_else(|| {
            Error::invalid("--bind", format!("{} is not given; add --bind {}=SPEC (e.g. u32:1024:random:1)", b.label(), b.name))
        })?;
        if specs.next().is_some() {
            return Err(Error::invalid("--bind", format!("{} is given more than once", b.label())));
        }
        // a typed spec fills a binding of its scalar type, or raw 32-bit words of a struct
        // that mixes 32-bit types
        if let Some(s) = spec.scalar() {
            let fits = match b.scalars.as_slice() {
                [one] => *one == s,
                mixed => mixed.iter().all(|t| t.width == 4),
            };
            if !fits {
                return Err(Error::invalid(
                    "--bind",
                    format!(
                        "{} holds {}, which a {} spec does not fill; use a spec of its type or file:PATH",
                        b.label(),
                        b.scalars.iter().map(|t| scalar_name(*t)).collect::<Vec<_>>().join(" and "),
                        scalar_name(s)
                    ),
                ));
            }
        }
        let len = spec.byte_len(&b.label())?;
        if len < b.min_bytes {
            return Err(Error::invalid("--bind", format!("{} needs at least {} bytes; the spec gives {len}", b.label(), b.min_bytes)));
        }
        fits(b, len)?;
        out.push(spec.bytes()?);
    }
    Ok(out)
}
