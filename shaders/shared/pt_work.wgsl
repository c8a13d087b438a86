// Synthetic work of Gupta's benchmarks: `count` multiply-adds x = x * mul + add (mod 2^32),
// exact on every device (CPU reference: pt::cases::cpu::mads). mul and add come from a
// uniform so the compiler cannot fold the chain. Unrolled by 4.

fn pt_mads(x0: u32, count: u32, mul: u32, add: u32) -> u32 {
    var x = x0;
    var i = 0u;
    loop {
        if (i + 4u > count) {
            break;
        }
        x = x * mul + add;
        x = x * mul + add;
        x = x * mul + add;
        x = x * mul + add;
        i += 4u;
    }
    loop {
        if (i >= count) {
            break;
        }
        x = x * mul + add;
        i += 1u;
    }
    return x;
}

// Integer hash for seeding items (CPU: pt::cases::cpu::hash).
fn pt_hash(a: u32) -> u32 {
    var x = a * 0x9E3779B1u;
    x ^= x >> 16u;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13u;
    return x;
}

var<workgroup> pt_sum_scratch: array<u32, 256>;

// Wrapping sum over a 256-invocation workgroup; every invocation gets the total.
fn pt_workgroup_sum(local: u32, x: u32) -> u32 {
    pt_sum_scratch[local] = x;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if (local < s) {
            pt_sum_scratch[local] += pt_sum_scratch[local + s];
        }
        workgroupBarrier();
    }
    let total = pt_sum_scratch[0];
    workgroupBarrier();
    return total;
}
