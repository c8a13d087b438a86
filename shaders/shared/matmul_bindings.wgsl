// Bindings of the C = A·B kernels in shaders/matmul/ (f32, row-major, M×K times K×N; host:
// kernels::matmul). The importing kernel says how it reads the matrices, before or after the
// import: `alias MatmulElement = f32;` (one element) or `alias MatmulElement = vec4<f32>;`
// (four consecutive elements of a row; K and N multiples of 4).

struct Params {
    m: u32,
    n: u32,
    k: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<MatmulElement>;
@group(0) @binding(1) var<storage, read> b: array<MatmulElement>;
@group(0) @binding(2) var<storage, read_write> c: array<MatmulElement>;
@group(0) @binding(3) var<uniform> params: Params;
