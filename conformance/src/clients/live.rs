//! One scenario as it runs: the scripted server and the timeline it is recorded in, behind one
//! lock so that what a transport records and what the script answers stay in one order. Once
//! the scenario is over the session is frozen: the harness's own clean-up (ending the client's
//! process group, which signals the relay too) is not evidence against the client.

use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use serde_json::Value;

use super::scenario::ScenarioId;
use super::script::{Script, Step};
use super::timeline::{Message, Side, Timeline, What, Wire};

/// The live state of one scenario run.
#[derive(Debug)]
pub(crate) struct Live {
    start: Instant,
    /// The wall clock at `start`: the relay stamps what it sees with the wall clock.
    wall: SystemTime,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) timeline: Timeline,
    pub(crate) script: Script,
    frozen: bool,
    start: Instant,
    /// When set, the time events are recorded at (the relay's stamp of what it saw) instead of
    /// now.
    pub(crate) stamp: Option<Duration>,
}

impl Inner {
    /// Records an event (nothing once frozen); its index, `None` once frozen.
    pub(crate) fn push(&mut self, what: What) -> Option<usize> {
        if self.frozen {
            return None;
        }
        let at = self.stamp.unwrap_or_else(|| self.start.elapsed());
        Some(self.timeline.push(at, what))
    }

    /// Records a message as it travelled.
    pub(crate) fn message(
        &mut self,
        from: Side,
        raw: Vec<u8>,
        exchange: Option<usize>,
    ) -> Option<Value> {
        let json: Option<Value> = serde_json::from_slice(&raw).ok();
        self.push(What::Message(Message {
            from,
            raw,
            json: json.clone(),
            exchange,
        }));
        json
    }

    /// One client message through the script (nothing once frozen).
    pub(crate) fn step(&mut self, message: &Value, can_push: bool, has_session: bool) -> Step {
        if self.frozen {
            return Step::default();
        }
        self.script.on_message(message, can_push, has_session)
    }

    /// Sets the time of event `index` (a server message: when the relay delivered it).
    pub(crate) fn retime(&mut self, index: usize, at: Duration) {
        if self.frozen {
            return;
        }
        if let Some(e) = self.timeline.events.get_mut(index) {
            e.at = at;
        }
    }

    /// A message, or each member of a batch, through the script.
    pub(crate) fn steps(
        &mut self,
        message: &Value,
        can_push: bool,
        has_session: bool,
    ) -> Vec<Step> {
        match message {
            Value::Array(batch) => batch
                .iter()
                .map(|m| self.step(m, can_push, has_session))
                .collect(),
            one => vec![self.step(one, can_push, has_session)],
        }
    }
}

impl Live {
    pub(crate) fn new(scenario: ScenarioId, wire: Wire) -> Live {
        let start = Instant::now();
        Live {
            start,
            wall: SystemTime::now(),
            inner: Mutex::new(Inner {
                timeline: Timeline::new(wire),
                script: Script::new(scenario),
                frozen: false,
                start,
                stamp: None,
            }),
        }
    }

    /// The time since the start of a wall-clock stamp (microseconds since the epoch).
    pub(crate) fn since_start(&self, micros: u64) -> Duration {
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(micros);
        at.duration_since(self.wall).unwrap_or_default()
    }

    /// Now, from the start.
    pub(crate) fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// Runs `f` with the session locked.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock())
    }

    pub(crate) fn push(&self, what: What) {
        self.with(|i| i.push(what));
    }

    /// Records an event that happened at `at`, before any recorded later (stdio only: there
    /// are no exchange indices to keep).
    pub(crate) fn insert_at(&self, at: Duration, what: What) {
        self.with(|i| {
            if i.frozen {
                return;
            }
            let events = &mut i.timeline.events;
            let pos = events
                .iter()
                .position(|e| e.at > at)
                .unwrap_or(events.len());
            events.insert(pos, super::timeline::Event { at, what });
        });
    }

    /// Nothing more is recorded or answered.
    pub(crate) fn freeze(&self) {
        self.inner.lock().frozen = true;
    }

    /// Orders the events by time, stably (stdio: the relay's clock says when the server process
    /// read or delivered each; there are no exchange indices to keep).
    pub(crate) fn sort_by_time(&self) {
        self.inner.lock().timeline.events.sort_by_key(|e| e.at);
    }

    pub(crate) fn timeline(&self) -> Timeline {
        self.inner.lock().timeline.clone()
    }
}
