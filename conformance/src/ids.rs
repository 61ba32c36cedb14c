//! Every built-in check's id, in one table. Code names a check by its constant, so a typo is a
//! compile error, and a test holds the table and the catalogue to each other (an id here with
//! no check, or a check missing here, fails it). The strings are what users see and write:
//! reports, `--only`/`--skip`, `--expected-failures`; checks from `--scenario-file` keep their
//! own string ids.

use std::fmt;

/// The id of a built-in check: `area.name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckId(&'static str);

impl CheckId {
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<str> for CheckId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for CheckId {
    fn eq(&self, other: &String) -> bool {
        self.0 == other
    }
}

impl PartialEq<CheckId> for String {
    fn eq(&self, other: &CheckId) -> bool {
        self == other.0
    }
}

impl PartialEq<CheckId> for &str {
    fn eq(&self, other: &CheckId) -> bool {
        *self == other.0
    }
}

macro_rules! check_ids {
    ($($name:ident = $id:literal,)*) => {
        $(pub const $name: CheckId = CheckId($id);)*
        /// Every id of the table, in report order.
        #[cfg(test)]
        pub const ALL: &[CheckId] = &[$($name,)*];
    };
}

check_ids! {
    ERA_DETECT = "era.detect",

    LIFECYCLE_INITIALIZE_RESULT = "lifecycle.initialize-result",
    LIFECYCLE_VERSION_NEGOTIATION = "lifecycle.version-negotiation",
    LIFECYCLE_VERSION_UNKNOWN = "lifecycle.version-unknown",
    LIFECYCLE_VERSION_UNKNOWN_LATEST = "lifecycle.version-unknown-latest",
    LIFECYCLE_INITIALIZED_NO_REPLY = "lifecycle.initialized-no-reply",
    LIFECYCLE_PING_BEFORE_INITIALIZE = "lifecycle.ping-before-initialize",
    LIFECYCLE_REQUESTS_BEFORE_INITIALIZE = "lifecycle.requests-before-initialize",
    LIFECYCLE_REQUESTS_BEFORE_INITIALIZED = "lifecycle.requests-before-initialized",
    LIFECYCLE_SECOND_INITIALIZE = "lifecycle.second-initialize",
    LIFECYCLE_PING = "lifecycle.ping",

    JSONRPC_UNKNOWN_METHOD = "jsonrpc.unknown-method",
    JSONRPC_PARSE_ERROR_KEEPS_SERVING = "jsonrpc.parse-error-keeps-serving",
    JSONRPC_PARSE_ERROR_REPLY = "jsonrpc.parse-error-reply",
    JSONRPC_INVALID_REQUEST_NO_JSONRPC = "jsonrpc.invalid-request.no-jsonrpc",
    JSONRPC_INVALID_REQUEST_WRONG_VERSION = "jsonrpc.invalid-request.wrong-version",
    JSONRPC_INVALID_REQUEST_NULL_ID = "jsonrpc.invalid-request.null-id",
    JSONRPC_INVALID_REQUEST_NUMERIC_METHOD = "jsonrpc.invalid-request.numeric-method",
    JSONRPC_INVALID_REQUEST_KEEPS_SERVING = "jsonrpc.invalid-request-keeps-serving",
    JSONRPC_IDS_ECHOED = "jsonrpc.ids-echoed",
    JSONRPC_IDS_BEYOND_2_53 = "jsonrpc.ids-beyond-2-53",
    JSONRPC_UNKNOWN_NOTIFICATION = "jsonrpc.unknown-notification",
    JSONRPC_CONCURRENT_REQUESTS = "jsonrpc.concurrent-requests",
    JSONRPC_RESPONSES_WELL_FORMED = "jsonrpc.responses-well-formed",
    JSONRPC_BATCH_2025_03_26 = "jsonrpc.batch-2025-03-26",
    JSONRPC_BATCH_AFTER_2025_03_26 = "jsonrpc.batch-after-2025-03-26",

    TOOLS_LIST_SHAPE = "tools.list-shape",
    TOOLS_NAMES_VALID = "tools.names-valid",
    TOOLS_INVALID_CURSOR = "tools.invalid-cursor",
    TOOLS_UNKNOWN_TOOL = "tools.unknown-tool",
    TOOLS_SCHEMAS_VALID = "tools.schemas-valid",
    TOOLS_DEFINITION_SHAPE = "tools.definition-shape",
    TOOLS_CALL_RESULT_SHAPE = "tools.call-result-shape",
    TOOLS_STRUCTURED_CONTENT = "tools.structured-content",
    TOOLS_STRUCTURED_CONTENT_TEXT = "tools.structured-content-text",
    TOOLS_ERRORS_IN_RESULT = "tools.errors-in-result",
    MODERN_TOOLS_SCHEMAS_VALID = "modern.tools-schemas-valid",
    MODERN_TOOLS_DEFINITION_SHAPE = "modern.tools-definition-shape",
    MODERN_TOOLS_STRUCTURED_CONTENT = "modern.tools-structured-content",
    MODERN_TOOLS_STRUCTURED_CONTENT_TEXT = "modern.tools-structured-content-text",
    MODERN_TOOLS_ERRORS_IN_RESULT = "modern.tools-errors-in-result",

    RESOURCES_LIST_SHAPE = "resources.list-shape",
    RESOURCES_TEMPLATES_LIST_SHAPE = "resources.templates-list-shape",
    RESOURCES_INVALID_CURSOR = "resources.invalid-cursor",
    RESOURCES_URIS_RFC3986 = "resources.uris-rfc3986",
    RESOURCES_READ_SHAPE = "resources.read-shape",
    RESOURCES_UNKNOWN_URI = "resources.unknown-uri",
    RESOURCES_TEMPLATES_RFC6570 = "resources.templates-rfc6570",
    RESOURCES_SUBSCRIBE = "resources.subscribe",
    MODERN_RESOURCES_LIST_SHAPE = "modern.resources-list-shape",
    MODERN_RESOURCES_TEMPLATES_LIST_SHAPE = "modern.resources-templates-list-shape",
    MODERN_RESOURCES_INVALID_CURSOR = "modern.resources-invalid-cursor",
    MODERN_RESOURCES_URIS_RFC3986 = "modern.resources-uris-rfc3986",
    MODERN_RESOURCES_READ_SHAPE = "modern.resources-read-shape",
    MODERN_RESOURCES_UNKNOWN_URI = "modern.resources-unknown-uri",
    MODERN_RESOURCES_TEMPLATES_RFC6570 = "modern.resources-templates-rfc6570",
    MODERN_RESOURCES_SUBSCRIPTIONS_LISTEN = "modern.resources-subscriptions-listen",

    COMPLETIONS_COMPLETE_SHAPE = "completions.complete-shape",
    COMPLETIONS_VALUES_MAX = "completions.values-max",
    MODERN_COMPLETIONS_COMPLETE_SHAPE = "modern.completions-complete-shape",
    MODERN_COMPLETIONS_VALUES_MAX = "modern.completions-values-max",
    PROMPTS_LIST_SHAPE = "prompts.list-shape",
    PROMPTS_INVALID_CURSOR = "prompts.invalid-cursor",
    PROMPTS_GET_RESULT = "prompts.get-result",
    PROMPTS_UNKNOWN_PROMPT = "prompts.unknown-prompt",
    PROMPTS_MISSING_ARGUMENT = "prompts.missing-argument",
    MODERN_PROMPTS_LIST_SHAPE = "modern.prompts-list-shape",
    MODERN_PROMPTS_INVALID_CURSOR = "modern.prompts-invalid-cursor",
    MODERN_PROMPTS_GET_RESULT = "modern.prompts-get-result",
    MODERN_PROMPTS_UNKNOWN_PROMPT = "modern.prompts-unknown-prompt",
    MODERN_PROMPTS_MISSING_ARGUMENT = "modern.prompts-missing-argument",

    LOGGING_SET_LEVEL = "logging.set-level",
    LOGGING_INVALID_LEVEL = "logging.invalid-level",
    MODERN_LOGGING_INVALID_LEVEL = "modern.logging-invalid-level",
    CAPABILITIES_UNDECLARED = "capabilities.undeclared",
    MODERN_CAPABILITIES_UNDECLARED = "modern.capabilities-undeclared",

    FRAMING_STDOUT_ONLY_FRAMES = "framing.stdout-only-frames",
    FRAMING_REPLIES_IN_KIND = "framing.replies-in-kind",
    FRAMING_NO_EMBEDDED_NEWLINES = "framing.no-embedded-newlines",
    FRAMING_BYTE_AT_A_TIME = "framing.byte-at-a-time",
    FRAMING_SEVERAL_IN_ONE_WRITE = "framing.several-in-one-write",
    FRAMING_CRLF = "framing.crlf",
    FRAMING_UTF8 = "framing.utf8",
    FRAMING_LARGE_MESSAGE = "framing.large-message",
    FRAMING_EOF_NO_DATA_LOSS = "framing.eof-no-data-loss",
    FRAMING_EOF_EXIT = "framing.eof-exit",
    FRAMING_SIGTERM_EXIT = "framing.sigterm-exit",
    FRAMING_STDERR_VOLUME = "framing.stderr-volume",

    ECHO_ROUND_TRIPS = "echo.round-trips",

    CANCELLATION_UNKNOWN_REQUEST = "cancellation.unknown-request",
    CANCELLATION_UNKNOWN_REQUEST_IGNORED = "cancellation.unknown-request-ignored",

    HTTP_NOTIFICATION_202 = "http.notification-202",
    HTTP_REQUEST_CONTENT_TYPE = "http.request-content-type",
    HTTP_ACCEPT_JSON_ONLY = "http.accept-json-only",
    HTTP_SSE_RESPONSE = "http.sse-response",
    HTTP_SSE_ENDS = "http.sse-ends",
    HTTP_SESSION_ID_VISIBLE_ASCII = "http.session-id-visible-ascii",
    HTTP_SESSION_REQUIRED = "http.session-required",
    HTTP_SESSION_UNKNOWN = "http.session-unknown",
    HTTP_SESSION_DELETE = "http.session-delete",
    HTTP_GET_STREAM = "http.get-stream",
    HTTP_GET_STREAM_NO_RESPONSE = "http.get-stream-no-response",
    HTTP_SSE_EVENT_IDS_UNIQUE = "http.sse-event-ids-unique",
    HTTP_PROTOCOL_VERSION_INVALID = "http.protocol-version-invalid",
    HTTP_ORIGIN_FORBIDDEN = "http.origin-forbidden",
    HTTP_ORIGIN_FORBIDDEN_GET_DELETE = "http.origin-forbidden-get-delete",
    HTTP_ERROR_BODY = "http.error-body",
    HTTP_MODERN_GET_DELETE_405 = "http.modern-get-delete-405",
    HTTP_MODERN_HEADER_MISSING = "http.modern-header-missing",
    HTTP_MODERN_HEADER_MISMATCH = "http.modern-header-mismatch",
    HTTP_MODERN_UNSUPPORTED_VERSION_400 = "http.modern-unsupported-version-400",
    HTTP_MODERN_UNKNOWN_METHOD_404 = "http.modern-unknown-method-404",

    MODERN_DISCOVER = "modern.discover",
    MODERN_DISCOVER_SERVER_INFO = "modern.discover-server-info",
    MODERN_UNSUPPORTED_VERSION = "modern.unsupported-version",
    MODERN_RESULT_TYPE = "modern.result-type",
    MODERN_TOOLS_LIST_CACHEABLE = "modern.tools-list-cacheable",
    MODERN_REQUESTS_WITHOUT_META = "modern.requests-without-meta",
    MODERN_MISSING_META_INVALID_PARAMS = "modern.missing-meta-invalid-params",
    MODERN_NO_SERVER_REQUESTS = "modern.no-server-requests",
    MODERN_PING_REMOVED = "modern.ping-removed",
    MODERN_PROMPTS_LIST_CACHEABLE = "modern.prompts-list-cacheable",
    MODERN_RESOURCES_LIST_CACHEABLE = "modern.resources-list-cacheable",
    MODERN_RESOURCE_TEMPLATES_LIST_CACHEABLE = "modern.resource-templates-list-cacheable",
    MODERN_RESOURCES_READ_CACHEABLE = "modern.resources-read-cacheable",

    LOGGING_MESSAGE_SHAPE = "logging.message-shape",
    LOGGING_MESSAGE_DECLARED = "logging.message-declared",
    LOGGING_MESSAGE_LEVEL = "logging.message-level",
    MODERN_LOGGING_MESSAGE_REQUESTED = "modern.logging-message-requested",
    PROGRESS_TOKEN_KNOWN = "progress.token-known",
    PROGRESS_INCREASING = "progress.increasing",
    PROGRESS_STOPS_AFTER_RESPONSE = "progress.stops-after-response",
    CAPABILITIES_NEGOTIATED_REQUESTS = "capabilities.negotiated-requests",
}

/// The client checks' ids (`mcp-conformance client` and `observe`), one table of their own: they
/// judge the other side, and a test holds this table to their catalogue.
pub mod client {
    use super::CheckId;

    check_ids! {
        INITIALIZE_FIRST = "client.initialize-first",
        INITIALIZE_SHAPE = "client.initialize-shape",
        INITIALIZED_SENT = "client.initialized-sent",
        REQUESTS_BEFORE_INITIALIZED = "client.requests-before-initialized",
        UNSUPPORTED_VERSION_DISCONNECT = "client.unsupported-version-disconnect",
        DISCOVER_FALLBACK = "client.discover-fallback",
        JSONRPC_SHAPE = "client.jsonrpc-shape",
        IDS_UNIQUE = "client.ids-unique",
        PING_ANSWERED = "client.ping-answered",
        SERVER_REQUESTS_ANSWERED = "client.server-requests-answered",
        UNDECLARED_REQUESTS = "client.undeclared-requests",
        NEGOTIATED_CAPABILITIES = "client.negotiated-capabilities",
        PROGRESS_TOKENS_UNIQUE = "client.progress-tokens-unique",
        CANCEL_ON_TIMEOUT = "client.cancel-on-timeout",
        INITIALIZE_NOT_CANCELLED = "client.initialize-not-cancelled",
        MODERN_META = "client.modern-meta",
        MODERN_VERSION_RETRY = "client.modern-version-retry",
        STDIO_FRAMING = "client.stdio-framing",
        STDIO_SHUTDOWN = "client.stdio-shutdown",
        HTTP_ACCEPT = "client.http-accept",
        HTTP_PROTOCOL_VERSION_HEADER = "client.http-protocol-version-header",
        HTTP_SESSION_ID = "client.http-session-id",
        HTTP_SESSION_EXPIRED = "client.http-session-expired",
        HTTP_DELETE = "client.http-delete",
        HTTP_MODERN_HEADERS = "client.http-modern-headers",
    }
}

/// The ids of what `observe` judges beyond the client checks: the server's side of a real
/// session, judged passively, and whether the observer saw the whole session.
pub mod observed {
    use super::CheckId;

    check_ids! {
        SERVER_RESPONSES_MATCH_REQUESTS = "server.responses-match-requests",
        SERVER_JSONRPC_SHAPE = "server.jsonrpc-shape",
        SERVER_INITIALIZE_RESULT_SHAPE = "server.initialize-result-shape",
        SERVER_STDOUT_ONLY_MESSAGES = "server.stdout-only-messages",
        SERVER_LOGGING_DECLARED = "server.logging-declared",
        OBSERVER_COMPLETE = "observer.complete",
    }
}
