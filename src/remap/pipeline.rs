//! CPU-GPU pipelining (Zhang et al. §4.1): host workers compute the remap of chunk i+Δ while
//! the GPU runs chunk i, so the remap cost hides behind kernel time.
//!
//! The GPU side never waits for a remap: a chunk whose remap is not ready when its turn comes
//! runs unmapped (always correct, since a remap only changes which thread handles which
//! element), the late remap is discarded, and Δ grows by one (up to a maximum) so later
//! remaps get more lead time. Chunks before the initial depth run unmapped while the pipeline
//! fills (warm-up). A remap closure that returns `None` declines its chunk, e.g. because its
//! [`super::Deadline`] expired: it could no longer pay for itself.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use web_time::Instant;

use serde::Serialize;
use serde_json::json;

use crate::error::{Error, Result};

/// How a chunk ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkOutcome {
    /// Ran with its remap.
    Mapped,
    /// Inside the initial depth: no remap was requested.
    Warmup,
    /// The remap was not ready in time; ran unmapped and Δ grew.
    Late,
    /// The remap closure returned `None`; ran unmapped.
    Declined,
}

/// One remap computation on a host worker.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RemapSpan {
    /// Index of the host worker thread, from 0.
    pub worker: usize,
    /// Seconds since the pipeline started.
    pub start_s: f64,
    /// Seconds since the pipeline started.
    pub end_s: f64,
}

/// Both sides of one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChunkTiming {
    /// Chunk index, from 0.
    pub chunk: usize,
    /// How the chunk ran.
    pub outcome: ChunkOutcome,
    /// The chunk ran with its remap (`outcome` is [`ChunkOutcome::Mapped`]).
    pub mapped: bool,
    /// Pipeline depth Δ when the GPU took the chunk.
    pub depth: usize,
    /// The remap work, when a worker ran it (late remaps included).
    pub remap: Option<RemapSpan>,
    /// When the run closure took the chunk, in seconds since the pipeline started.
    pub gpu_start_s: f64,
    /// When the run closure returned, in seconds since the pipeline started.
    pub gpu_end_s: f64,
}

/// Timeline of a pipelined run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineReport {
    /// Host worker threads computing remaps.
    pub workers: usize,
    /// The largest pipeline depth Δ allowed.
    pub max_depth: usize,
    /// Largest Δ used.
    pub depth_reached: usize,
    /// Seconds from the start of the pipeline to its last chunk's end.
    pub wall_s: f64,
    /// In chunk order.
    pub chunks: Vec<ChunkTiming>,
}

impl PipelineReport {
    /// Chunks that ran with `outcome`.
    pub fn count(&self, outcome: ChunkOutcome) -> usize {
        self.chunks.iter().filter(|c| c.outcome == outcome).count()
    }

    /// chrome://tracing / Perfetto JSON: the GPU on thread 0, worker w on thread w + 1.
    pub fn to_chrome_trace(&self) -> String {
        let us = |s: f64| s * 1e6;
        let mut events = vec![json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "GPU"}})];
        for w in 0..self.workers {
            events.push(json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": w + 1, "args": {"name": format!("remap worker {w}")}}));
        }
        for c in &self.chunks {
            events.push(json!({
                "name": format!("chunk {}", c.chunk), "cat": "gpu", "ph": "X", "pid": 1, "tid": 0,
                "ts": us(c.gpu_start_s), "dur": us(c.gpu_end_s - c.gpu_start_s),
                "args": {"outcome": c.outcome, "mapped": c.mapped, "depth": c.depth},
            }));
            if let Some(r) = c.remap {
                events.push(json!({
                    "name": format!("remap {}", c.chunk), "cat": "remap", "ph": "X", "pid": 1, "tid": r.worker + 1,
                    "ts": us(r.start_s), "dur": us(r.end_s - r.start_s),
                    "args": {"used": c.mapped},
                }));
            }
        }
        json!({"traceEvents": events, "displayTimeUnit": "ms"}).to_string()
    }
}

/// A pool of host workers feeding a GPU loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    workers: usize,
    max_depth: usize,
    initial_depth: usize,
}

/// From a worker to the GPU loop.
enum Arrival<M> {
    Done { chunk: usize, span: RemapSpan, mapping: Option<M> },
    Panicked { chunk: usize },
}

/// What the GPU loop knows of a chunk's remap.
enum Slot<M> {
    Waiting,
    Ready { span: RemapSpan, mapping: Option<M> },
}

impl Pipeline {
    /// `workers` host threads; Δ starts at 1 and grows up to `max_depth`.
    pub fn new(workers: usize, max_depth: usize) -> Result<Pipeline> {
        if workers == 0 {
            return Err(Error::invalid("pipeline workers", "0; use at least 1 host thread"));
        }
        if max_depth == 0 {
            return Err(Error::invalid("pipeline depth", "maximum 0; use at least 1"));
        }
        Ok(Pipeline { workers, max_depth, initial_depth: 1 })
    }

    /// Starts with Δ = `depth` (the first `depth` chunks run unmapped while the pipeline fills),
    /// e.g. a depth found by an earlier run.
    pub fn with_initial_depth(self, depth: usize) -> Result<Pipeline> {
        if depth == 0 || depth > self.max_depth {
            return Err(Error::invalid("pipeline depth", format!("initial {depth}; use 1..={}", self.max_depth)));
        }
        Ok(Pipeline { initial_depth: depth, ..self })
    }

    /// Runs `chunks` chunks: `remap(i)` on the workers (any order, concurrently), `run(i,
    /// mapping)` on the calling thread in chunk order, with the mapping when it was ready. The
    /// first error from `run` stops the pipeline and is returned; a panicking `remap` is
    /// reported as an error.
    pub fn run<M, R, G>(&self, chunks: usize, remap: R, mut run: G) -> Result<PipelineReport>
    where
        M: Send,
        R: Fn(usize) -> Option<M> + Sync,
        G: FnMut(usize, Option<&M>) -> Result<()>,
    {
        let t0 = Instant::now();
        let since = |t: Instant| t.duration_since(t0).as_secs_f64();
        let warmup = self.initial_depth.min(chunks);
        let mut report = PipelineReport {
            workers: self.workers,
            max_depth: self.max_depth,
            depth_reached: self.initial_depth,
            wall_s: 0.0,
            chunks: Vec::with_capacity(chunks),
        };

        let (job_tx, job_rx) = mpsc::channel::<usize>();
        let job_rx = Mutex::new(job_rx);
        // Chunks below this were taken by the GPU: remapping them is wasted work.
        let taken = AtomicUsize::new(0);
        let outcome = std::thread::scope(|scope| -> Result<()> {
            let (done_tx, done_rx) = mpsc::channel::<Arrival<M>>();
            for worker in 0..self.workers {
                let (done_tx, job_rx, taken, remap) = (done_tx.clone(), &job_rx, &taken, &remap);
                scope.spawn(move || loop {
                    let next = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(chunk) = next else { return };
                    if chunk < taken.load(Ordering::Acquire) {
                        continue;
                    }
                    let start = Instant::now();
                    let result = catch_unwind(AssertUnwindSafe(|| remap(chunk)));
                    let span = RemapSpan { worker, start_s: since(start), end_s: since(Instant::now()) };
                    let arrival = match result {
                        Ok(mapping) => Arrival::Done { chunk, span, mapping },
                        Err(_) => Arrival::Panicked { chunk },
                    };
                    if done_tx.send(arrival).is_err() {
                        return;
                    }
                });
            }
            drop(done_tx);

            let mut slots: Vec<Slot<M>> = (0..chunks).map(|_| Slot::Waiting).collect();
            let mut depth = self.initial_depth;
            let mut next_job = warmup;
            let mut failure: Option<Error> = None;

            // Files an arrival: a ready slot for a chunk still to run, the span of a late one.
            let file = |arrival: Arrival<M>, slots: &mut [Slot<M>], report: &mut PipelineReport| -> Option<Error> {
                match arrival {
                    Arrival::Panicked { chunk } => Some(Error::invalid("remap closure", format!("it panicked on chunk {chunk}"))),
                    Arrival::Done { chunk, span, mapping } => {
                        match report.chunks.get_mut(chunk) {
                            Some(timing) => timing.remap = Some(span),
                            None => slots[chunk] = Slot::Ready { span, mapping },
                        }
                        None
                    }
                }
            };

            for chunk in 0..chunks {
                while next_job < chunks && next_job <= chunk + depth {
                    // Workers outlive this loop, so the channel is open.
                    let _ = job_tx.send(next_job);
                    next_job += 1;
                }
                while let Ok(arrival) = done_rx.try_recv() {
                    if let Some(e) = file(arrival, &mut slots, &mut report) {
                        failure.get_or_insert(e);
                    }
                }
                if failure.is_some() {
                    break;
                }
                taken.store(chunk + 1, Ordering::Release);
                let launched_depth = depth;
                let slot = std::mem::replace(&mut slots[chunk], Slot::Waiting);
                let (outcome, span, mapping) = match slot {
                    _ if chunk < warmup => (ChunkOutcome::Warmup, None, None),
                    Slot::Ready { span, mapping: Some(m) } => (ChunkOutcome::Mapped, Some(span), Some(m)),
                    Slot::Ready { span, mapping: None } => (ChunkOutcome::Declined, Some(span), None),
                    Slot::Waiting => {
                        depth = (depth + 1).min(self.max_depth);
                        report.depth_reached = report.depth_reached.max(depth);
                        (ChunkOutcome::Late, None, None)
                    }
                };
                let gpu_start = Instant::now();
                let result = run(chunk, mapping.as_ref());
                report.chunks.push(ChunkTiming {
                    chunk,
                    outcome,
                    mapped: outcome == ChunkOutcome::Mapped,
                    depth: launched_depth,
                    remap: span,
                    gpu_start_s: since(gpu_start),
                    gpu_end_s: since(Instant::now()),
                });
                if let Err(e) = result {
                    failure = Some(e);
                    break;
                }
            }

            // Let idle workers skip what is left, then collect late spans until all have exited.
            taken.store(chunks, Ordering::Release);
            drop(job_tx);
            for arrival in done_rx.iter() {
                if let Some(e) = file(arrival, &mut slots, &mut report) {
                    failure.get_or_insert(e);
                }
            }
            failure.map_or(Ok(()), Err)
        });
        report.wall_s = since(Instant::now());
        outcome.map(|()| report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Marks of finished remaps, so a test's "GPU" can wait for the next chunk's remap and
    /// keep outcomes independent of scheduling on a loaded machine.
    struct Marks(Mutex<Vec<bool>>, std::sync::Condvar);

    impl Marks {
        fn new(n: usize) -> Marks {
            Marks(Mutex::new(vec![false; n]), std::sync::Condvar::new())
        }

        fn set(&self, i: usize) {
            self.0.lock().unwrap()[i] = true;
            self.1.notify_all();
        }

        /// Waits for mark i (if it exists), then a little longer for the result to be sent.
        fn wait(&self, i: usize) {
            let guard = self.0.lock().unwrap();
            if i < guard.len() {
                let _ = self.1.wait_timeout_while(guard, Duration::from_secs(10), |m| !m[i]).unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }

    #[test]
    fn fast_remaps_map_every_chunk_after_warmup() {
        let p = Pipeline::new(2, 4).unwrap();
        let marks = Marks::new(6);
        let report = p
            .run(
                6,
                |i| {
                    marks.set(i);
                    Some(i * 10)
                },
                |i, m| {
                    marks.wait(i + 1);
                    if i > 0 {
                        assert_eq!(m, Some(&(i * 10)));
                    }
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(report.count(ChunkOutcome::Warmup), 1);
        assert_eq!(report.count(ChunkOutcome::Mapped), 5);
        assert_eq!(report.depth_reached, 1);
    }

    #[test]
    fn slow_remaps_deepen_the_pipeline_up_to_its_maximum() {
        let p = Pipeline::new(1, 3).unwrap();
        let report = p
            .run(
                8,
                |i| {
                    std::thread::sleep(Duration::from_millis(6));
                    Some(i)
                },
                |_, _| Ok(()),
            )
            .unwrap();
        assert!(report.count(ChunkOutcome::Late) >= 2);
        assert_eq!(report.depth_reached, 3);
        assert!(report.chunks.windows(2).all(|w| w[0].depth <= w[1].depth));
    }

    #[test]
    fn declined_and_failed_chunks() {
        let p = Pipeline::new(1, 2).unwrap();
        let marks = Marks::new(4);
        let report = p
            .run(
                4,
                |i| {
                    marks.set(i);
                    (i != 2).then_some(())
                },
                |i, _| {
                    marks.wait(i + 1);
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(report.chunks[2].outcome, ChunkOutcome::Declined);
        assert_eq!(report.count(ChunkOutcome::Mapped), 2);

        let err = p.run(4, |_| Some(()), |i, _| if i == 1 { Err(Error::invalid("kernel", "boom")) } else { Ok(()) });
        assert!(err.is_err());

        let marks = Marks::new(3);
        let err = p.run(
            3,
            |i| {
                marks.set(i);
                if i == 1 {
                    panic!("remap bug");
                }
                Some(())
            },
            |i, _| {
                marks.wait(i + 1);
                Ok(())
            },
        );
        assert!(err.is_err());
    }

    #[test]
    fn bad_configuration_is_an_error() {
        assert!(Pipeline::new(0, 1).is_err());
        assert!(Pipeline::new(1, 0).is_err());
        assert!(Pipeline::new(1, 2).unwrap().with_initial_depth(3).is_err());
        assert!(Pipeline::new(1, 2).unwrap().run(0, |_| Some(()), |_, _| Ok(())).unwrap().chunks.is_empty());
    }
}
