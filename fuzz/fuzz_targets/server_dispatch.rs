//! The echo server's `serve` loop in-process, fed message sequences built from the input: see
//! `fuzz/src/server_check.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp_fuzz::server_check::run(data);
});
