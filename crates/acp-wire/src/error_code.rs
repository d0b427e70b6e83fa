//! JSON-RPC and ACP error codes the conductor produces.
//! Numbers only; composing error objects lives in `encode`.

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// `$/cancel_request` outcome (ACP request-cancellation RFD).
pub const REQUEST_CANCELLED: i64 = -32800;
/// A component of the chain failed (exited, crashed, could not start or stopped reading).
pub const COMPONENT_FAILED: i64 = -32001;
/// The conductor is shutting down and will not finish this request.
pub const SHUTTING_DOWN: i64 = -32002;
/// A message was too large to frame.
pub const MESSAGE_TOO_LARGE: i64 = -32003;
