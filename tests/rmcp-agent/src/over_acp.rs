//! A small hand-written MCP client over ACP (`--acp`): `mcp/connect`, MCP requests and
//! notifications wrapped in `mcp/message`, `mcp/disconnect`. Knows nothing of rmcp or stdio.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::acp::{Channel, describe_error};
use crate::clients::{
    Events, client_info, describe_server, first_message_text, record, sampling_answer, tool_text,
};

/// One MCP connection the conductor routes by `connectionId`.
pub struct AcpConnection {
    pub connection_id: String,
    pub events: Events,
}

/// Open connections by id, for the `mcp/message`s the conductor delivers to the agent.
#[derive(Default)]
pub struct Routes(Mutex<HashMap<String, (String, Events)>>);

impl Routes {
    fn find(&self, params: &Value) -> Option<(String, Events)> {
        let connection = params["connectionId"].as_str()?;
        self.0.lock().expect("routes lock").get(connection).cloned()
    }

    fn add(&self, connection_id: &str, label: &str, events: &Events) {
        self.0.lock().expect("routes lock").insert(
            connection_id.to_string(),
            (label.to_string(), events.clone()),
        );
    }

    fn remove(&self, connection_id: &str) {
        self.0.lock().expect("routes lock").remove(connection_id);
    }

    /// An `mcp/message` request from the server: sampling is answered, `ping` too.
    pub fn on_request(&self, acp: &Channel, id: &Value, params: &Value) {
        let Some((label, events)) = self.find(params) else {
            acp.respond_error(id, -32602, "unknown connectionId");
            return;
        };
        let message = json!({ "id": id, "method": params["method"], "params": params["params"] });
        record(&events, &label, &message);
        match params["method"].as_str() {
            Some("sampling/createMessage") => {
                acp.respond(id, sampling_answer(&first_message_text(&params["params"])))
            }
            Some("ping") => acp.respond(id, json!({})),
            _ => acp.respond_error(id, -32601, "method not found"),
        }
    }

    /// An `mcp/message` notification from the server: recorded for `events`.
    pub fn on_notification(&self, params: &Value) {
        let Some((label, events)) = self.find(params) else {
            eprintln!("test-rmcp-agent: an mcp/message for no connection: {params}");
            return;
        };
        let message = json!({ "method": params["method"], "params": params["params"] });
        record(&events, &label, &message);
    }
}

/// `mcp/connect` with `connect_params` (`{"acpId"}` or `{"serverId"}`), then the MCP
/// handshake over `mcp/message`. Returns the connection and `<serverInfo.name> <version>`.
pub async fn open(
    acp: &Channel,
    routes: &Routes,
    label: &str,
    connect_params: Value,
    version: &str,
) -> Result<(AcpConnection, String), String> {
    let connected = acp
        .request("mcp/connect", connect_params)
        .await
        .map_err(|e| describe_error(&e))?;
    let connection_id = connected["connectionId"]
        .as_str()
        .ok_or_else(|| format!("mcp/connect answered without a connectionId: {connected}"))?
        .to_string();
    let connection = AcpConnection {
        connection_id,
        events: Events::default(),
    };
    // Routed before `initialize`: a server may log while it initializes.
    routes.add(&connection.connection_id, label, &connection.events);
    let initialized = connection
        .request(acp, "initialize", client_info(version))
        .await;
    let result = match initialized {
        Ok(result) => result,
        Err(e) => {
            let _ = connection.close(acp, routes).await;
            return Err(format!("MCP initialize failed: {e}"));
        }
    };
    acp.notify(
        "mcp/message",
        json!({
            "connectionId": connection.connection_id,
            "method": "notifications/initialized",
            "params": {}
        }),
    );
    Ok((connection, describe_server(&result)))
}

impl AcpConnection {
    /// One MCP request; the response's result or error is the MCP one.
    async fn request(&self, acp: &Channel, method: &str, params: Value) -> Result<Value, String> {
        acp.request(
            "mcp/message",
            json!({ "connectionId": self.connection_id, "method": method, "params": params }),
        )
        .await
        .map_err(|e| describe_error(&e))
    }

    /// The tool names in the server's order, following `nextCursor`.
    pub async fn list(&self, acp: &Channel) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        let mut params = json!({});
        loop {
            let page = self.request(acp, "tools/list", params).await?;
            let tools = page["tools"].as_array().into_iter().flatten();
            names.extend(tools.filter_map(|t| t["name"].as_str().map(str::to_string)));
            match page["nextCursor"].as_str() {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => return Ok(names),
            }
        }
    }

    pub async fn call(
        &self,
        acp: &Channel,
        tool: &str,
        arguments: &Value,
        progress_token: Option<&str>,
    ) -> Result<String, String> {
        let mut params = json!({ "name": tool, "arguments": arguments });
        if let Some(token) = progress_token {
            params["_meta"] = json!({ "progressToken": token });
        }
        let result = self.request(acp, "tools/call", params).await?;
        Ok(tool_text(&result))
    }

    /// `mcp/disconnect`, after which the conductor's messages for it are ignored;
    /// `disconnected` once the conductor answered.
    pub async fn close(self, acp: &Channel, routes: &Routes) -> Result<String, String> {
        routes.remove(&self.connection_id);
        let answer = acp
            .request(
                "mcp/disconnect",
                json!({ "connectionId": self.connection_id }),
            )
            .await;
        answer
            .map(|_| "disconnected".to_string())
            .map_err(|e| describe_error(&e))
    }
}
