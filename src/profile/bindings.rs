//! The buffers a profiled entry point binds, and their contents from specs such as
//! `u32:1024:random:7` or `file:data.bin`.

use crate::error::{Error, Result};
use crate::rng::Rng;
use std::path::PathBuf;

/// What kind of resource a binding is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// A storage or uniform buffer.
    Buffer,
    /// The entry point's `var<immediate>`: set with `set_immediates`, no group or binding.
    Immediate,
    /// A sampled texture (`texture_2d<f32>`, ...).
    SampledTexture {
        /// Its view dimension.
        dimension: wgpu::TextureViewDimension,
        /// The texel kind the shader reads (f32, u32 or i32).
        kind: naga::ScalarKind,
    },
    /// A storage texture (`texture_storage_2d<rgba8unorm, write>`, ...).
    StorageTexture {
        /// Its view dimension.
        dimension: wgpu::TextureViewDimension,
        /// The format the shader declares.
        format: wgpu::TextureFormat,
    },
    /// A sampler.
    Sampler,
}

/// What fills one binding.
#[derive(Clone, Debug, PartialEq)]
pub enum BindingSpec {
    /// `u32:N:seq`: 0, 1, …, N-1.
    U32Seq(usize),
    /// `u32:N:zero`.
    U32Zero(usize),
    /// `u32:N:random:SEED`: uniform 32-bit values.
    U32Random(usize, u64),
    /// `i32:N:seq`: 0, 1, …, N-1.
    I32Seq(usize),
    /// `i32:N:zero`.
    I32Zero(usize),
    /// `i32:N:random:SEED`: uniform over all 32-bit values.
    I32Random(usize, u64),
    /// `f32:N:zero`.
    F32Zero(usize),
    /// `f32:N:random:SEED`: uniform in [0, 1).
    F32Random(usize, u64),
    /// `file:PATH`: raw little-endian bytes.
    File(PathBuf),
    /// Bytes given by a library caller.
    Bytes(Vec<u8>),
    /// `texture:WxH[xD]:FORMAT:zero|random:SEED|file:PATH`: a texture (sampled or storage) of
    /// that size (D: depth of a 3D texture or layers of an array) and format.
    Texture(TextureSpec),
    /// `sampler:nearest|linear` (clamped to the edge); a sampler not given is `nearest`.
    Sampler {
        /// Linear filtering (else nearest).
        linear: bool,
    },
}

/// Size, format and contents of a texture binding.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureSpec {
    /// Width, height and depth (or layers).
    pub size: [u32; 3],
    /// The texel format.
    pub format: wgpu::TextureFormat,
    /// What its texels start as.
    pub fill: TextureFill,
}

/// A texture's initial texels.
#[derive(Clone, Debug, PartialEq)]
pub enum TextureFill {
    /// All zero.
    Zero,
    /// Floats uniform in [0, 1) for float formats, random bits otherwise.
    Random(u64),
    /// Raw texels, rows tightly packed, little-endian.
    File(PathBuf),
}

/// The texture formats a spec may name, as WGSL writes them.
pub(crate) const TEXTURE_FORMATS: &[(&str, wgpu::TextureFormat)] = &[
    ("r32float", wgpu::TextureFormat::R32Float),
    ("r32uint", wgpu::TextureFormat::R32Uint),
    ("r32sint", wgpu::TextureFormat::R32Sint),
    ("rg32float", wgpu::TextureFormat::Rg32Float),
    ("rg32uint", wgpu::TextureFormat::Rg32Uint),
    ("rg32sint", wgpu::TextureFormat::Rg32Sint),
    ("rgba8unorm", wgpu::TextureFormat::Rgba8Unorm),
    ("rgba8snorm", wgpu::TextureFormat::Rgba8Snorm),
    ("rgba8uint", wgpu::TextureFormat::Rgba8Uint),
    ("rgba8sint", wgpu::TextureFormat::Rgba8Sint),
    ("bgra8unorm", wgpu::TextureFormat::Bgra8Unorm),
    ("rgba32float", wgpu::TextureFormat::Rgba32Float),
    ("rgba32uint", wgpu::TextureFormat::Rgba32Uint),
    ("rgba32sint", wgpu::TextureFormat::Rgba32Sint),
];

/// The texture format of a storage texture's declared format, among those a spec may name.
fn storage_format(format: naga::StorageFormat) -> Option<wgpu::TextureFormat> {
    use naga::StorageFormat as S;
    use wgpu::TextureFormat as T;
    Some(match format {
        S::R32Float => T::R32Float,
        S::R32Uint => T::R32Uint,
        S::R32Sint => T::R32Sint,
        S::Rg32Float => T::Rg32Float,
        S::Rg32Uint => T::Rg32Uint,
        S::Rg32Sint => T::Rg32Sint,
        S::Rgba8Unorm => T::Rgba8Unorm,
        S::Rgba8Snorm => T::Rgba8Snorm,
        S::Rgba8Uint => T::Rgba8Uint,
        S::Rgba8Sint => T::Rgba8Sint,
        S::Bgra8Unorm => T::Bgra8Unorm,
        S::Rgba32Float => T::Rgba32Float,
        S::Rgba32Uint => T::Rgba32Uint,
        S::Rgba32Sint => T::Rgba32Sint,
        _ => return None,
    })
}

/// A format's name as WGSL writes it.
pub(crate) fn format_name(format: wgpu::TextureFormat) -> String {
    TEXTURE_FORMATS.iter().find(|(_, f)| *f == format).map_or_else(|| format!("{format:?}").to_lowercase(), |(n, _)| n.to_string())
}

impl TextureSpec {
    /// Bytes of all its texels, rows tightly packed.
    pub fn byte_len(&self) -> u64 {
        let texel = self.format.block_copy_size(None).unwrap_or(4) as u64;
        self.size.iter().map(|&d| d as u64).product::<u64>() * texel
    }

    fn parse(s: &str, bad: &dyn Fn(&str) -> Error) -> Result<TextureSpec> {
        let rest = s.strip_prefix("texture:").ok_or_else(|| bad("not a texture"))?;
        let mut parts = rest.splitn(3, ':');
        let (size, format, fill) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let dims: Vec<u32> = size
            .split('x')
            .map(|d| d.parse::<u32>().ok().filter(|&d| d > 0))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("the size is WxH or WxHxD of positive numbers"))?;
        if dims.is_empty() || dims.len() > 3 {
            return Err(bad("the size is W, WxH or WxHxD"));
        }
        let size = [dims[0], dims.get(1).copied().unwrap_or(1), dims.get(2).copied().unwrap_or(1)];
        let format = TEXTURE_FORMATS.iter().find(|(n, _)| *n == format).map(|(_, f)| *f).ok_or_else(|| {
            bad(&format!(
                "'{format}' is not a texture format simtlab fills; one of {}",
                TEXTURE_FORMATS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let fill = if fill == "zero" {
            TextureFill::Zero
        } else if let Some(seed) = fill.strip_prefix("random:") {
            TextureFill::Random(seed.parse().map_err(|_| bad("random needs an integer SEED"))?)
        } else if let Some(path) = fill.strip_prefix("file:") {
            TextureFill::File(path.into())
        } else {
            return Err(bad("a texture is filled with zero, random:SEED or file:PATH"));
        };
        Ok(TextureSpec { size, format, fill })
    }

    /// Its texels, rows tightly packed.
    pub fn texels(&self) -> Result<Vec<u8>> {
        let len = self.byte_len() as usize;
        match &self.fill {
            TextureFill::Zero => Ok(vec![0; len]),
            TextureFill::Random(seed) => {
                let mut rng = Rng::new(*seed);
                let float = matches!(
                    self.format,
                    wgpu::TextureFormat::R32Float | wgpu::TextureFormat::Rg32Float | wgpu::TextureFormat::Rgba32Float
                );
                let words: Vec<u32> = (0..len.div_ceil(4)).map(|_| if float { rng.next_f32().to_bits() } else { rng.next_u32() }).collect();
                Ok(bytemuck::cast_slice(&words)[..len].to_vec())
            }
            TextureFill::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
                if bytes.len() != len {
                    return Err(Error::invalid(
                        "texture",
                        format!(
                            "{}: {} bytes; a {}x{}x{} {} texture takes {len} (rows tightly packed)",
                            path.display(),
                            bytes.len(),
                            self.size[0],
                            self.size[1],
                            self.size[2],
                            format_name(self.format)
                        ),
                    ));
                }
                Ok(bytes)
            }
        }
    }
}

impl std::str::FromStr for BindingSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::invalid(
                "binding spec",
                format!("'{s}': {why}; use u32:N:seq, u32:N:zero, u32:N:random:SEED, i32:N:seq, i32:N:zero, i32:N:random:SEED, f32:N:zero, f32:N:random:SEED, file:PATH, texture:WxH[xD]:FORMAT:zero|random:SEED|file:PATH or sampler:nearest|linear"),
            )
        };
        if let Some(path) = s.strip_prefix("file:") {
            return Ok(BindingSpec::File(path.into()));
        }
        if s.starts_with("texture:") {
            return TextureSpec::parse(s, &bad).map(BindingSpec::Texture);
        }
        match s {
            "sampler:nearest" => return Ok(BindingSpec::Sampler { linear: false }),
            "sampler:linear" => return Ok(BindingSpec::Sampler { linear: true }),
            _ if s.starts_with("sampler") => return Err(bad("a sampler is sampler:nearest or sampler:linear")),
            _ => {}
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
            (Some("i32"), Some("seq")) => arity(3).and_then(|_| match n()? {
                n if n as u64 > 1 << 31 => Err(bad("seq counts 0..N-1 in i32, so N is at most 2147483648")),
                n => Ok(BindingSpec::I32Seq(n)),
            }),
            (Some("i32"), Some("zero")) => arity(3).and(Ok(BindingSpec::I32Zero(n()?))),
            (Some("i32"), Some("random")) => arity(4).and(Ok(BindingSpec::I32Random(n()?, seed()?))),
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
            BindingSpec::I32Seq(_) | BindingSpec::I32Zero(_) | BindingSpec::I32Random(..) => Some(naga::Scalar::I32),
            BindingSpec::F32Zero(_) | BindingSpec::F32Random(..) => Some(naga::Scalar::F32),
            BindingSpec::File(_) | BindingSpec::Bytes(_) | BindingSpec::Texture(_) | BindingSpec::Sampler { .. } => None,
        }
    }

    /// Size in bytes of the contents, found without making them (a file's from its metadata);
    /// `label` names the binding in the error when the size overflows.
    pub fn byte_len(&self, label: &str) -> Result<u64> {
        match self {
            BindingSpec::U32Seq(n)
            | BindingSpec::U32Zero(n)
            | BindingSpec::U32Random(n, _)
            | BindingSpec::I32Seq(n)
            | BindingSpec::I32Zero(n)
            | BindingSpec::I32Random(n, _)
            | BindingSpec::F32Zero(n)
            | BindingSpec::F32Random(n, _) => (*n as u64).checked_mul(4).ok_or_else(|| Error::Limit {
                what: format!("{label}: {n} elements of 4 bytes"),
                requested: *n as u64,
                limit: u64::MAX / 4,
                hint: "give a smaller element count".into(),
            }),
            BindingSpec::File(path) => std::fs::metadata(path).map(|m| m.len()).map_err(|e| Error::io(path, e)),
            BindingSpec::Bytes(bytes) => Ok(bytes.len() as u64),
            BindingSpec::Texture(t) => Ok(t.byte_len()),
            BindingSpec::Sampler { .. } => Ok(0),
        }
    }

    /// The bytes of the binding's initial contents.
    pub fn bytes(&self) -> Result<Vec<u8>> {
        let words: Vec<u32> = match *self {
            BindingSpec::U32Seq(n) => (0..n).map(|i| i as u32).collect(),
            BindingSpec::U32Zero(n) | BindingSpec::F32Zero(n) | BindingSpec::I32Zero(n) => vec![0; n],
            BindingSpec::I32Seq(n) => (0..n).map(|i| i as u32).collect(),
            BindingSpec::I32Random(n, seed) => Rng::new(seed).vec_u32(n),
            BindingSpec::Texture(ref t) => return t.texels(),
            BindingSpec::Sampler { .. } => return Ok(Vec::new()),
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
    /// Buffer, immediate, texture or sampler.
    pub resource: Resource,
}

impl BindingInfo {
    /// Whether `key` names this binding: its variable name, `N` (group 0) or `G:N`.
    pub fn matches(&self, key: &str) -> bool {
        if self.resource == Resource::Immediate {
            return key == self.name;
        }
        key == self.name || key == format!("{}:{}", self.group, self.binding) || (self.group == 0 && key == self.binding.to_string())
    }

    /// `group:binding name`, as errors name it.
    pub fn label(&self) -> String {
        if self.resource == Resource::Immediate {
            return format!("immediate '{}' ({})", self.name, self.declaration);
        }
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
        let (group, binding) = match (&g.binding, g.space) {
            (Some(b), _) => (b.group, b.binding),
            (None, naga::AddressSpace::Immediate) => (u32::MAX, 0),
            (None, _) => continue,
        };
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
        let dimension = |dim: naga::ImageDimension, arrayed: bool| {
            match (dim, arrayed) {
            (naga::ImageDimension::D1, false) => Ok(wgpu::TextureViewDimension::D1),
            (naga::ImageDimension::D2, false) => Ok(wgpu::TextureViewDimension::D2),
            (naga::ImageDimension::D2, true) => Ok(wgpu::TextureViewDimension::D2Array),
            (naga::ImageDimension::D3, false) => Ok(wgpu::TextureViewDimension::D3),
            _ => Err(Error::invalid(
                "binding",
                format!("binding {group}:{binding} '{name}' ({declaration}): simtlab fills 1D, 2D, 2D-array and 3D textures; not cube or 1D-array ones"),
            )),
        }
        };
        let (uniform, writable, resource) = match (g.space, &module.types[g.ty].inner) {
            (naga::AddressSpace::Uniform, _) => (true, false, Resource::Buffer),
            (naga::AddressSpace::Storage { access }, _) => (false, access.contains(naga::StorageAccess::STORE), Resource::Buffer),
            (naga::AddressSpace::Immediate, _) => (false, false, Resource::Immediate),
            (naga::AddressSpace::Handle, naga::TypeInner::Sampler { comparison: false }) => (false, false, Resource::Sampler),
            (naga::AddressSpace::Handle, naga::TypeInner::Image { dim, arrayed, class: naga::ImageClass::Sampled { kind, multi: false } }) => {
                (false, false, Resource::SampledTexture { dimension: dimension(*dim, *arrayed)?, kind: *kind })
            }
            (naga::AddressSpace::Handle, naga::TypeInner::Image { dim, arrayed, class: naga::ImageClass::Storage { format, access } }) => {
                let wanted = storage_format(*format).ok_or_else(|| {
                    Error::invalid(
                        "binding",
                        format!(
                            "binding {group}:{binding} '{name}' ({declaration}) stores {format:?}, which simtlab does not fill; it fills {}",
                            TEXTURE_FORMATS.iter().map(|(n, _)| *n).filter(|n| *n != "bgra8unorm").collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?;
                (false, access.contains(naga::StorageAccess::STORE), Resource::StorageTexture { dimension: dimension(*dim, *arrayed)?, format: wanted })
            }
            _ => {
                return Err(Error::invalid(
                    "binding",
                    format!(
                        "binding {group}:{binding} '{name}' ({declaration}) is a resource simtlab profile does not fill (it binds storage and uniform buffers, immediates, sampled and storage textures and non-comparison samplers); profile a variant of the shader without it"
                    ),
                ))
            }
        };
        let mut scalars = Vec::new();
        scalars_of(&module.types, g.ty, &mut scalars);
        let min_bytes = if matches!(resource, Resource::Buffer | Resource::Immediate) { layouter[g.ty].size as u64 } else { 0 };
        out.push(BindingInfo { group, binding, name, declaration, uniform, writable, min_bytes, scalars, resource });
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
            if bindings.is_empty() {
                return Err(Error::invalid("bindings", format!("'{key}' names no binding: the entry point uses none")));
            }
            let known: Vec<String> = bindings
                .iter()
                .map(|b| {
                    if b.resource == Resource::Immediate {
                        format!("{} (immediate)", b.name)
                    } else {
                        format!("{} ({}:{})", b.name, b.group, b.binding)
                    }
                })
                .collect();
            return Err(Error::invalid("bindings", format!("'{key}' names no binding the entry point uses; it uses {}", known.join(", "))));
        }
    }
    let mut out = Vec::new();
    for (b, spec) in bindings.iter().zip(specs_for(bindings, given)?) {
        match (&b.resource, &spec) {
            (Resource::Sampler, BindingSpec::Sampler { .. }) => {
                out.push(Vec::new());
                continue;
            }
            (Resource::SampledTexture { .. } | Resource::StorageTexture { .. }, BindingSpec::Texture(t)) => {
                check_texture(b, t)?;
                fits(b, t.byte_len())?;
                out.push(t.texels()?);
                continue;
            }
            (Resource::Sampler, _) => {
                return Err(Error::invalid("bindings", format!("{} is a sampler; give sampler:nearest or sampler:linear", b.label())))
            }
            (Resource::SampledTexture { .. } | Resource::StorageTexture { .. }, _) => {
                return Err(Error::invalid(
                    "bindings",
                    format!("{} is a texture; give texture:WxH[xD]:FORMAT:zero|random:SEED|file:PATH", b.label()),
                ))
            }
            (_, BindingSpec::Texture(_) | BindingSpec::Sampler { .. }) => {
                return Err(Error::invalid(
                    "bindings",
                    format!("{} is a buffer; give a buffer spec such as u32:N:random:SEED or file:PATH", b.label()),
                ))
            }
            _ => {}
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
                    "bindings",
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
            return Err(Error::invalid("bindings", format!("{} needs at least {} bytes; the spec gives {len}", b.label(), b.min_bytes)));
        }
        if b.resource == Resource::Immediate && len % 4 != 0 {
            return Err(Error::invalid("bindings", format!("{} takes whole 4-byte words; the spec gives {len} bytes", b.label())));
        }
        fits(b, len)?;
        out.push(spec.bytes()?);
    }
    Ok(out)
}

/// The spec of each binding, in binding order: every binding given once (a sampler not given
/// is `nearest`).
pub(crate) fn specs_for(bindings: &[BindingInfo], given: &[(String, BindingSpec)]) -> Result<Vec<BindingSpec>> {
    bindings
        .iter()
        .map(|b| {
            let mut specs = given.iter().filter(|(k, _)| b.matches(k));
            let spec = match (specs.next(), &b.resource) {
                (Some((_, spec)), _) => spec.clone(),
                (None, Resource::Sampler) => BindingSpec::Sampler { linear: false },
                (None, Resource::SampledTexture { .. } | Resource::StorageTexture { .. }) => {
                    return Err(Error::invalid(
                        "bindings",
                        format!(
                            "{} is a texture and is not given; add {}=texture:64x64:rgba8unorm:random:1 to `bindings` (size, format and contents)",
                            b.label(),
                            b.name
                        ),
                    ))
                }
                (None, _) => {
                    return Err(Error::invalid(
                        "bindings",
                        format!("{} is not given; add {}=SPEC to `bindings` (e.g. u32:1024:random:1)", b.label(), b.name),
                    ))
                }
            };
            if specs.next().is_some() {
                return Err(Error::invalid("bindings", format!("{} is given more than once", b.label())));
            }
            Ok(spec)
        })
        .collect()
}

/// A texture spec against what the shader declares: the storage format it names, the texel
/// kind it reads, and a size its dimension can have.
fn check_texture(b: &BindingInfo, t: &TextureSpec) -> Result<()> {
    let (dimension, ok) = match &b.resource {
        Resource::StorageTexture { dimension, format } => {
            if *format != t.format {
                return Err(Error::invalid(
                    "bindings",
                    format!(
                        "{} is declared {}; give a texture of that format, not {}",
                        b.label(),
                        format_name(*format),
                        format_name(t.format)
                    ),
                ));
            }
            (*dimension, true)
        }
        Resource::SampledTexture { dimension, kind } => {
            let reads = match t.format.sample_type(None, None) {
                Some(wgpu::TextureSampleType::Float { .. }) => naga::ScalarKind::Float,
                Some(wgpu::TextureSampleType::Uint) => naga::ScalarKind::Uint,
                Some(wgpu::TextureSampleType::Sint) => naga::ScalarKind::Sint,
                _ => naga::ScalarKind::Bool,
            };
            (*dimension, reads == *kind)
        }
        _ => return Ok(()),
    };
    if !ok {
        return Err(Error::invalid("bindings", format!("{} reads texels of another kind than {} holds; give a format of its kind (float: rgba8unorm, r32float...; u32: r32uint...; i32: r32sint...)", b.label(), format_name(t.format))));
    }
    let [_, h, d] = t.size;
    let fits = match dimension {
        wgpu::TextureViewDimension::D1 => h == 1 && d == 1,
        wgpu::TextureViewDimension::D2 => d == 1,
        _ => true,
    };
    if !fits {
        return Err(Error::invalid(
            "bindings",
            format!("{} is {:?}; give a size with that many dimensions (W for 1D, WxH for 2D)", b.label(), dimension),
        ));
    }
    Ok(())
}
