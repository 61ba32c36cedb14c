//! Keeping glibc's malloc from holding on to memory after large requests.
//!
//! glibc serves a block of 128 KiB or more with its own `mmap`, returned to the system on
//! `free`, but each such free raises that threshold to the block's size (up to 32 MiB). After
//! one large body or reply, blocks of a few MiB come from the heap instead, where freed memory
//! stays resident: 50 unread 8 MiB replies left 76 MiB resident a second after their clients
//! went, against 5 MiB with the threshold fixed (`scripts/http_attacks.py`). Fixing it also
//! turns the dynamic raise off. Requests of the ordinary sizes never reach the threshold.
//!
//! Only over HTTP, whose clients are strangers and many: over stdio the one peer is the host
//! that launched the server, messages are bounded and batches cut short.
//!
//! This is the workspace's one `unsafe` call: glibc reads the setting from the environment
//! only at process start (`MALLOC_MMAP_THRESHOLD_`), so setting it later takes `mallopt`;
//! starting the process a second time with the variable set cost 1.4 ms of start-up.

/// Blocks from 1 MiB up get their own mapping and go back to the system when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const THRESHOLD: libc::c_int = 1 << 20;

/// Fixes glibc's mmap threshold at [`THRESHOLD`], unless the user set one in the environment;
/// elsewhere, nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn fix_threshold() {
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some() {
        return;
    }
    // SAFETY: `mallopt` takes two integers and changes the allocator's settings under its own
    // lock; it reads and writes no memory of ours.
    #[allow(unsafe_code)]
    let set = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD) };
    if set != 1 {
        tracing::debug!("malloc's mmap threshold stays dynamic (mallopt refused)");
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn fix_threshold() {}
