//! `test-sdk-provider`: an ACP proxy built on the official Rust ACP SDK that serves the MCP
//! server `sdk-tools` over ACP; it knows nothing of the conductor beyond stdio JSON-RPC lines.

use agent_client_protocol::{ByteStreams, Proxy, mcp_server::McpServer};
use agent_client_protocol_rmcp::rmcp_3::McpServerExt;
use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};
use serde::Deserialize;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Name of the MCP server, as declared in `session/new` and reported by `server/discover`.
const SERVER_NAME: &str = "sdk-tools";

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text returned unchanged.
    text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

/// The tools: `echo`, `add` and `fail`.
#[derive(Clone)]
struct SdkTools {
    tool_router: ToolRouter<SdkTools>,
}

#[tool_router]
impl SdkTools {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Returns `text` unchanged")]
    async fn echo(
        &self,
        Parameters(args): Parameters<EchoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(args.text)]))
    }

    #[tool(description = "Returns the sum of the integers `a` and `b`")]
    async fn add(
        &self,
        Parameters(args): Parameters<AddArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let sum = args
            .a
            .checked_add(args.b)
            .ok_or_else(|| ErrorData::invalid_params("add: sum overflows i64", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(
            sum.to_string(),
        )]))
    }

    #[tool(description = "Always fails with an MCP internal error")]
    async fn fail(&self) -> Result<CallToolResult, ErrorData> {
        Err(ErrorData::internal_error("fail: failed as asked", None))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SdkTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions("Test tools: echo, add, fail")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SDK_PROVIDER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();

    let server = McpServer::from_rmcp(SERVER_NAME, SdkTools::new);
    Proxy
        .v1()
        .name("test-sdk-provider")
        .with_mcp_server(server)
        .connect_to(ByteStreams::new(
            tokio::io::stdout().compat_write(),
            tokio::io::stdin().compat(),
        ))
        .await?;
    Ok(())
}
