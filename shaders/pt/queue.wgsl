// Queue throughput benchmark (host: simtlab::pt::queue). Every invocation claims
// independently (no waiting) until n items are taken; with `check` it marks each claimed item
// in `counts` so the host can verify every item was processed exactly once.
// Kinds: 0 single head (one atomicAdd per item), 1 chunked (pt_cfg.chunk items per atomicAdd),
// 2 distributed heads with stealing. An invocation that leaves its claim loop without seeing the
// queue empty (a driver's loop limit) aborts with PT_REASON_LOOP_LIMIT. `ring`: each participant workgroup pushes and pops
// `rounds` items through the bounded ring (waits, so blocking tier only).
//! variants: (none)

#import grid
#import pt_discovery
#import pt_queue

struct Params {
    n: u32,
    kind: u32,
    check: u32,
    rounds: u32,
}

@group(0) @binding(0) var<storage, read_write> counts: array<atomic<u32>>;
// [0] claims made, [1] checksum sink
@group(0) @binding(1) var<storage, read_write> tally: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

fn take(item: u32, acc: ptr<function, u32>) {
    if (params.check != 0u) {
        atomicAdd(&counts[item], 1u);
    }
    *acc += item;
}

@compute @workgroup_size(256)
fn claims(ids: Ids) {
    let me = global_index(ids, 256u);
    let threads = pt_cfg.launched * 256u;
    let heads = clamp(pt_cfg.heads, 1u, PTQ_MAX_HEADS);
    let chunk = max(pt_cfg.chunk, 1u);
    var home = me * heads / max(threads, 1u);
    var acc = 0u;
    var claims = 0u;
    // set when this invocation saw the queue empty: the only normal way out of the loop. A
    // driver that caps loop iterations (llvmpipe: 65535 per invocation, all loops together)
    // ends the loops early instead; the invocation then aborts with PT_REASON_LOOP_LIMIT so the
    // host reports the run as cut short rather than as items left unprocessed.
    var drained = false;
    let n = params.n;
    // natural bound: every claim moves a head forward; the cap is a safety net
    for (var guard = 0u; guard <= n + 1u; guard++) {
        if (params.kind == 0u) {
            let c = ptq_claim(1u);
            claims += 1u;
            if (c >= n) {
                drained = true;
                break;
            }
            take(c, &acc);
        } else if (params.kind == 1u) {
            let c = ptq_claim(chunk);
            claims += 1u;
            if (c >= n) {
                drained = true;
                break;
            }
            let end = min(c + chunk, n);
            var i = c;
            for (; i < end; i++) {
                take(i, &acc);
            }
            if (i < end) {
                break;
            }
        } else {
            let c = ptq_claim_distributed(&home, n);
            claims += 1u;
            if (c == PTQ_EMPTY) {
                drained = true;
                break;
            }
            if (c == PTQ_CUT) {
                break;
            }
            take(c, &acc);
        }
    }
    if (!drained) {
        pt_abort(PT_REASON_LOOP_LIMIT, claims);
    }
    atomicAdd(&tally[0], claims);
    if (acc == 0x12345678u) {
        atomicAdd(&tally[1], acc);
    }
}

@compute @workgroup_size(256)
fn ring(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    if (ids.local == 0u) {
        var acc = 0u;
        var r = 0u;
        for (; r < params.rounds; r++) {
            let v = g.id * params.rounds + r;
            if (!ptq_push(v)) {
                break;
            }
            // after our own push at least one reserved item is unclaimed, so EMPTY only means
            // the pop lost its CAS races: retry (bounded)
            var got = ptq_pop();
            for (var tries = 0u; got == PTQ_EMPTY && tries < pt_cfg.spin_cap && !pt_aborted(); tries++) {
                got = ptq_pop();
            }
            if (got == PTQ_EMPTY) {
                pt_abort(PT_REASON_WAIT, v);
                break;
            }
            take(got, &acc);
            atomicAdd(&tally[0], 2u);
        }
        if (r < params.rounds && !pt_aborted()) {
            pt_abort(PT_REASON_LOOP_LIMIT, r);
        }
        if (acc == 0x12345678u) {
            atomicAdd(&tally[1], acc);
        }
    }
    pt_finish(ids.local);
}
