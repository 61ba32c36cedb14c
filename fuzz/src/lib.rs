//! Invariant checks shared by the cargo-fuzz targets in `fuzz_targets/` and by the proptest
//! files `protocol/tests/props.rs`, `server/tests/props.rs` and `client/tests/props.rs`, which
//! include these modules with `#[path]` so both check exactly the same things.

pub mod client_check;
pub mod codec_check;
pub mod input;
pub mod params_check;
pub mod parse_check;
pub mod server_check;
