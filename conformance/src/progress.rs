//! Progress while checks run, on stderr: one line rewritten in place on a terminal, or one line
//! per finished check (`[12/65] lifecycle.ping PASS 0.2s`) for CI logs, which must show that a
//! run is moving.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::check::CheckResult;
use crate::config::Progress;

/// One target's progress.
#[derive(Debug)]
pub struct Tracker {
    mode: Progress,
    /// Put before each line when several targets run.
    prefix: String,
    total: usize,
    done: AtomicUsize,
    /// Lines from concurrent checks do not interleave.
    out: Mutex<()>,
    /// Checks that ran but whose verdict waits for the end of the run: their lines come then.
    deferred: Mutex<Vec<String>>,
}

impl Tracker {
    pub fn new(mode: Progress, target: Option<&str>, total: usize) -> Tracker {
        Tracker {
            mode,
            prefix: target.map(|t| format!("{t}: ")).unwrap_or_default(),
            total,
            done: AtomicUsize::new(0),
            out: Mutex::new(()),
            deferred: Mutex::new(Vec::new()),
        }
    }

    /// A check finished.
    pub fn finished(&self, r: &CheckResult) {
        if crate::checks::judged_at_end(r) {
            self.deferred.lock().push(r.info.id.clone());
            return;
        }
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let _guard = self.out.lock();
        let mut err = std::io::stderr();
        let total = self.total;
        let _ = match self.mode {
            Progress::Off => return,
            Progress::Terminal => {
                write!(err, "\r\x1b[2K[{n}/{total}] {}{}", self.prefix, r.info.id)
            }
            Progress::Lines => writeln!(
                err,
                "[{n}/{total}] {}{} {} {:.1}s",
                self.prefix,
                r.info.id,
                r.status,
                r.duration.as_secs_f64()
            ),
        };
        let _ = err.flush();
    }

    /// The run's verdicts are settled: the lines of the checks judged at its end.
    pub fn settled(&self, results: &[CheckResult]) {
        let deferred = std::mem::take(&mut *self.deferred.lock());
        for r in results.iter().filter(|r| deferred.contains(&r.info.id)) {
            self.finished(r);
        }
    }

    /// The run is over: clear the line rewritten in place.
    pub fn done(&self) {
        if self.mode == Progress::Terminal {
            eprint!("\r\x1b[2K");
        }
    }
}
