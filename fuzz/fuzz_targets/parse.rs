//! `mcp_protocol::parse` on arbitrary bytes: see `fuzz/src/parse_check.rs`; and the server's
//! reading of params against it: `fuzz/src/params_check.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp_fuzz::parse_check::run(data);
    mcp_fuzz::params_check::run(data);
});
