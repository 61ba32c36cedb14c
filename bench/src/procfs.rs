//! CPU time and peak memory from `/proc` (Linux).

use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux ABI).
const TICKS_PER_SEC: u64 = 100;

/// The CPU time (user + system) `pid` has used: the sum of its live threads' `schedstat`
/// (nanoseconds) when available, else `utime + stime` of `/proc/<pid>/stat` (10 ms ticks).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let ticks = stat_ticks(&format!("/proc/{pid}/stat"));
    let mut nanos: u64 = 0;
    let mut any = false;
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for entry in dir.flatten() {
            let path = entry.path().join("schedstat");
            if let Some(ns) = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            {
                nanos += ns;
                any = true;
            }
        }
    }
    if any {
        // Threads that already exited are gone from task/; stat still counts them.
        let from_ticks = ticks
            .map(|t| t * 1_000_000_000 / TICKS_PER_SEC)
            .unwrap_or(0);
        if from_ticks > nanos + 20_000_000 {
            return Some(Duration::from_nanos(from_ticks));
        }
        return Some(Duration::from_nanos(nanos));
    }
    ticks.map(|t| Duration::from_nanos(t * 1_000_000_000 / TICKS_PER_SEC))
}

/// The CPU time of the calling thread (the bench driver is one thread).
pub fn own_cpu_time() -> Option<Duration> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .or_else(|| {
            stat_ticks("/proc/thread-self/stat")
                .map(|t| Duration::from_nanos(t * 1_000_000_000 / TICKS_PER_SEC))
        })
}

fn stat_ticks(path: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): utime is field 14, stime 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Peak resident memory (`VmHWM`) of `pid`, in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
