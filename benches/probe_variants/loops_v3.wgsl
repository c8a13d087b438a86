// One computation written with a `for` loop and with `loop { if ... { break } }`.
@group(0) @binding(0) var<storage, read_write> data: array<u32>;

@compute @workgroup_size(64)
fn counted(@builtin(global_invocation_id) id: vec3<u32>, @builtin(workgroup_id) pv_workgroup_id: vec3<u32>, @builtin(num_workgroups) pv_num_workgroups: vec3<u32>, @builtin(local_invocation_index) pv_local_invocation_index: u32, @builtin(num_subgroups) pv_num_subgroups: u32, @builtin(subgroup_size) pv_subgroup_size: u32, @builtin(subgroup_id) pv_subgroup_id: u32, @builtin(subgroup_invocation_id) pv_subgroup_invocation_id: u32) { pv_begin(pv_workgroup_id, pv_num_workgroups, pv_local_invocation_index, pv_num_subgroups, pv_subgroup_size, pv_subgroup_id, pv_subgroup_invocation_id);
    let n = data[id.x] & 15u;
    var h = data[id.x];
    for (var i = 0u; pv_cond0(i < n); i++) {
        if (pv_cond1((h & 1u) == 1u)) {
            h = h * 3u + 1u;
        } else {
            h = h >> 1u;
        }
    }
    data[id.x] = h;
 pv_end(); }

@compute @workgroup_size(64)
fn broken(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = data[id.x] & 15u;
    var h = data[id.x];
    var i = 0u;
    loop {
        if (i >= n) {
            break;
        }
        if ((h & 1u) == 1u) {
            h = h * 3u + 1u;
        } else {
            h = h >> 1u;
        }
        i++;
    }
    data[id.x] = h;
}


// ---- simtlab divergence probe: per-subgroup counters from subgroup votes ----
@group(0) @binding(7) var<storage, read_write> pv_words: array<atomic<u32>>;
var<private> pv_record: u32;
var<private> pv_lane: u32;
var<private> pv_on: bool;
var<private> pv_c0: vec4<u32>;
var<private> pv_s0: u32;
var<private> pv_c1: vec4<u32>;
var<private> pv_s1: u32;

fn pv_begin(wg: vec3<u32>, groups: vec3<u32>, local: u32, subgroups: u32, width: u32, subgroup: u32, lane: u32) {
    let index = (wg.x + groups.x * (wg.y + groups.y * wg.z)) * subgroups + min(subgroup, subgroups - 1u);
    let block = index / 1u;
    pv_lane = lane;
    pv_record = 4u + block * 10u;
    pv_on = index == block * 1u + pv_pick(block);
    if (pv_on && pv_record + 10u > arrayLength(&pv_words)) {
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

fn pv_write(slot: u32, c: vec4<u32>, s: u32) {
    let b = pv_record + slot * 5u;
    atomicAdd(&pv_words[b], c.x);
    atomicAdd(&pv_words[b + 1u], c.y);
    atomicAdd(&pv_words[b + 2u], c.z);
    atomicAdd(&pv_words[b + 3u], c.w);
    atomicAdd(&pv_words[b + 4u], s);
}

// where lanes leave: their counters summed over the subgroup, written by its first lane
fn pv_end() {
    if (pv_on) {
        let lead = pv_lead() == 1u;
        { let c = subgroupAdd(pv_c0); let s = subgroupAdd(pv_s0); if (lead && c.y != 0u) { pv_write(0u, c, s); } pv_c0 = vec4<u32>(0u); pv_s0 = 0u; }
        { let c = subgroupAdd(pv_c1); let s = subgroupAdd(pv_s1); if (lead && c.y != 0u) { pv_write(1u, c, s); } pv_c1 = vec4<u32>(0u); pv_s1 = 0u; }
    }
}

fn pv_add0(lead: u32, cond: bool) {
    let any = cond;
    let all = cond;
    pv_c0 += vec4<u32>(lead, 1u, select(0u, 1u, cond), lead * select(0u, 1u, all || !any));
    pv_s0 += lead * select(0u, 1u, any);
}

fn pv_add1(lead: u32, cond: bool) {
    let any = cond;
    let all = cond;
    pv_c1 += vec4<u32>(lead, 1u, select(0u, 1u, cond), lead * select(0u, 1u, all || !any));
    pv_s1 += lead * select(0u, 1u, any);
}

fn pv_cond0(cond: bool) -> bool {
    if (true) {
        pv_add0(pv_lead(), cond);
    }
    return cond;
}

fn pv_cond1(cond: bool) -> bool {
    if (true) {
        pv_add1(pv_lead(), cond);
    }
    return cond;
}
