//! Decoding the control words of a PT launch into a status and a clear error.

use super::{word, PtConfig};
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// Why a PT kernel left early (the codes of `pt_control.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbortReason {
    /// 1: a global barrier waited `spin_cap` polls (some participant never arrived: not
    /// co-resident, or starved by the scheduler).
    BarrierTimeout,
    /// 2: a bounded queue was full.
    QueueOverflow,
    /// 3: occupancy discovery did not complete.
    DiscoveryFailure,
    /// 4: another bounded wait (a queue pop, idle polling) ran out.
    WaitTimeout,
    /// 5: a loop ended without its exit condition because the driver caps loop iterations
    /// (llvmpipe/lavapipe stops every loop of an invocation after 65535 iterations in total).
    LoopLimit,
    /// A code this version does not know (the shader and host are out of step).
    Unknown(u32),
}

impl AbortReason {
    /// The reason for abort word `code`; None for 0 (no abort).
    fn from_code(code: u32) -> Option<AbortReason> {
        match code {
            0 => None,
            1 => Some(AbortReason::BarrierTimeout),
            2 => Some(AbortReason::QueueOverflow),
            3 => Some(AbortReason::DiscoveryFailure),
            4 => Some(AbortReason::WaitTimeout),
            5 => Some(AbortReason::LoopLimit),
            c => Some(AbortReason::Unknown(c)),
        }
    }

    /// The abort word's value for this reason (1..=5, or the unknown code).
    pub fn code(self) -> u32 {
        match self {
            AbortReason::BarrierTimeout => 1,
            AbortReason::QueueOverflow => 2,
            AbortReason::DiscoveryFailure => 3,
            AbortReason::WaitTimeout => 4,
            AbortReason::LoopLimit => 5,
            AbortReason::Unknown(c) => c,
        }
    }

    /// The reason in words, for messages.
    pub fn describe(self) -> String {
        match self {
            AbortReason::BarrierTimeout => "global barrier timeout (a participant never arrived)".into(),
            AbortReason::QueueOverflow => "queue overflow".into(),
            AbortReason::DiscoveryFailure => "occupancy discovery failure".into(),
            AbortReason::WaitTimeout => "bounded wait ran out (queue pop or idle polling)".into(),
            AbortReason::LoopLimit => "loop cut short by the driver's iteration limit (llvmpipe: 65535 per invocation)".into(),
            AbortReason::Unknown(c) => format!("unknown abort code {c}"),
        }
    }
}

/// What a PT launch reported through its control words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The first abort reason; None when the kernel ran to the end.
    pub abort: Option<AbortReason>,
    /// Detail of the first abort (barrier arrival index, ticket, queue position).
    pub detail: u32,
    /// Participants found by discovery (0 when discovery was off).
    pub discovered: u32,
    /// Workgroups that arrived after the discovery poll closed and left at once.
    pub late: u32,
    /// Participants that reached the end.
    pub finished: u32,
    /// Longest wait any participant needed, in polls (only waits over 64 polls are noted).
    pub max_polls: u32,
    /// Barrier arrivals in total.
    pub barrier_arrivals: u32,
    /// Most polls one invocation took over all its waits (kernels of [`super::user`] only).
    #[serde(default)]
    pub total_polls: u32,
    /// The configuration the launch ran with.
    pub config: PtConfig,
}

impl Status {
    /// Decodes the control words read back after a launch with `config`; missing words read as 0.
    pub fn decode(words: &[u32], config: &PtConfig) -> Status {
        let w = |i: usize| words.get(i).copied().unwrap_or(0);
        Status {
            abort: AbortReason::from_code(w(word::ABORT)),
            detail: w(word::DETAIL),
            discovered: w(word::COUNT),
            late: w(word::LATE),
            finished: w(word::DONE),
            max_polls: w(word::MAX_POLLS),
            total_polls: w(word::TOTAL_POLLS),
            // the tree barrier counts arrivals on its sub-counters (the top counter counts
            // completed sub-counter episodes); the flat one on the barrier word
            barrier_arrivals: match (0..word::SUBS).map(|s| w(word::SUB + s * word::SUB_STRIDE)).sum::<u32>() {
                0 => w(word::BARRIER),
                tree => tree,
            },
            config: *config,
        }
    }

    /// True when the kernel aborted.
    pub fn aborted(&self) -> bool {
        self.abort.is_some()
    }

    /// The error a caller sees when an abort is not recovered from.
    pub fn error(&self, what: &str, adapter: &str, seconds: f64) -> Error {
        let reason = self.abort.unwrap_or(AbortReason::Unknown(0));
        let what = format!("{what} on {adapter}: {} (code {}, detail {})", reason.describe(), reason.code(), self.detail);
        match reason {
            AbortReason::QueueOverflow => Error::Limit {
                what,
                requested: self.detail as u64 + 1,
                limit: self.config.capacity as u64,
                hint: "retry with a larger queue `capacity`".into(),
            },
            AbortReason::DiscoveryFailure => Error::Unsupported {
                what: format!("occupancy discovery ({what})"),
                adapter: adapter.into(),
                hint: "give `tier` 0 or 1 (no waiting between workgroups)".into(),
            },
            AbortReason::LoopLimit => Error::Timeout {
                what,
                seconds,
                hint: "the run was cut short, not wrong: the driver ends an invocation's loops after a fixed number of iterations (llvmpipe: 65535 in all); use a smaller size or more workgroups".into(),
            },
            _ => Error::Timeout {
                what,
                seconds,
                hint: format!(
                    "the kernel aborted after {} polls; the blocking tier needs every participant co-resident: give `tier` 0 or 1",
                    self.config.spin_cap
                ),
            },
        }
    }

    /// Ok when no abort was reported, else [`Status::error`].
    pub fn into_result(self, what: &str, adapter: &str, seconds: f64) -> crate::Result<Status> {
        if self.aborted() {
            Err(self.error(what, adapter, seconds))
        } else {
            Ok(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abort_codes_round_trip_and_decode() {
        for c in 1..=6 {
            assert_eq!(AbortReason::from_code(c).unwrap().code(), c);
        }
        assert_eq!(AbortReason::from_code(0), None);
        let cfg = PtConfig { spin_cap: 100, capacity: 8, ..bytemuck::Zeroable::zeroed() };
        let mut words = vec![0u32; 64];
        words[word::ABORT] = 2;
        words[word::DETAIL] = 9;
        words[word::COUNT] = 4;
        let s = Status::decode(&words, &cfg);
        assert_eq!(s.abort, Some(AbortReason::QueueOverflow));
        assert_eq!(s.discovered, 4);
        match s.error("forest", "lavapipe", 0.1) {
            Error::Limit { requested, limit, .. } => assert_eq!((requested, limit), (10, 8)),
            e => panic!("{e}"),
        }
        words[word::ABORT] = 1;
        let e = Status::decode(&words, &cfg).error("gsync", "x", 0.1).to_string();
        assert!(e.contains("barrier timeout") && e.contains("`tier`"), "{e}");
        words[word::ABORT] = 5;
        let e = Status::decode(&words, &cfg).error("queue", "llvmpipe", 0.1).to_string();
        assert!(e.contains("cut short, not wrong") && !e.contains("`tier`"), "{e}");
    }
}
