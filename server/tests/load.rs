//! Load, back-pressure and soak tests of the real `mcp-echo-server` binary over real pipes,
//! driven by plain threads: a writer thread sends `tools/call` echo requests, a reader thread
//! checks every reply (each id answered exactly once, with its own text echoed back in
//! `content` and `structuredContent`), and the server's memory is read from
//! `/proc/<pid>/status` (`VmRSS` now, `VmHWM` the peak).
//!
//! What bounds the server's memory when its reader is slow: the server runs one task that
//! reads, dispatches, runs the tool calls that take time and writes, and it writes its pending
//! output (at most 24 KiB plus one reply, `HOLD_AT` in `pacing.rs`) before it reads more
//! input or takes the next finished call's reply. So a
//! client that stops reading stdout blocks the server's write, the server stops reading stdin,
//! the pipes fill, and the client's own writes block: back-pressure, not buffering.
//!
//! `soak_one_million_calls` is `#[ignore]`d: `scripts/soak.sh` runs it in release
//! (`SOAK_CALLS` overrides the count).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-echo-server");
/// A version with structured tool output, so each reply carries the text twice.
const VERSION: &str = "2025-06-18";
/// The longest any single wait may take before the server is killed and the test fails.
const LIMIT: Duration = Duration::from_secs(120);
/// The server's resident memory must stay under this (it needs ~5–10 MiB).
const RSS_LIMIT_KIB: u64 = 64 * 1024;
/// Growth of resident memory allowed after warm-up: a leak of 100 bytes per call would
/// show as ~9 MiB over 100 000 calls.
const GROWTH_LIMIT_KIB: u64 = 8 * 1024;

// ---------------------------------------------------------------------------------------------
// The server process
// ---------------------------------------------------------------------------------------------

struct Server {
    child: Child,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    stderr: Option<mpsc::Receiver<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        // A failed test must not leave the server running (nor a thread blocked on its pipes).
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    /// Spawns the server (warnings and errors only on stderr) and completes the handshake.
    fn start() -> Server {
        let mut child = Command::new(BIN)
            .args(["--log-level", "warn"])
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().map(BufReader::new);
        let mut err = child.stderr.take().unwrap();
        let (tx, stderr) = mpsc::channel();
        thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            let _ = tx.send(text);
        });
        let mut server = Server {
            child,
            pid,
            stdin,
            stdout,
            stderr: Some(stderr),
        };
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "load-test", "version": "1.0.0"}
            }
        });
        let stdin = server.stdin.as_mut().unwrap();
        writeln!(stdin, "{init}").unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        stdin.flush().unwrap();
        let stdout = server.stdout.take().unwrap();
        let (stdout, line) = server.wait("the initialize reply", move || {
            let mut stdout = stdout;
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            (stdout, line)
        });
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], 0, "{line}");
        assert_eq!(reply["result"]["protocolVersion"], VERSION, "{line}");
        server.stdout = Some(stdout);
        server
    }

    /// Runs `f` on a thread and waits for it up to [`LIMIT`]; past that, kills the server (so
    /// the thread's pipe ends) and fails.
    fn wait<T: Send + 'static>(&mut self, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        self.wait_for(what, LIMIT, f)
    }

    fn wait_for<T: Send + 'static>(
        &mut self,
        what: &str,
        limit: Duration,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = mpsc::channel();
        let handle = thread::spawn(move || {
            let _ = tx.send(f());
        });
        match rx.recv_timeout(limit) {
            Ok(value) => {
                handle.join().unwrap();
                value
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                panic!("timed out after {limit:?} waiting for {what}");
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The thread panicked: show its panic.
                match handle.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => unreachable!("the thread ended without sending"),
                }
            }
        }
    }

    /// A `kB` field of `/proc/<pid>/status`: `VmRSS` (now) or `VmHWM` (peak).
    fn status_kib(&self, field: &str) -> u64 {
        proc_status_kib(self.pid, field)
            .unwrap_or_else(|| panic!("no {field} in /proc/{}/status", self.pid))
    }

    fn assert_running(&mut self, when: &str) {
        if let Some(status) = self.child.try_wait().unwrap() {
            panic!("the server exited {when}: {status}");
        }
    }

    /// Closes stdin, reads stdout to its end (must be empty: every reply was read) and waits
    /// for the exit.
    fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let mut stdout = self.stdout.take().unwrap();
        let rest = self.wait("stdout to end", move || {
            let mut rest = Vec::new();
            stdout.read_to_end(&mut rest).unwrap();
            rest
        });
        assert!(
            rest.is_empty(),
            "output after the last reply: {:?}",
            String::from_utf8_lossy(&rest[..rest.len().min(500)])
        );
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < LIMIT, "the server did not exit after EOF");
            thread::sleep(Duration::from_millis(5));
        };
        let stderr = self
            .stderr
            .take()
            .unwrap()
            .recv_timeout(LIMIT)
            .unwrap_or_default();
        (status, stderr)
    }

    /// Closes stdin and checks a clean exit: status 0, stdout fully read, nothing logged at
    /// warn or error.
    fn finish_clean(self) {
        let (status, stderr) = self.finish();
        assert!(status.success(), "exit {status}; stderr:\n{stderr}");
        assert!(stderr.trim().is_empty(), "warnings or errors:\n{stderr}");
    }
}

fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ---------------------------------------------------------------------------------------------
// Requests and replies
// ---------------------------------------------------------------------------------------------

/// The text echoed by call `id` (non-ASCII too, so encoding is exercised).
fn text(id: u64) -> String {
    format!("call {id} ✓ écho")
}

/// One newline-delimited `tools/call` echo request.
fn request(id: u64) -> String {
    let msg = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text(id)}}
    });
    format!("{msg}\n")
}

/// Checks that every reply answers one request, once, with the right text.
struct Replies {
    /// How many times each id (1..=n) was answered.
    seen: Vec<u8>,
    count: u64,
    line: String,
}

impl Replies {
    fn new(n: u64) -> Replies {
        Replies {
            seen: vec![0; usize::try_from(n + 1).unwrap()],
            count: 0,
            line: String::new(),
        }
    }

    /// Reads and checks one reply.
    fn read_one(&mut self, stdout: &mut BufReader<ChildStdout>) {
        self.line.clear();
        let n = stdout.read_line(&mut self.line).unwrap();
        assert!(n > 0, "stdout ended after {} replies", self.count);
        let v: Value = serde_json::from_str(&self.line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.line));
        let id = v["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("reply without a numeric id: {}", self.line));
        let slot = self
            .seen
            .get_mut(usize::try_from(id).unwrap())
            .unwrap_or_else(|| panic!("reply to an id never sent: {}", self.line));
        *slot += 1;
        assert_eq!(*slot, 1, "id {id} answered twice: {}", self.line);
        let want = text(id);
        let result = &v["result"];
        assert_eq!(result["content"][0]["text"], want.as_str(), "{}", self.line);
        assert_eq!(
            result["structuredContent"]["text"],
            want.as_str(),
            "{}",
            self.line
        );
        assert!(result.get("isError").is_none(), "{}", self.line);
        self.count += 1;
    }

    /// Every id in 1..=n was answered exactly once.
    fn assert_complete(&self) {
        let missing: Vec<usize> = (1..self.seen.len())
            .filter(|&i| self.seen[i] == 0)
            .collect();
        assert!(
            missing.is_empty(),
            "{} of {} ids never answered, the first: {:?}",
            missing.len(),
            self.seen.len() - 1,
            &missing[..missing.len().min(10)]
        );
        assert_eq!(self.count, self.seen.len() as u64 - 1);
    }
}

// ---------------------------------------------------------------------------------------------
// 10 000 requests in flight
// ---------------------------------------------------------------------------------------------

/// 10 000 `tools/call` requests written at once by one thread (one write, never waiting for a
/// reply) while another thread reads: every id answered exactly once, with its own text, and
/// the server's peak memory stays small.
#[test]
fn ten_thousand_requests_in_flight_are_each_answered_once() {
    const N: u64 = 10_000;
    let mut server = Server::start();
    let baseline = server.status_kib("VmRSS");
    let mut stdin = server.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let mut all = String::new();
        for id in 1..=N {
            all.push_str(&request(id));
        }
        stdin.write_all(all.as_bytes()).unwrap();
        stdin.flush().unwrap();
        (stdin, all.len())
    });
    let mut stdout = server.stdout.take().unwrap();
    let started = Instant::now();
    let (stdout, replies) = server.wait("10 000 replies", move || {
        let mut replies = Replies::new(N);
        for _ in 0..N {
            replies.read_one(&mut stdout);
        }
        (stdout, replies)
    });
    let elapsed = started.elapsed();
    let (stdin, bytes) = writer.join().unwrap();
    replies.assert_complete();
    server.assert_running("after answering 10 000 requests");
    let hwm = server.status_kib("VmHWM");
    let rss = server.status_kib("VmRSS");
    eprintln!(
        "load: {N} requests in flight ({bytes} bytes in one write): all answered once in \
         {elapsed:.2?}; server RSS {:.1} MiB before, {:.1} MiB after, peak (VmHWM) {:.1} MiB",
        mib(baseline),
        mib(rss),
        mib(hwm)
    );
    assert!(
        hwm < RSS_LIMIT_KIB,
        "peak RSS {hwm} KiB with {N} requests in flight, more than {RSS_LIMIT_KIB} KiB"
    );
    server.stdin = Some(stdin);
    server.stdout = Some(stdout);
    server.finish_clean();
}

// ---------------------------------------------------------------------------------------------
// A slow reader: back-pressure
// ---------------------------------------------------------------------------------------------

/// The client reads 1 000 replies, then stops reading stdout while its writer thread keeps
/// sending (100 000 requests in all, ~12 MB, far more than the pipes and the server's buffers
/// hold). The server must stop reading instead of buffering: its memory stays flat during the
/// stall, the writer ends up blocked, and the server is still alive. The stall lasts at least
/// 3 s and until the writer made no progress for a second (bounded by `LIMIT`), so a loaded
/// machine that is slow to fill the pipes only makes it longer. When the reader resumes,
/// every request is answered exactly once.
#[test]
fn a_slow_reader_gets_back_pressure_and_loses_nothing() {
    const N: u64 = 100_000;
    const READ_FIRST: u64 = 1_000;
    const STALL: Duration = Duration::from_secs(3);
    const SAMPLE: Duration = Duration::from_millis(50);

    let mut server = Server::start();
    let written = Arc::new(AtomicU64::new(0));
    let mut stdin = server.stdin.take().unwrap();
    let progress = Arc::clone(&written);
    let writer = thread::spawn(move || {
        // Chunks of 100 requests; `written` counts requests whose write completed.
        let mut id = 1;
        while id <= N {
            let end = (id + 99).min(N);
            let chunk: String = (id..=end).map(request).collect();
            stdin.write_all(chunk.as_bytes()).unwrap();
            progress.store(end, Ordering::SeqCst);
            id = end + 1;
        }
        stdin.flush().unwrap();
        stdin
    });

    let (paused_tx, paused_rx) = mpsc::channel::<()>();
    let (resume_tx, resume_rx) = mpsc::channel::<()>();
    let mut stdout = server.stdout.take().unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut replies = Replies::new(N);
        for _ in 0..READ_FIRST {
            replies.read_one(&mut stdout);
        }
        paused_tx.send(()).unwrap();
        // Not reading: the server's writes to stdout must block.
        if resume_rx.recv().is_err() {
            return;
        }
        for _ in READ_FIRST..N {
            replies.read_one(&mut stdout);
        }
        let _ = done_tx.send((stdout, replies));
    });

    if paused_rx.recv_timeout(LIMIT).is_err() {
        let _ = server.child.kill();
        panic!("the first {READ_FIRST} replies did not come (or the reader failed)");
    }
    // The stall: sample the server's memory and the writer's progress, until the writer has
    // been stuck for a second (or wrote everything: no back-pressure, failed below).
    let stall_start = Instant::now();
    let mut samples: Vec<(Duration, u64, u64)> = Vec::new();
    loop {
        let now = stall_start.elapsed();
        let progress = written.load(Ordering::SeqCst);
        samples.push((now, server.status_kib("VmRSS"), progress));
        let stuck_for_a_second = samples
            .iter()
            .rev()
            .find(|s| s.0 + Duration::from_secs(1) <= now)
            .is_some_and(|s| s.2 == progress);
        if now >= STALL && (stuck_for_a_second || progress == N) {
            break;
        }
        if now >= LIMIT {
            let _ = server.child.kill();
            panic!("the writer still made progress after a stall of {now:?}: {progress} of {N}");
        }
        thread::sleep(SAMPLE);
    }
    server.assert_running("while its reader was stalled");
    let (_, rss_first, _) = samples[0];
    let rss_max = samples.iter().map(|s| s.1).max().unwrap();
    let (last_at, rss_last, written_at_end) = *samples.last().unwrap();
    let written_a_second_before = samples
        .iter()
        .rev()
        .find(|s| s.0 + Duration::from_secs(1) <= last_at)
        .map(|s| s.2)
        .unwrap();
    eprintln!(
        "load: slow reader: after {READ_FIRST} replies the reader stalled {:.1?}: server RSS \
         {:.2} MiB at the stall's start, {:.2} MiB at its end, max {:.2} MiB ({} samples); the \
         writer had written {written_at_end} of {N} requests and was blocked (no progress in \
         the last second: {written_a_second_before} → {written_at_end})",
        stall_start.elapsed(),
        mib(rss_first),
        mib(rss_last),
        mib(rss_max),
        samples.len()
    );

    resume_tx.send(()).unwrap();
    let resumed = Instant::now();
    let done = done_rx.recv_timeout(LIMIT);
    let Ok((stdout, replies)) = done else {
        let _ = server.child.kill();
        match reader.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("timed out after {LIMIT:?} waiting for the replies after the stall"),
        }
    };
    reader.join().unwrap();
    let stdin = writer.join().unwrap();
    replies.assert_complete();
    eprintln!(
        "load: slow reader: resumed, the other {} replies came in {:.2?}; all {N} answered once",
        N - READ_FIRST,
        resumed.elapsed()
    );

    assert!(
        written_at_end < N,
        "the writer sent all {N} requests while nobody read the replies: no back-pressure"
    );
    assert_eq!(
        written_a_second_before, written_at_end,
        "the writer kept making progress during the stall"
    );
    assert!(
        rss_max < RSS_LIMIT_KIB,
        "server RSS {rss_max} KiB during the stall"
    );
    assert!(
        rss_max - rss_first < GROWTH_LIMIT_KIB,
        "server RSS grew from {rss_first} to {rss_max} KiB while its reader was stalled"
    );
    server.stdin = Some(stdin);
    server.stdout = Some(stdout);
    server.finish_clean();
}

// ---------------------------------------------------------------------------------------------
// Soak
// ---------------------------------------------------------------------------------------------

/// What a soak measured.
struct Soak {
    calls: u64,
    window: usize,
    elapsed: Duration,
    /// RSS after the handshake, before the first call.
    rss_start: u64,
    /// (calls answered, VmRSS) every `every` calls.
    samples: Vec<(u64, u64)>,
    /// The sample taken at the end of warm-up (a tenth of the calls).
    rss_warm: u64,
    rss_end: u64,
    hwm_end: u64,
}

impl Soak {
    fn rss_max(&self) -> u64 {
        self.samples.iter().map(|s| s.1).max().unwrap_or(0)
    }

    /// RSS growth from the end of warm-up to the end (0 if it shrank).
    fn growth(&self) -> u64 {
        self.rss_end.saturating_sub(self.rss_warm)
    }

    fn print(&self) {
        let secs = self.elapsed.as_secs_f64();
        eprintln!(
            "soak: {} echo calls through one server process, window {}: {secs:.2} s \
             ({:.0} calls/s); every id answered exactly once with its text",
            self.calls,
            self.window,
            self.calls as f64 / secs
        );
        eprintln!("soak: RSS (VmRSS, KiB) sampled by calls answered:");
        for (calls, kib) in &self.samples {
            eprintln!("soak:   {calls:>9} {kib:>7}");
        }
        eprintln!(
            "soak: RSS start {} KiB, after warm-up {} KiB, end {} KiB, max {} KiB, peak \
             (VmHWM) {} KiB, growth after warm-up {} KiB",
            self.rss_start,
            self.rss_warm,
            self.rss_end,
            self.rss_max(),
            self.hwm_end,
            self.rss_end as i64 - self.rss_warm as i64
        );
    }
}

/// `calls` echo calls through one server, pipelined with at most `window` in flight, RSS
/// sampled every `every` calls answered; then EOF and a clean exit.
fn soak(calls: u64, window: usize, every: u64) -> Soak {
    let mut server = Server::start();
    let pid = server.pid;
    let rss_start = server.status_kib("VmRSS");
    // Window tokens: the writer takes one per request, the reader gives one back per reply.
    let (token_tx, token_rx) = mpsc::sync_channel::<()>(window);
    for _ in 0..window {
        token_tx.send(()).unwrap();
    }
    let stdin = server.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let mut out = BufWriter::with_capacity(64 * 1024, stdin);
        for id in 1..=calls {
            if token_rx.try_recv().is_err() {
                // The window is full: send what is buffered, then wait for a reply.
                out.flush().unwrap();
                if token_rx.recv().is_err() {
                    break; // the reader is gone (it failed)
                }
            }
            out.write_all(request(id).as_bytes()).unwrap();
        }
        out.flush().unwrap();
        out.into_inner().unwrap()
    });
    let mut stdout = server.stdout.take().unwrap();
    let started = Instant::now();
    let limit = LIMIT.max(Duration::from_millis(calls / 5));
    let (stdout, replies, samples) = server.wait_for("the soak's replies", limit, move || {
        let mut replies = Replies::new(calls);
        let mut samples = Vec::new();
        for n in 1..=calls {
            replies.read_one(&mut stdout);
            let _ = token_tx.try_send(());
            if n % every == 0 || n == calls {
                samples.push((n, proc_status_kib(pid, "VmRSS").unwrap()));
            }
        }
        (stdout, replies, samples)
    });
    let elapsed = started.elapsed();
    let stdin = writer.join().unwrap();
    replies.assert_complete();
    server.assert_running("after the soak");
    let rss_end = server.status_kib("VmRSS");
    let hwm_end = server.status_kib("VmHWM");
    let warm_up = calls / 10;
    let rss_warm = samples
        .iter()
        .find(|s| s.0 >= warm_up)
        .map(|s| s.1)
        .unwrap();
    server.stdin = Some(stdin);
    server.stdout = Some(stdout);
    server.finish_clean();
    Soak {
        calls,
        window,
        elapsed,
        rss_start,
        samples,
        rss_warm,
        rss_end,
        hwm_end,
    }
}

fn assert_flat(s: &Soak) {
    assert!(
        s.hwm_end < RSS_LIMIT_KIB,
        "peak RSS {} KiB, more than {RSS_LIMIT_KIB} KiB",
        s.hwm_end
    );
    assert!(
        s.growth() < GROWTH_LIMIT_KIB,
        "RSS grew {} KiB after warm-up ({} → {} KiB)",
        s.growth(),
        s.rss_warm,
        s.rss_end
    );
}

/// 100 000 calls (a short soak that fits in `cargo test`), 64 in flight.
#[test]
fn soak_one_hundred_thousand_calls() {
    let s = soak(100_000, 64, 10_000);
    s.print();
    assert_flat(&s);
}

/// 1 000 000 calls (or `SOAK_CALLS`) through one process: `scripts/soak.sh` runs this in
/// release and records the figures.
#[test]
#[ignore = "minutes in a debug build; run by scripts/soak.sh (release)"]
fn soak_one_million_calls() {
    let calls: u64 = std::env::var("SOAK_CALLS")
        .ok()
        .map(|v| v.parse().expect("SOAK_CALLS must be a number"))
        .unwrap_or(1_000_000);
    let window: usize = std::env::var("SOAK_WINDOW")
        .ok()
        .map(|v| v.parse().expect("SOAK_WINDOW must be a number"))
        .unwrap_or(64);
    let s = soak(calls, window, (calls / 20).max(1));
    s.print();
    assert_flat(&s);
}

/// A smoke check of the helpers (spawn, handshake, one call, clean exit), so that a failure in
/// the big tests is not a helper bug.
#[test]
fn one_call_round_trip() {
    let mut server = Server::start();
    let stdin = server.stdin.as_mut().unwrap();
    stdin.write_all(request(1).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut stdout = server.stdout.take().unwrap();
    let (stdout, replies) = server.wait("one reply", move || {
        let mut replies = Replies::new(1);
        replies.read_one(&mut stdout);
        (stdout, replies)
    });
    replies.assert_complete();
    server.stdout = Some(stdout);
    server.finish_clean();
}
