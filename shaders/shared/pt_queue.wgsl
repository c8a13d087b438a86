// Work queues for persistent kernels, in one buffer (binding 10) of atomic words:
// a header (head, tail, freed, pending, overflow), `pt_cfg.heads` distributed heads (one per
// 128-byte line) and `pt_cfg.capacity` ring slots.
//
// - single head:    ptq_claim(1)              one atomicAdd per claim
// - chunked:        ptq_claim(pt_cfg.chunk)   one atomicAdd per chunk of items
// - distributed:    ptq_claim_distributed     items split into `heads` ranges; claim from the
//                                             home range, then steal from the others (and
//                                             stay with the range stolen from)
// - bounded ring:   ptq_push / ptq_pop        MPMC ring with an overflow flag (abort reason 2);
//                                             the host retries with a larger capacity
// Claims never wait. A pop waits (bounded) only for a push that already reserved its slot.
// Host side: simtlab::pt::queue_words.

#import pt_control

@group(0) @binding(10) var<storage, read_write> pt_queue: array<atomic<u32>>;

const PTQ_HEAD: u32 = 0u;
const PTQ_TAIL: u32 = 1u;
const PTQ_FREED: u32 = 2u;
const PTQ_PENDING: u32 = 3u;
const PTQ_OVERFLOW: u32 = 4u;
const PTQ_HEADS: u32 = 32u;
const PTQ_HEAD_STRIDE: u32 = 32u;
const PTQ_MAX_HEADS: u32 = 64u;
const PTQ_SLOTS: u32 = 2080u;  // PTQ_HEADS + PTQ_MAX_HEADS * PTQ_HEAD_STRIDE
const PTQ_EMPTY: u32 = 0xFFFFFFFFu;
// a distributed claim whose scan the driver cut short (items: n < PTQ_CUT)
const PTQ_CUT: u32 = 0xFFFFFFFEu;

// Claims `count` consecutive indices from the single head; the caller compares with its n.
fn ptq_claim(count: u32) -> u32 {
    return atomicAdd(&pt_queue[PTQ_HEAD], count);
}

// First index of range k when n items are split into `heads` ranges.
fn ptq_range_start(k: u32, n: u32, heads: u32) -> u32 {
    return k * (n / heads) + min(k, n % heads);
}

// Claims one index in 0..n from the distributed heads, starting at range *home and stealing
// round-robin from the others when it is exhausted; *home moves to the range the claim came
// from, so an exhausted range is scanned past once, not on every later claim. PTQ_EMPTY when
// every range is exhausted; PTQ_CUT when the scan ended early (a driver's loop limit).
fn ptq_claim_distributed(home: ptr<function, u32>, n: u32) -> u32 {
    let heads = clamp(pt_cfg.heads, 1u, PTQ_MAX_HEADS);
    var j = 0u;
    for (; j < heads; j++) {
        let k = (*home + j) % heads;
        let lo = ptq_range_start(k, n, heads);
        let len = ptq_range_start(k + 1u, n, heads) - lo;
        let word = PTQ_HEADS + k * PTQ_HEAD_STRIDE;
        if (atomicLoad(&pt_queue[word]) >= len) {
            continue;
        }
        let c = atomicAdd(&pt_queue[word], 1u);
        if (c < len) {
            *home = k;
            return lo + c;
        }
    }
    if (j < heads) {
        return PTQ_CUT;
    }
    return PTQ_EMPTY;
}

fn ptq_overflow(detail: u32) {
    atomicStore(&pt_queue[PTQ_OVERFLOW], 1u);
    pt_abort(PT_REASON_OVERFLOW, detail);
}

// Pushes v (< 0xFFFFFFFF) onto the ring. Returns false (overflow flagged, kernel aborted) when
// the ring has no free slot.
fn ptq_push(v: u32) -> bool {
    let cap = max(pt_cfg.capacity, 1u);
    let t = atomicAdd(&pt_queue[PTQ_TAIL], 1u);
    // signed: frees of later items may already have happened
    if (i32(t - atomicLoad(&pt_queue[PTQ_FREED])) >= i32(cap)) {
        ptq_overflow(t);
        return false;
    }
    let slot = PTQ_SLOTS + t % cap;
    var polls = 0u;
    loop {
        let r = atomicCompareExchangeWeak(&pt_queue[slot], 0u, v + 1u);
        if (r.exchanged) {
            return true;
        }
        polls += 1u;
        // the slot still holds an item a consumer has claimed but not taken yet
        if (polls >= pt_cfg.spin_cap || ((polls & 15u) == 0u && pt_aborted())) {
            ptq_overflow(t);
            return false;
        }
    }
    pt_abort(PT_REASON_LOOP_LIMIT, t);
    return false;
}

// Pops one item, or PTQ_EMPTY when nothing is claimable now (or the kernel aborted).
fn ptq_pop() -> u32 {
    let cap = max(pt_cfg.capacity, 1u);
    for (var tries = 0u; tries < 64u; tries++) {
        let h = atomicLoad(&pt_queue[PTQ_HEAD]);
        if (h >= atomicLoad(&pt_queue[PTQ_TAIL])) {
            return PTQ_EMPTY;
        }
        let r = atomicCompareExchangeWeak(&pt_queue[PTQ_HEAD], h, h + 1u);
        if (!r.exchanged) {
            continue;
        }
        let slot = PTQ_SLOTS + h % cap;
        var polls = 0u;
        loop {
            // an exchange, not a load: with wrap-around two claimants of one slot each take
            // a distinct item
            let v = atomicExchange(&pt_queue[slot], 0u);
            if (v != 0u) {
                atomicAdd(&pt_queue[PTQ_FREED], 1u);
                return v - 1u;
            }
            polls += 1u;
            if ((polls & 15u) == 0u && pt_aborted()) {
                return PTQ_EMPTY;
            }
            if (polls >= pt_cfg.spin_cap) {
                pt_abort(PT_REASON_WAIT, h);
                return PTQ_EMPTY;
            }
        }
        // the driver cut the loop short with a claimed item untaken
        pt_abort(PT_REASON_LOOP_LIMIT, h);
        return PTQ_EMPTY;
    }
    return PTQ_EMPTY;
}
