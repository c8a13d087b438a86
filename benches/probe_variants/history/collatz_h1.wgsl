// Collatz steps of each value: a data-dependent `while` with an `if` inside, and a helper.
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> steps: array<u32>;

fn next(n: u32) -> u32 {
    if (pv_cond1(n % 2u == 0u)) {
        return n / 2u;
    }
    return 3u * n + 1u;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(workgroup_id) pv_workgroup_id: vec3<u32>, @builtin(num_workgroups) pv_num_workgroups: vec3<u32>, @builtin(local_invocation_index) pv_local_invocation_index: u32, @builtin(num_subgroups) pv_num_subgroups: u32, @builtin(subgroup_size) pv_subgroup_size: u32, @builtin(subgroup_id) pv_subgroup_id: u32, @builtin(subgroup_invocation_id) pv_subgroup_invocation_id: u32) { pv_begin(pv_workgroup_id, pv_num_workgroups, pv_local_invocation_index, pv_num_subgroups, pv_subgroup_size, pv_subgroup_id, pv_subgroup_invocation_id);
    let i = id.x;
    if (pv_cond2(i >= arrayLength(&values))) {
        pv_end(); return;
    }
    var n = values[i] % 1000u + 1u;
    var k = 0u;
    while (pv_cond3(n != 1u)) {
        n = next(n);
        k += 1u;
    } pv_exit3();
    steps[i] = k;
 pv_end(); }


// ---- simtlab divergence probe: per-subgroup counters from subgroup votes ----
@group(1) @binding(0) var<storage, read_write> pv_words: array<atomic<u32>>;
var<private> pv_record: u32;
var<private> pv_lane: u32;
var<private> pv_on: bool;
var<private> pv_c0: vec4<u32>;
var<private> pv_s0: u32;
var<private> pv_c1: vec4<u32>;
var<private> pv_s1: u32;
var<private> pv_c2: vec4<u32>;
var<private> pv_s2: u32;
var<private> pv_c3: vec4<u32>;
var<private> pv_s3: u32;
var<private> pv_v1: vec2<u32>;
var<private> pv_n1: u32;
var<private> pv_h1: u32;
var<private> pv_hist1: array<u32, 8>;
var<private> pv_e3: u32;

fn pv_begin(wg: vec3<u32>, groups: vec3<u32>, local: u32, subgroups: u32, width: u32, subgroup: u32, lane: u32) {
    let index = (wg.x + groups.x * (wg.y + groups.y * wg.z)) * subgroups + min(subgroup, subgroups - 1u);
    let block = index / 1u;
    pv_lane = lane;
    pv_record = 4u + block * 20u;
    pv_on = index == block * 1u + pv_pick(block);
    if (pv_on && pv_record + 20u > arrayLength(&pv_words)) {
        atomicStore(&pv_words[2], 1u);
        pv_on = false;
    }
    if (index == 0u && local == 0u) {
        atomicStore(&pv_words[0], width);
        atomicStore(&pv_words[1], subgroups);
    }
}

fn pv_pick(block: u32) -> u32 {
    if (1u <= 1u) {
        return 0u;
    }
    var h = block * 0x9E3779B1u;
    h ^= h >> 16u;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13u;
    return h % 1u;
}

// 1 in the first active lane, 0 in the others
fn pv_lead() -> u32 {
    return select(0u, 1u, subgroupBroadcastFirst(pv_lane) == pv_lane);
}

// each lane adds its own counters: a subgroup reduction here, in divergent code where lanes
// leave, costs the driver far more than the atomics (a few per lane, most of them zero)
fn pv_write(slot: u32, c: vec4<u32>, s: u32) {
    let b = pv_record + slot * 5u;
    if (c.x != 0u) {
        atomicAdd(&pv_words[b], c.x);
    }
    if (c.y != 0u) {
        atomicAdd(&pv_words[b + 1u], c.y);
    }
    if (c.z != 0u) {
        atomicAdd(&pv_words[b + 2u], c.z);
    }
    if (c.w != 0u) {
        atomicAdd(&pv_words[b + 3u], c.w);
    }
    if (s != 0u) {
        atomicAdd(&pv_words[b + 4u], s);
    }
}

// where lanes leave: their counters added to their subgroup's record
fn pv_end() {
    if (pv_on) {
        { let c = pv_c0; let s = pv_s0; pv_write(0u, vec4<u32>(c.x, c.y, c.y, c.x), c.x); pv_c0 = vec4<u32>(0u); pv_s0 = 0u; }
        { let c = pv_c1; let s = pv_s1; pv_write(1u, c, s); pv_c1 = vec4<u32>(0u); pv_s1 = 0u; }
        { let c = pv_c2; let s = pv_s2; pv_write(2u, c, s); pv_c2 = vec4<u32>(0u); pv_s2 = 0u; }
        { let c = pv_c3; let s = pv_s3; pv_write(3u, c, s); pv_c3 = vec4<u32>(0u); pv_s3 = 0u; }
    }
}

fn pv_add2(lead: u32, cond: bool) {
    let any = subgroupAny(cond);
    let all = subgroupAll(cond);
    pv_c2 += vec4<u32>(lead, 1u, select(0u, 1u, cond), lead * select(0u, 1u, all || !any));
    pv_s2 += lead * select(0u, 1u, any);
}

fn pv_add3(lead: u32, cond: bool) {
    let any = subgroupAny(cond);
    let all = subgroupAll(cond);
    pv_c3 += vec4<u32>(lead, 1u, select(0u, 1u, cond), lead * select(0u, 1u, all || !any));
    pv_s3 += lead * select(0u, 1u, any);
}

fn pv_cond1(cond: bool) -> bool {
    if (true) {
        let n = pv_n1;
        pv_h1 |= select(0u, 1u << (n & 31u), cond);
        if ((n & 31u) == 31u && n < 256u) {
            pv_hist1[n >> 5u] = pv_h1;
            pv_h1 = 0u;
        }
        pv_n1 = n + 1u;
        pv_c1.z += select(0u, 1u, cond);
    }
    return cond;
}

fn pv_cond2(cond: bool) -> bool {
    if (true) {
        pv_add2(pv_lead(), cond);
    }
    return cond;
}

fn pv_cond3(cond: bool) -> bool {
    if (true) {
        pv_e3 += 1u;
    }
    return cond;
}

fn pv_exit3() {
    if (true) {
        let e = pv_e3;
        pv_e3 = 0u;
        let most = subgroupMax(e);
        var distinct = 0u;
        if (most <= 129u) {
            // a short loop: each count below `most` sets its bit, one vote per 32 counts
            for (var word = 0u; word * 32u + 1u < most; word++) {
                let bit = e - 1u - word * 32u;
                distinct += countOneBits(subgroupOr(select(0u, 1u << (bit & 31u), e < most && e > word * 32u && bit < 32u)));
            }
        } else {
            // one pass per distinct count below `most`; a subgroup has at most 128 lanes
            var rest = e;
            for (var round = 0u; round < 128u; round++) {
                let low = subgroupMin(select(0xffffffffu, rest, rest < most));
                if (low == 0xffffffffu) {
                    break;
                }
                distinct += 1u;
                rest = select(rest, most, rest == low);
            }
        }
        let lead = pv_lead();
        pv_c3 += vec4<u32>(lead * most, e, e - 1u, lead * (most - distinct));
        pv_s3 += lead * (most - 1u);
        {
            let n = pv_n1;
            let most = min(subgroupMax(n), 256u);
            var nonuniform = 0u;
            var any = 0u;
            for (var word = 0u; word * 32u < most; word++) {
                let full = (word + 1u) * 32u <= n;
                let bits = select(pv_h1, pv_hist1[min(word, 7u)], full);
                let left = select(0u, n - word * 32u, n > word * 32u);
                let valid = select((1u << min(left, 31u)) - 1u, 0xffffffffu, left >= 32u);
                let o = subgroupOr(bits & valid);
                let a = subgroupAnd(bits | ~valid);
                nonuniform += countOneBits(o & ~a);
                any += countOneBits(o);
            }
            let m = subgroupMax(pv_v1);
            pv_v1 = vec2<u32>(0u);
            pv_n1 = 0u;
            pv_h1 = 0u;
            pv_c1.w += lead * (nonuniform + m.x);
            pv_s1 += lead * (any + m.y);
        }
    }
}
