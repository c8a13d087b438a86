// Persistent-threads control block, shared by pt_discovery, pt_barrier and pt_queue.
// Host side: simtlab::pt (src/pt/mod.rs mirrors the word indices and PtConfig).
//
// WGSL gives no forward-progress guarantee between workgroups and its atomics are relaxed, so:
// every wait loop here is bounded by `pt_cfg.spin_cap` polls and leaves through the abort
// word with a reason code; data crosses workgroups of one dispatch only through atomics.

struct PtConfig {
    // most polls any single wait may take before it aborts
    spin_cap: u32,
    // discovery: polls without a new arrival before the leader closes the poll
    grace: u32,
    // bit 0 (PT_FLAG_ALL_PARTICIPATE): every launched workgroup participates, no discovery
    // (non-blocking kernels, and the test-only "assume resident" switch)
    flags: u32,
    // workgroups in the dispatch (x * y)
    launched: u32,
    // ring queue capacity in slots
    capacity: u32,
    // distributed queue heads
    heads: u32,
    // items per claim for chunked queues
    chunk: u32,
    pad: u32,
}

@group(0) @binding(8) var<storage, read_write> pt_ctl: array<atomic<u32>>;
@group(0) @binding(9) var<uniform> pt_cfg: PtConfig;

const PT_FLAG_ALL_PARTICIPATE: u32 = 1u;

// word indices of pt_ctl (keep in sync with src/pt/mod.rs)
const PT_ABORT: u32 = 0u;      // first abort reason (0 = none)
const PT_DETAIL: u32 = 1u;     // detail of the first abort (barrier arrival, ticket, slot, ...)
const PT_TICKET: u32 = 2u;     // discovery tickets, bit 31 = poll closed
const PT_COUNT: u32 = 3u;      // discovered participants (0 until the poll closes)
const PT_LATE: u32 = 4u;       // workgroups that arrived after the poll closed
const PT_DONE: u32 = 5u;       // participants that reached pt_finish
const PT_MAX_POLLS: u32 = 6u;  // longest wait seen, in polls (diagnostic)
const PT_TOTAL_POLLS: u32 = 7u; // PT_COUNT_POLLS: most polls one invocation took over all its waits
const PT_BARRIER: u32 = 32u;   // monotonic barrier counter, on its own 128-byte line
const PT_SUB: u32 = 64u;       // PT_BARRIER_TREE: sub-counter s at PT_SUB + s * PT_SUB_STRIDE
const PT_SUB_STRIDE: u32 = 32u;
const PT_SUBS: u32 = 64u;
const PT_FANIN: u32 = 32u;     // least participants per sub-counter
const PT_WORDS: u32 = 2112u;   // PT_SUB + PT_SUBS * PT_SUB_STRIDE

// abort reasons (keep in sync with pt::AbortReason)
const PT_REASON_BARRIER: u32 = 1u;
const PT_REASON_OVERFLOW: u32 = 2u;
const PT_REASON_DISCOVERY: u32 = 3u;
const PT_REASON_WAIT: u32 = 4u;
// a loop ended without its exit condition: some drivers cap loop iterations (llvmpipe/lavapipe
// stops every loop of an invocation after 65535 iterations in total)
const PT_REASON_LOOP_LIMIT: u32 = 5u;

const PT_CLOSED: u32 = 0x80000000u;

// Records the first abort reason; later reasons are dropped.
fn pt_abort(reason: u32, detail: u32) {
    for (var i = 0u; i < 8u; i++) {
        let r = atomicCompareExchangeWeak(&pt_ctl[PT_ABORT], 0u, reason);
        if (r.exchanged) {
            atomicStore(&pt_ctl[PT_DETAIL], detail);
            return;
        }
        if (r.old_value != 0u) {
            return;
        }
    }
    atomicMax(&pt_ctl[PT_ABORT], reason);
}

fn pt_aborted() -> bool {
    return atomicLoad(&pt_ctl[PT_ABORT]) != 0u;
}

#ifdef PT_COUNT_POLLS
// polls of this invocation's waits so far: on drivers that cap an invocation's loop iterations
// in total, the waits' share says whether the kernel's own loops may have been cut short
var<private> pt_polls_total: u32;
#endif

fn pt_note_polls(polls: u32) {
#ifdef PT_COUNT_POLLS
    pt_polls_total += polls;
    if (pt_polls_total > 1024u) {
        atomicMax(&pt_ctl[PT_TOTAL_POLLS], pt_polls_total);
    }
#endif
    if (polls > 64u) {
        atomicMax(&pt_ctl[PT_MAX_POLLS], polls);
    }
}
