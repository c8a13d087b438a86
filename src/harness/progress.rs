//! Progress of long sweeps, as events for whoever listens: the library never prints. The
//! command line installs a [`Reporter`] that draws a bar on a terminal; an app can install its
//! own (or none: then progress goes nowhere).

use std::sync::{Arc, RwLock};

/// What a sweep reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A sweep of `total` steps named `what` starts.
    Start {
        /// The sweep's name.
        what: String,
        /// Steps it will take.
        total: u64,
    },
    /// One step is done; `next` says what runs now.
    Step {
        /// What runs next.
        next: String,
    },
    /// What runs now, without a step.
    Message {
        /// What runs now.
        text: String,
    },
    /// A line for people (a failed point, a fallback), kept above the bar.
    Line {
        /// The line.
        text: String,
    },
    /// The sweep ended.
    Finish,
}

/// Receives the [`Event`]s of every sweep in the process.
pub trait Reporter: Send + Sync {
    /// Handles one event; `sweep` tells concurrent sweeps apart.
    fn report(&self, sweep: u64, event: Event);
}

static REPORTER: RwLock<Option<Arc<dyn Reporter>>> = RwLock::new(None);
static NEXT_SWEEP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Installs `reporter` for every sweep started from now on (`None` to stop reporting).
pub fn set_reporter(reporter: Option<Arc<dyn Reporter>>) {
    *REPORTER.write().unwrap_or_else(|e| e.into_inner()) = reporter;
}

/// One sweep's progress handle: cheap, and silent without a reporter.
#[derive(Debug)]
pub struct Progress {
    sweep: u64,
    reporter: Option<Arc<dyn Reporter>>,
}

impl Progress {
    /// A sweep of `total` steps named `what`.
    pub fn new(total: u64, what: &str) -> Self {
        let reporter = REPORTER.read().unwrap_or_else(|e| e.into_inner()).clone();
        let progress = Progress { sweep: NEXT_SWEEP.fetch_add(1, std::sync::atomic::Ordering::Relaxed), reporter };
        progress.send(Event::Start { what: what.to_string(), total });
        progress
    }

    fn send(&self, event: Event) {
        if let Some(r) = &self.reporter {
            r.report(self.sweep, event);
        }
    }

    /// Moves one step on, saying what runs next.
    pub fn step(&self, next: impl Into<String>) {
        self.send(Event::Step { next: next.into() });
    }

    /// Says what runs now.
    pub fn message(&self, text: impl Into<String>) {
        self.send(Event::Message { text: text.into() });
    }

    /// A line for people, above the bar.
    pub fn println(&self, text: impl AsRef<str>) {
        self.send(Event::Line { text: text.as_ref().to_string() });
    }

    /// Ends the sweep.
    pub fn finish(&self) {
        self.send(Event::Finish);
    }
}

impl std::fmt::Debug for dyn Reporter + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reporter")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Collect(Mutex<Vec<(u64, Event)>>);

    impl Reporter for Collect {
        fn report(&self, sweep: u64, event: Event) {
            self.0.lock().unwrap().push((sweep, event));
        }
    }

    #[test]
    fn events_go_to_the_installed_reporter_and_nowhere_without_one() {
        let silent = Progress::new(3, "silent");
        silent.step("nobody hears this");
        let collect = Arc::new(Collect(Mutex::new(Vec::new())));
        set_reporter(Some(collect.clone()));
        let p = Progress::new(2, "sweep");
        p.step("b");
        p.println("a note");
        p.finish();
        set_reporter(None);
        Progress::new(1, "after").finish();
        let seen: Vec<Event> = collect.0.lock().unwrap().iter().filter(|(s, _)| *s == p.sweep).map(|(_, e)| e.clone()).collect();
        assert_eq!(
            seen,
            [
                Event::Start { what: "sweep".into(), total: 2 },
                Event::Step { next: "b".into() },
                Event::Line { text: "a note".into() },
                Event::Finish
            ]
        );
        assert!(collect.0.lock().unwrap().iter().all(|(s, _)| *s != silent.sweep), "a sweep started before the reporter stays silent");
    }
}
