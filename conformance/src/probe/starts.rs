//! How long each start of the target took to answer its first request: the report's
//! `starts` (first, median, slowest), and what tells a start that never answers.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::check::Starts;

/// How long each start of the target took to answer, shared by its probes.
#[derive(Debug, Clone, Default)]
pub struct StartLog(Arc<Mutex<Vec<Option<Duration>>>>);

impl StartLog {
    pub(super) fn register(&self) -> usize {
        let mut starts = self.0.lock();
        starts.push(None);
        starts.len() - 1
    }

    pub(super) fn answered(&self, index: usize, after: Duration) {
        if let Some(slot) = self.0.lock().get_mut(index) {
            slot.get_or_insert(after);
        }
    }

    /// How long the quickest earlier start took to answer, if one did.
    pub(super) fn any_answered(&self) -> Option<Duration> {
        self.0.lock().iter().flatten().min().copied()
    }

    pub fn snapshot(&self) -> Starts {
        let starts = self.0.lock();
        Starts {
            count: starts.len(),
            answered: starts.iter().flatten().copied().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_are_kept_per_start() {
        let log = StartLog::default();
        let a = log.register();
        let b = log.register();
        assert_eq!(log.any_answered(), None);
        log.answered(b, Duration::from_millis(30));
        log.answered(b, Duration::from_millis(90));
        log.answered(a, Duration::from_millis(50));
        let s = log.snapshot();
        assert_eq!(s.count, 2);
        assert_eq!(
            s.answered,
            [Duration::from_millis(50), Duration::from_millis(30)]
        );
        assert_eq!(log.any_answered(), Some(Duration::from_millis(30)));
    }
}
