//! `StdioCodec` in every framing mode, fed the input in several chunkings: see
//! `fuzz/src/codec_check.rs` for the invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp_fuzz::codec_check::run(data);
});
