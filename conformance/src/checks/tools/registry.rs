//! The declarations of the tool checks judged from the tool-call observation
//! ([`super::calls`]): tool definitions, tool results, and their 2026-07-28 twins.

use futures::FutureExt;

use super::{definitions as defs, results as res};
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::Level;
use crate::ctx::{TOOL_CALLS_LEGACY, TOOL_CALLS_MODERN};
use crate::era::Era;
use crate::ids;

const SCHEMAS_QUOTE: &str = "inputSchema: ... MUST be a valid JSON Schema object (not null) / \
     Schemas MUST be valid according to their declared or default dialect / When a schema does \
     not include a $schema field, it defaults to JSON Schema 2020-12";
const SCHEMAS_WHY: &str = "the basic page's MUST covers outputSchema too; a $schema naming a \
     dialect the validator does not know is reported, not judged; a legacy server that \
     negotiated a revision before 2025-11-25 (whose pages name no default dialect) may mean \
     draft-07 by a schema without $schema";
const SHAPE_QUOTE: &str = "schema.ts: Tool { title?: string; description?: string; icons?: \
     Icon[]; annotations?: ToolAnnotations }; Icon { src: string; mimeType?: string; sizes?: \
     string[]; theme?: \"light\" | \"dark\" }; ToolAnnotations { title?: string; readOnlyHint?: \
     boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean }";
const RESULT_QUOTE: &str =
    "schema.ts: CallToolResult { content: ContentBlock[]; isError?: boolean }";
const STRUCTURED_QUOTE: &str =
    "Servers MUST provide structured results that conform to this schema.";
const TEXT_QUOTE: &str = "For backwards compatibility, a tool that returns structured content \
     SHOULD also return the serialized JSON in a TextContent block.";
const ERRORS_QUOTE: &str = "Any errors that originate from the tool SHOULD be reported inside \
     the result object, with `isError` set to true, _not_ as an MCP protocol-level error response.";
const ERRORS_WHY: &str = "judged from the calls made: a JSON-RPC error other than a protocol \
     error (-32700, -32600, -32601, -32602, or -32042 URL elicitation required) is taken for the \
     tool's own failure";

/// A check judged from the era's tool-call observation.
fn observed(check: Check, era: Era) -> Check {
    match era {
        Era::Legacy => check
            .needs(Capability::Tools, Era::Legacy)
            .shares(TOOL_CALLS_LEGACY.name),
        Era::Modern => check
            .modern()
            .needs(Capability::Tools, Era::Modern)
            .shares(TOOL_CALLS_MODERN.name),
    }
}

pub(super) fn definitions() -> Vec<Check> {
    vec![
        observed(
            Check::code(
                ids::TOOLS_SCHEMAS_VALID,
                Level::Must,
                "every tool's inputSchema and outputSchema is valid JSON Schema of its dialect ($schema, else 2020-12), by the jsonschema crate's meta-schemas",
                "server/tools.mdx, Tool; basic/index.mdx, JSON Schema Usage, Schema Validation",
                |ctx| defs::schemas_valid(ctx, Era::Legacy).boxed(),
            )
            .quote(SCHEMAS_QUOTE)
            .because(SCHEMAS_WHY),
            Era::Legacy,
        ),
        observed(
            Check::code(
                ids::TOOLS_DEFINITION_SHAPE,
                Level::Must,
                "every tool's title and description are strings, icons are Icon objects, annotations have string title and boolean hints",
                "server/tools.mdx, Tool; schema.ts Tool, Icon, ToolAnnotations",
                |ctx| defs::definition_shape(ctx, Era::Legacy).boxed(),
            )
            .quote(SHAPE_QUOTE)
            .because("typed fields of the schema (src required)"),
            Era::Legacy,
        ),
    ]
}

pub(super) fn results() -> Vec<Check> {
    vec![
        observed(
            Check::code(
                ids::TOOLS_CALL_RESULT_SHAPE,
                Level::Must,
                "each tools/call result (read-only tools only, arguments made to satisfy the inputSchema) has a content array of typed blocks",
                "server/tools.mdx, Calling Tools; schema.ts CallToolResult",
                |ctx| res::call_result_shape(ctx, Era::Legacy).boxed(),
            )
            .quote(RESULT_QUOTE)
            .because("required and typed fields of the schema"),
            Era::Legacy,
        ),
        observed(
            Check::code(
                ids::TOOLS_STRUCTURED_CONTENT,
                Level::Must,
                "a read-only tool with an outputSchema (called first) returns structuredContent that conforms to it, by a JSON Schema validator",
                "server/tools.mdx, Output Schema",
                |ctx| res::structured_content(ctx, Era::Legacy).boxed(),
            )
            .quote(STRUCTURED_QUOTE),
            Era::Legacy,
        ),
        observed(
            Check::code(
                ids::TOOLS_STRUCTURED_CONTENT_TEXT,
                Level::Should,
                "a result with structuredContent also has a TextContent block holding it serialized as JSON",
                "server/tools.mdx, Structured Content",
                |ctx| res::structured_text(ctx, Era::Legacy).boxed(),
            )
            .quote(TEXT_QUOTE)
            .echo_level(Level::Info),
            Era::Legacy,
        ),
        observed(
            Check::code(
                ids::TOOLS_ERRORS_IN_RESULT,
                Level::Should,
                "the tool calls made got results (isError for a tool's own failure) or protocol errors, not other JSON-RPC errors such as -32603",
                "schema.ts CallToolResult.isError; server/tools.mdx, Error Handling",
                |ctx| res::errors_in_result(ctx, Era::Legacy).boxed(),
            )
            .quote(ERRORS_QUOTE)
            .because(ERRORS_WHY),
            Era::Legacy,
        ),
    ]
}

/// The 2026-07-28 twins: its tools page keeps these sentences (structuredContent may be any
/// JSON value there, and outputSchema any schema).
pub(super) fn modern() -> Vec<Check> {
    vec![
        observed(
            Check::code(
                ids::MODERN_TOOLS_SCHEMAS_VALID,
                Level::Must,
                "every tool's inputSchema and outputSchema is valid JSON Schema of its dialect ($schema, else 2020-12)",
                "2026-07-28 server/tools.mdx, Tool; basic/index.mdx, JSON Schema Usage, Schema Validation",
                |ctx| defs::schemas_valid(ctx, Era::Modern).boxed(),
            )
            .quote(SCHEMAS_QUOTE)
            .because("the basic page's MUST covers outputSchema too; a $schema naming a dialect the validator does not know is reported, not judged"),
            Era::Modern,
        ),
        observed(
            Check::code(
                ids::MODERN_TOOLS_DEFINITION_SHAPE,
                Level::Must,
                "every tool's title and description are strings, icons are Icon objects, annotations have string title and boolean hints",
                "2026-07-28 server/tools.mdx, Tool; schema.ts Tool, Icon, ToolAnnotations",
                |ctx| defs::definition_shape(ctx, Era::Modern).boxed(),
            )
            .quote(SHAPE_QUOTE)
            .because("typed fields of the schema (src required)"),
            Era::Modern,
        ),
        observed(
            Check::code(
                ids::MODERN_TOOLS_STRUCTURED_CONTENT,
                Level::Must,
                "a read-only tool with an outputSchema (called first) returns structuredContent that conforms to it, by a JSON Schema validator",
                "2026-07-28 server/tools.mdx, Output Schema",
                |ctx| res::structured_content(ctx, Era::Modern).boxed(),
            )
            .quote(STRUCTURED_QUOTE),
            Era::Modern,
        ),
        observed(
            Check::code(
                ids::MODERN_TOOLS_STRUCTURED_CONTENT_TEXT,
                Level::Should,
                "a result with structuredContent also has a TextContent block holding it serialized as JSON",
                "2026-07-28 server/tools.mdx, Structured Content",
                |ctx| res::structured_text(ctx, Era::Modern).boxed(),
            )
            .quote(TEXT_QUOTE)
            .echo_level(Level::Info),
            Era::Modern,
        ),
        observed(
            Check::code(
                ids::MODERN_TOOLS_ERRORS_IN_RESULT,
                Level::Should,
                "the tool calls made got results (isError for a tool's own failure) or protocol errors, not other JSON-RPC errors such as -32603",
                "2026-07-28 schema.ts CallToolResult.isError; server/tools.mdx, Error Handling",
                |ctx| res::errors_in_result(ctx, Era::Modern).boxed(),
            )
            .quote(ERRORS_QUOTE)
            .because(ERRORS_WHY),
            Era::Modern,
        ),
    ]
}
