//! Getting to ready: the `server/discover` probe that tells the eras apart, the legacy
//! `initialize` handshake, and `ping`.

use mcp_protocol::mcp::{methods, modern, InitializeResult, ProtocolVersion};
use serde_json::{json, Value};

use super::requests::decode;
use super::Client;
use crate::era::{self, Connected, DiscoverResult, Era, EraChoice, ProbeError};
use crate::error::ClientError;
use crate::state::Phase;

/// Why the `server/discover` probe says the server is not modern (legacy, then): what it got,
/// in words, for the log and for [`ClientError::NotModern`].
#[derive(Debug)]
struct NotModern(String);

impl Client {
    /// Sends `initialize` (allowed only in state `new`, one call at a time; after a failure
    /// it may be retried). A version this client does not support closes the connection.
    ///
    /// This is the legacy era's first step, whatever
    /// [`ClientOptions::era`](crate::ClientOptions::era) says: calling it instead of
    /// [`connect`](Self::connect) skips the `server/discover` probe.
    pub async fn initialize(&self) -> Result<InitializeResult, ClientError> {
        self.shared.claim(
            Phase::Initializing,
            "initialize",
            "initialize is sent once per connection",
        )?;
        self.run_initialize().await
    }

    /// `initialize`, once the phase is `Initializing`.
    async fn run_initialize(&self) -> Result<InitializeResult, ClientError> {
        let options = &self.shared.options;
        // `initialize` negotiates legacy versions only.
        let offered = match options.protocol_version {
            v if v.is_modern() => ProtocolVersion::LATEST_LEGACY,
            v => v,
        };
        let params = json!({
            "protocolVersion": offered.as_str(),
            "capabilities": options.legacy_capabilities(),
            "clientInfo": options.client_info,
        });
        // `initialize` MUST NOT be cancelled (`utilities/cancellation.mdx`).
        let outcome = self
            .shared
            .call(
                methods::INITIALIZE,
                Some(params),
                options.request_timeout,
                false,
            )
            .await
            .and_then(|v| decode::<InitializeResult>(methods::INITIALIZE, v));
        let result = match outcome {
            Ok(result) => result,
            Err(e) => {
                self.shared.set_phase_unless_closed(Phase::New);
                return Err(e);
            }
        };
        let Some(version) = ProtocolVersion::parse_legacy(&result.protocol_version) else {
            let e = ClientError::UnsupportedVersion {
                offered: result.protocol_version.clone(),
                supported: ProtocolVersion::LEGACY.map(|v| v.as_str()).join(", "),
            };
            tracing::warn!("{e}");
            self.close().await;
            return Err(e);
        };
        tracing::debug!(%version, "legacy era: initialize answered");
        *self.shared.connected.lock() = Some(Connected::Legacy(result.clone()));
        self.shared.set_phase_unless_closed(Phase::Initialized);
        Ok(result)
    }

    /// Sends `notifications/initialized`: the connection becomes ready.
    pub async fn notify_initialized(&self) -> Result<(), ClientError> {
        let phase = self.shared.phase();
        if phase != Phase::Initialized {
            return Err(self.shared.refusal(
                "send notifications/initialized",
                phase,
                "it follows a successful initialize",
            ));
        }
        self.shared.notify_raw(methods::INITIALIZED, None).await?;
        self.shared.set_phase_unless_closed(Phase::Ready);
        Ok(())
    }

    /// Connects in the era [`ClientOptions::era`](crate::ClientOptions::era) chooses, as
    /// `basic/transports/stdio.mdx` ("Backward Compatibility") says:
    ///
    /// * [`EraChoice::Auto`] (default): probe with `server/discover`, carrying modern `_meta`,
    ///   bounded by [`ClientOptions::probe_timeout`](crate::ClientOptions::probe_timeout).
    ///   - A `DiscoverResult` → modern: the connection is ready at once
    ///     ([`Connected::Modern`]). A result that is not a `DiscoverResult` (a legacy
    ///     server answering `{}` to any method it does not know) means legacy, below.
    ///   - A recognized modern error (`UnsupportedProtocolVersionError`, -32022 with
    ///     `data.supported`; `MissingRequiredClientCapabilityError`, -32021 with
    ///     `data.requiredCapabilities`) → modern, never a fallback: the probe is retried with
    ///     another modern version of this client that the server lists, else
    ///     [`ClientError::UnsupportedModernVersion`] (or the -32021 as
    ///     [`ClientError::Server`]).
    ///   - Any other error, whatever its code, any other result, or no reply within the probe
    ///     timeout → legacy:
    ///     `initialize` then `notifications/initialized` ([`Connected::Legacy`]). A late reply
    ///     to the probe is dropped as an unknown id.
    /// * [`EraChoice::Legacy`]: no probe; `initialize` then `notifications/initialized`.
    /// * [`EraChoice::Modern`]: the probe; what would fall back to legacy is
    ///   [`ClientError::NotModern`] instead.
    ///
    /// The era is cached ([`era`](Self::era)). A connection that ended (`Closed`) is not
    /// retried; after any other failure the state is `new` again and `connect()` may be
    /// retried.
    pub async fn connect(&self) -> Result<Connected, ClientError> {
        let choice = self.shared.options.era;
        if choice == EraChoice::Legacy {
            let result = self.initialize().await?;
            self.notify_initialized().await?;
            return Ok(Connected::Legacy(result));
        }
        self.shared.claim(
            Phase::Probing,
            "connect",
            "connect() succeeds once per connection",
        )?;
        let not_modern = match self.probe().await {
            Ok(Ok(connected)) => return Ok(connected),
            Ok(Err(NotModern(not_modern))) => not_modern,
            Err(e) => {
                self.shared.set_phase_if(Phase::Probing, Phase::New);
                return Err(e);
            }
        };
        if choice == EraChoice::Modern {
            self.shared.set_phase_if(Phase::Probing, Phase::New);
            return Err(ClientError::NotModern { reason: not_modern });
        }
        tracing::debug!("legacy era: {not_modern}; falling back to initialize");
        if !self
            .shared
            .set_phase_if(Phase::Probing, Phase::Initializing)
        {
            return Err(self.shared.closed_error());
        }
        let result = self.run_initialize().await?;
        self.notify_initialized().await?;
        Ok(Connected::Legacy(result))
    }

    /// The `server/discover` probe (phase `Probing`). `Ok(Ok(_))`: modern and ready;
    /// `Ok(Err(reason))`: not a modern server; `Err(_)`: a modern server this client cannot
    /// use, or the connection failed.
    async fn probe(&self) -> Result<Result<Connected, NotModern>, ClientError> {
        let options = &self.shared.options;
        let timeout = options.probe_timeout;
        let mut tried: Vec<ProtocolVersion> = Vec::new();
        let mut version = ProtocolVersion::LATEST;
        loop {
            tried.push(version);
            let meta = era::request_meta(version.as_str(), &options.client_info);
            let params = json!({ "_meta": meta });
            // Not cancelled on timeout: a legacy server never knew the request.
            let outcome = self
                .shared
                .call(modern::DISCOVER, Some(params), timeout, false)
                .await;
            let value = match outcome {
                Ok(value) => value,
                // Over HTTP a legacy server refuses the probe with a 4xx; its JSON-RPC error,
                // if any, is classified like one in a reply (`streamable-http.mdx`, "Backward
                // Compatibility"), and a body without one means legacy.
                Err(ClientError::Http {
                    status,
                    error: None,
                    ..
                }) => return Ok(Err(NotModern(format!("server/discover got HTTP {status}")))),
                Err(
                    ClientError::Server { error, .. }
                    | ClientError::Http {
                        error: Some(error), ..
                    },
                ) => match ProbeError::classify(&error) {
                    ProbeError::UnsupportedVersion { supported } => {
                        match era::newest_common(&supported, &tried) {
                            Some(next) => {
                                tracing::debug!(
                                    requested = %version,
                                    %next,
                                    "server/discover: version unsupported; retrying"
                                );
                                version = next;
                                continue;
                            }
                            None => {
                                return Err(unsupported_modern(version, supported));
                            }
                        }
                    }
                    ProbeError::OtherModern => {
                        return Err(ClientError::Server {
                            method: modern::DISCOVER.to_owned(),
                            error,
                        })
                    }
                    ProbeError::NotModern => {
                        return Ok(Err(NotModern(format!(
                            "server/discover got error {} ({})",
                            error.code, error.message
                        ))))
                    }
                },
                Err(ClientError::Timeout { after, .. }) => {
                    return Ok(Err(NotModern(format!(
                        "server/discover got no reply within {after:?}"
                    ))))
                }
                Err(e) => return Err(e),
            };
            return self.discovered(value, version);
        }
    }

    /// What a `server/discover` result means (phase `Probing`): a `DiscoverResult` with a
    /// version in common connects in the modern era; any other result means legacy.
    fn discovered(
        &self,
        value: Value,
        version: ProtocolVersion,
    ) -> Result<Result<Connected, NotModern>, ClientError> {
        if let Some(result_type) = era::incomplete_result_type(&value) {
            return Err(ClientError::UnsupportedResultType {
                method: modern::DISCOVER.to_owned(),
                result_type,
            });
        }
        // Only a `DiscoverResult` means modern: a legacy server that answers an unknown
        // pre-`initialize` request with any other result (`{}`, say) is legacy, like one that
        // answers with an error (`stdio.mdx`, "Backward Compatibility").
        let discover = match DiscoverResult::from_value(value) {
            Ok(discover) => discover,
            Err(reason) => {
                return Ok(Err(NotModern(format!(
                    "server/discover returned a result that is not a DiscoverResult ({reason})"
                ))))
            }
        };
        let Some(chosen) = discover.common_version() else {
            return Err(unsupported_modern(version, discover.supported_versions));
        };
        tracing::debug!(
            version = %chosen,
            server = ?discover.server_info,
            "modern era: server/discover answered"
        );
        let connected = Connected::Modern {
            protocol_version: chosen,
            discover,
        };
        *self.shared.connected.lock() = Some(connected.clone());
        if !self.shared.set_phase_if(Phase::Probing, Phase::Ready) {
            return Err(self.shared.closed_error());
        }
        Ok(Ok(connected))
    }

    /// Liveness check (allowed once initialized). Legacy: `ping`. Modern: 2026-07-28 removed
    /// `ping`, so this sends `server/discover` (with `_meta`) and succeeds on any complete
    /// result; the cached [`discover_result`](Self::discover_result) is not replaced.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            return self.request(modern::DISCOVER, None).await.map(drop);
        }
        let phase = self.shared.phase();
        if !matches!(phase, Phase::Initialized | Phase::Ready) {
            return Err(self.shared.refusal(
                "ping",
                phase,
                "ping is allowed once initialize succeeded",
            ));
        }
        let timeout = self.shared.options.request_timeout;
        self.shared
            .call(methods::PING, None, timeout, true)
            .await
            .map(drop)
    }
}

fn unsupported_modern(requested: ProtocolVersion, supported: Vec<String>) -> ClientError {
    ClientError::UnsupportedModernVersion {
        requested: requested.as_str().to_owned(),
        supported,
        ours: ProtocolVersion::MODERN
            .map(|v| v.as_str().to_owned())
            .to_vec(),
    }
}
