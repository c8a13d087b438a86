// Measures the native subgroup width: every invocation writes the subgroup_size it sees.
//! variants: (none)

@group(0) @binding(0) var<storage, read_write> sizes: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_size) width: u32) {
    sizes[i] = width;
}
