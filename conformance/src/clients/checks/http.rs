//! Streamable HTTP checks of a client: headers, sessions, DELETE
//! (2025-11-25 `basic/transports.mdx`, Streamable HTTP; 2026-07-28 `streamable-http.mdx`).

use crate::clients::judge::ClientCheck;

pub(super) fn checks() -> Vec<ClientCheck> {
    Vec::new()
}
