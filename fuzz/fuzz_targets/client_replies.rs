//! `mcp_client::Client` with pending calls, fed server-to-client bytes built from the input, on
//! a paused-time runtime: see `fuzz/src/client_check.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::client_check::{check, run_client, Scenario, Timing};

fuzz_target!(|data: &[u8]| {
    // A fresh runtime per input: tasks a run leaves behind (a client stalled on a full pipe)
    // are dropped with it.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a tokio runtime");
    let s = Scenario::from_bytes(data, Timing::Virtual);
    let r = run_client(&s, &rt);
    check(&s, &r, Timing::Virtual);
});
