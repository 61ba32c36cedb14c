//! Keeping glibc's malloc from holding on to memory after large requests.
//!
//! glibc serves a block of 128 KiB or more with its own `mmap`, returned to the system on
//! `free`, but each such free raises that threshold to the block's size (up to 32 MiB). After
//! one large body or reply, blocks of a few MiB come from the heap instead, where freed memory
//! stays resident: 50 unread 8 MiB replies left 76 MiB resident a second after their clients
//! went, against 5 MiB with the threshold fixed (`scripts/http_attacks.py`). glibc reads a
//! fixed threshold only from the environment at process start (setting it later takes
//! `mallopt`, which is `unsafe`, forbidden in this workspace), so the server starts itself once
//! more with it set. Requests of the ordinary sizes never reach the threshold.
//!
//! Only over HTTP, whose clients are strangers and many: over stdio the one peer is the host
//! that launched the server, messages are bounded and batches cut short, and a second `exec`
//! would add to the start-up that hosts pay for every session.

use std::ffi::OsString;

/// glibc's tunable for a fixed mmap threshold (setting it turns the dynamic raise off).
const KEY: &str = "MALLOC_MMAP_THRESHOLD_";
/// Blocks from 1 MiB up get their own mapping and go back to the system when freed.
const THRESHOLD: &str = "1048576";

/// Re-executes this program with the threshold set, unless it is set already (by us or by
/// the user) or this is not glibc; returns only if that is not done or fails.
pub(crate) fn fix_threshold() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) || std::env::var_os(KEY).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args
        .next()
        .unwrap_or_else(|| OsString::from("mcp-echo-server"));
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(exe)
        .arg0(arg0)
        .args(args)
        .env(KEY, THRESHOLD)
        .exec();
    // Serving goes on with glibc's defaults; only memory after large requests differs.
    eprintln!(
        "mcp-echo-server: note: cannot fix malloc's mmap threshold ({error}); going on without"
    );
}
