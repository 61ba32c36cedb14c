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
}

impl Tracker {
    pub fn new(mode: Progress, target: Option<&str>, total: usize) -> Tracker {
        Tracker {
            mode,
            prefix: target.map(|t| format!("{t}: ")).unwrap_or_default(),
            total,
            done: AtomicUsize::new(0),
            out: Mutex::new(()),
        }
    }

    /// A check finished.
    pub fn finished(&self, r: &CheckResult) {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let _guard = self.out.lock();
        let mut err = std::io::stderr();
        let total = self.total;
        let _ = match self.mode {
            Progress::Off => return,
            Progress::Terminal => {
                write!(err, "\r\x1b[2K[{n}/{total}] {}{}", self.prefix, r.info.id)
            }
            Progress::Lines => {
                let status = match crate::checks::judged_at_end(r) {
                    true => "ran (judged when the run ends)".to_owned(),
                    false => r.status.to_string(),
                };
                writeln!(
                    err,
                    "[{n}/{total}] {}{} {status} {:.1}s",
                    self.prefix,
                    r.info.id,
                    r.duration.as_secs_f64()
                )
            }
        };
        let _ = err.flush();
    }

    /// The run is over: clear the line rewritten in place.
    pub fn done(&self) {
        if self.mode == Progress::Terminal {
            eprint!("\r\x1b[2K");
        }
    }
}
