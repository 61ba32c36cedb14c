//! Streamable HTTP (2025-11-25 `basic/transports.mdx` §Streamable HTTP; 2026-07-28
//! `basic/transports/streamable-http.mdx`): the endpoint and its headers ([`Endpoint`]), a
//! probe's connection that POSTs each message and turns each reply into frames
//! ([`HttpConn`]), one bounded request/response for the `http.*` checks ([`reply`]), whether
//! the URL's port accepts connections ([`port`]), and starting a server given as a command
//! ([`server`]).

mod conn;
mod deliver;
mod endpoint;
mod log;
pub mod port;
pub mod reply;
pub mod server;

pub use conn::{client_for, HttpConn};
pub use endpoint::{parse_header, Endpoint, HeaderError};
pub use log::Log;
