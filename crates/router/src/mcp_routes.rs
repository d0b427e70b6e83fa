//! MCP-over-ACP routing: who owns each declared server, and the shortcut `mcp/*` messages
//! take between the agent (or a bridge shim) and the owner, past the proxies in between.
//!
//! The first position that adds a declaration owns it. The agent's `mcp/connect`,
//! `mcp/message` and `mcp/disconnect` go straight to the owner; what the owner sends on a
//! connection goes straight back. Anything unrecognised falls back to ordinary routing.

use std::collections::HashMap;

use acp_wire::RawValue;

use super::topology::{Hop, Origin, Position, Toward};
use super::{BridgeForm, Components, Role, Router};
use crate::link::LinkId;
use crate::mcp::declaration::{self, AcpDeclaration, IdField};
use crate::mcp::params::McpFields;

/// A declared MCP-over-ACP server.
#[derive(Debug, Clone)]
pub struct Server {
    /// The position that declared it first, which serves it.
    pub owner: Position,
    pub name: String,
    pub field: IdField,
}

/// Every server declared in this run, and the connections the agent opened itself.
#[derive(Debug, Default)]
pub struct McpTable {
    pub servers: HashMap<String, Server>,
    /// The connection ids a native agent knows → (owner, the owner's id). They differ only
    /// when two providers chose the same id.
    agent_connections: HashMap<String, (Position, String)>,
    /// (owner, the owner's id) → the id the agent knows.
    agent_aliases: HashMap<(Position, String), String>,
}

impl McpTable {
    /// Records a connection `owner` opened for the agent; returns the id the agent must see,
    /// which is `connection` unless another provider already uses that id.
    pub fn open_agent_connection(&mut self, owner: Position, connection: String) -> String {
        let mut visible = connection.clone();
        let mut n = 1;
        while self
            .agent_connections
            .get(&visible)
            .is_some_and(|known| *known != (owner, connection.clone()))
        {
            visible = format!("{connection}@{owner}.{n}");
            n += 1;
        }
        self.agent_connections
            .insert(visible.clone(), (owner, connection.clone()));
        self.agent_aliases
            .insert((owner, connection), visible.clone());
        visible
    }

    /// The owners' positions after a reload moved them (`at`: old position → new).
    pub fn remap_owners(&mut self, at: &dyn Fn(Position) -> Position) {
        for server in self.servers.values_mut() {
            server.owner = at(server.owner);
        }
        for (owner, _) in self.agent_connections.values_mut() {
            *owner = at(*owner);
        }
        self.agent_aliases = std::mem::take(&mut self.agent_aliases)
            .into_iter()
            .map(|((owner, id), visible)| ((at(owner), id), visible))
            .collect();
    }

    fn close_agent_connection(&mut self, visible: &str) -> Option<(Position, String)> {
        let known = self.agent_connections.remove(visible)?;
        self.agent_aliases.remove(&known);
        Some(known)
    }
}

/// Where an `mcp/*` message goes instead of its ordinary next hop.
#[derive(Debug)]
pub enum McpRoute {
    Ordinary,
    /// To this hop, with the params rewritten when a connection id needs translating.
    To(Hop, Option<Box<RawValue>>),
    /// To the bridge shim on this link.
    Shim(LinkId),
    /// Answer the sender with -32602 and this message.
    Refuse(String),
    /// Answer the sender with -32601 and this message: no one that way serves the method.
    Unserved(String),
}

impl<C: Components> Router<C> {
    pub(super) fn owner_hop(&self, owner: Position) -> Hop {
        Hop {
            position: owner,
            wrap: self.topology.is_proxy(owner),
        }
    }

    /// Toward the agent from the owner's side: our agent, or in proxy mode the parent's
    /// successor behind link 0.
    fn agent_hop(&self) -> Hop {
        match self.topology.agent_position() {
            Some(position) => Hop {
                position,
                wrap: false,
            },
            None => Hop {
                position: 0,
                wrap: true,
            },
        }
    }

    /// Whether acp declarations reach the agent as they are. In proxy mode the parent
    /// conductor bridges for the agent behind it.
    fn agent_speaks_mcp_over_acp(&self) -> bool {
        match self.topology.agent_position() {
            Some(_) => self.agent.is_some_and(|a| a.mcp_over_acp),
            None => true,
        }
    }

    /// Where an `mcp/*` message from `origin` goes instead of its ordinary next hop.
    pub(super) fn mcp_route(
        &mut self,
        origin: Origin,
        method: &str,
        params: Option<&RawValue>,
    ) -> McpRoute {
        let from_agent =
            origin.toward == Toward::Editor && origin.position == self.topology.proxies + 1;
        let fields = McpFields::read(params);
        if from_agent {
            return self.route_from_agent(method, fields, params);
        }
        // A provider passing `mcp/connect` on toward the editor for a server declared at or
        // after its position: no one that way serves it. Providers built on the official SDK
        // do so for their own servers, meaning they speak the connectionless form only.
        if origin.toward == Toward::Editor
            && method == "mcp/connect"
            && let Some(id) = fields.acp_id.as_ref().or(fields.server_id.as_ref())
            && let Some(server) = self.mcp.servers.get(id)
            && server.owner >= origin.position
        {
            return McpRoute::Unserved(format!(
                "mcp/connect is not served for MCP server `{id}` toward the editor"
            ));
        }
        if origin.toward != Toward::Agent || method != "mcp/message" {
            return McpRoute::Ordinary;
        }
        // A provider speaking to the client of one of its connections.
        let provider = origin.position;
        if let Some(connection) = &fields.connection_id {
            if let Some(shim) = self.shims.on_connection(provider, connection) {
                return McpRoute::Shim(shim);
            }
            if let Some(visible) = self.mcp.agent_aliases.get(&(provider, connection.clone())) {
                let params = params.and_then(|p| with_connection_id(p, connection, visible));
                return McpRoute::To(self.agent_hop(), params);
            }
        } else if let (Some(server), Some(request)) = (&fields.server_id, &fields.request_id)
            && self
                .mcp
                .servers
                .get(server)
                .is_some_and(|s| s.owner == provider)
        {
            return match self.shims.with_request(server, request) {
                Some(shim) => McpRoute::Shim(shim),
                None => McpRoute::To(self.agent_hop(), None),
            };
        }
        McpRoute::Ordinary
    }

    fn route_from_agent(
        &mut self,
        method: &str,
        fields: McpFields<'_>,
        params: Option<&RawValue>,
    ) -> McpRoute {
        match method {
            "mcp/connect" => {
                let Some(id) = fields.acp_id.or(fields.server_id) else {
                    return McpRoute::Refuse(
                        "mcp/connect needs the declared server's `acpId`".to_string(),
                    );
                };
                match self.mcp.servers.get(&id) {
                    Some(server) => McpRoute::To(self.owner_hop(server.owner), None),
                    None => McpRoute::Refuse(unknown_server(&id)),
                }
            }
            "mcp/message" | "mcp/disconnect" => {
                if let Some(visible) = fields.connection_id {
                    let known = if method == "mcp/disconnect" {
                        self.mcp.close_agent_connection(&visible)
                    } else {
                        self.mcp.agent_connections.get(&visible).cloned()
                    };
                    match known {
                        Some((owner, connection)) => {
                            let params =
                                params.and_then(|p| with_connection_id(p, &visible, &connection));
                            McpRoute::To(self.owner_hop(owner), params)
                        }
                        None => McpRoute::Refuse(format!(
                            "no MCP connection `{visible}` is open in this chain"
                        )),
                    }
                } else if let Some(id) = fields.server_id {
                    match self.mcp.servers.get(&id) {
                        Some(server) => McpRoute::To(self.owner_hop(server.owner), None),
                        None => McpRoute::Refuse(unknown_server(&id)),
                    }
                } else {
                    McpRoute::Refuse(format!("{method} needs a `connectionId` or a `serverId`"))
                }
            }
            _ => McpRoute::Ordinary,
        }
    }

    /// A session setup request passing from `from` toward the agent: records the servers it
    /// declares first, and rewrites them into bridge shims when the next hop is an agent
    /// that cannot speak MCP-over-ACP. Returns the params to send instead, if rewritten.
    pub(super) fn on_session_setup(
        &mut self,
        from: Position,
        hop: Hop,
        params: Option<&RawValue>,
    ) -> Option<Box<RawValue>> {
        let declared = declaration::acp_declarations(params);
        if declared.is_empty() {
            return None;
        }
        for d in &declared {
            self.record_declaration(from, d);
        }
        if Some(hop.position) != self.topology.agent_position() || self.agent_speaks_mcp_over_acp()
        {
            return None;
        }
        if self.bridges_over_http() {
            return self.bridge_over_http(hop, params?, &declared);
        }
        let endpoint = match self.components.bridge() {
            Ok(endpoint) => endpoint,
            Err(e) => {
                tracing::error!(error = %e, "cannot open the MCP bridge; the agent gets the acp declarations unchanged");
                return None;
            }
        };
        let exe = endpoint.program.to_string_lossy().into_owned();
        let socket = endpoint.socket.to_string_lossy().into_owned();
        let agent = self.links[self.at(hop.position)].name.clone();
        let rewritten = declaration::rewrite(params?, |d| {
            let owner = self.provider_name(&d.id);
            tracing::info!(server = %d.name, id = %d.id, provider = owner, %agent, "bridging MCP server to the agent as a stdio server");
            let args = [
                "mcp-bridge".to_string(),
                "--socket".to_string(),
                socket.clone(),
                "--server".to_string(),
                d.id.clone(),
            ];
            declaration::stdio_server(&d.name, &exe, &args)
        })?;
        RawValue::from_string(rewritten).ok()
    }

    /// Whether the agent gets bridged servers over Streamable HTTP rather than as stdio
    /// shims: as `[conductor] mcp_bridge` says, and under `auto` when the agent's
    /// `initialize` answer offers `mcpCapabilities.http`.
    fn bridges_over_http(&self) -> bool {
        match self.components.bridge_form() {
            BridgeForm::Http => true,
            BridgeForm::Stdio => false,
            BridgeForm::Auto => self.agent.is_some_and(|a| a.mcp_http),
        }
    }

    /// The session setup with each acp declaration replaced by an `http` server on the
    /// conductor's listener: a URL of its own per server, the session's secret in `headers`.
    fn bridge_over_http(
        &mut self,
        hop: Hop,
        params: &RawValue,
        declared: &[AcpDeclaration],
    ) -> Option<Box<RawValue>> {
        let ids: Vec<String> = declared.iter().map(|d| d.id.clone()).collect();
        let session = match self.components.http_bridge(&ids) {
            Ok(session) => session,
            Err(e) => {
                tracing::error!(error = %e, "cannot open the MCP HTTP bridge; the agent gets the acp declarations unchanged");
                return None;
            }
        };
        self.http_sessions
            .routing(session.key.clone(), Some(params));
        let agent = self.links[self.at(hop.position)].name.clone();
        let mut urls = ids.iter().zip(&session.urls);
        let rewritten = declaration::rewrite(params, |d| {
            let url = urls
                .next()
                .filter(|(id, _)| **id == d.id)
                .map_or("", |(_, url)| url.as_str());
            let owner = self.provider_name(&d.id);
            tracing::info!(server = %d.name, id = %d.id, provider = owner, %agent, "bridging MCP server to the agent as an HTTP server");
            declaration::http_server(&d.name, url, &session.headers)
        })?;
        RawValue::from_string(rewritten).ok()
    }

    /// The name of the component that serves server `id`, for the log.
    fn provider_name(&self, id: &str) -> &str {
        self.mcp
            .servers
            .get(id)
            .map_or("?", |s| self.links[self.at(s.owner)].name.as_str())
    }

    /// Why a session setup passing from `from` must be refused: an MCP server name declared
    /// twice where one of the servers is offered over ACP (`declaration::name_collision`).
    /// The message names who declared each, as far as the conductor knows: acp servers by
    /// their owner (a server first seen on this hop was added by `from`).
    pub(super) fn name_collision(
        &self,
        from: Position,
        params: Option<&RawValue>,
    ) -> Option<(String, String)> {
        let (name, entries) = declaration::name_collision(params)?;
        let who = |position: Position| {
            let link = &self.links[self.at(position)];
            if link.role == Role::Editor {
                "the editor".to_string()
            } else {
                format!("{} `{}`", link.role.noun(), link.name)
            }
        };
        let declarers: Vec<String> = entries
            .iter()
            .map(|entry| match entry {
                declaration::Declared::Acp(d) => {
                    let owner = self.mcp.servers.get(&d.id).map_or(from, |s| s.owner);
                    format!("{} (over ACP, server id `{}`)", who(owner), d.id)
                }
                declaration::Declared::Other { kind, .. } => {
                    format!("a `{kind}` server of the editor or a proxy")
                }
            })
            .collect();
        let message = format!(
            "MCP server name `{name}` is declared more than once: by {}; the agent could not \
             tell them apart. Rename one of them (a proxy's server names are in its settings)",
            declarers.join(" and by ")
        );
        let data = serde_json::json!({ "mcpServer": name, "declaredBy": declarers }).to_string();
        Some((message, data))
    }

    fn record_declaration(&mut self, position: Position, d: &AcpDeclaration) {
        if self.mcp.servers.contains_key(&d.id) {
            return;
        }
        let owner = &self.links[self.at(position)];
        let by = if owner.role == Role::Editor {
            "the editor".to_string()
        } else {
            format!("{} `{}`", owner.role.noun(), owner.name)
        };
        tracing::info!(server = %d.name, id = %d.id, "MCP server declared by {by}");
        self.mcp.servers.insert(
            d.id.clone(),
            Server {
                owner: position,
                name: d.name.clone(),
                field: d.field,
            },
        );
    }
}

/// `params` with `connectionId` set to `to`; `None` when `from` and `to` are the same.
fn with_connection_id(params: &RawValue, from: &str, to: &str) -> Option<Box<RawValue>> {
    if from == to {
        return None;
    }
    let id = serde_json::to_string(to).expect("a string serializes");
    RawValue::from_string(acp_wire::splice::set_path(params, &["connectionId"], &id)).ok()
}

fn unknown_server(id: &str) -> String {
    format!("no MCP server with id `{id}` was declared in this chain")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_ids_stay_as_chosen_unless_two_providers_collide() {
        let mut table = McpTable::default();
        assert_eq!(table.open_agent_connection(1, "conn-1".into()), "conn-1");
        assert_eq!(table.open_agent_connection(2, "conn-2".into()), "conn-2");
        let alias = table.open_agent_connection(2, "conn-1".into());
        assert_ne!(alias, "conn-1");
        assert_eq!(table.agent_connections[&alias], (2, "conn-1".to_string()));
        assert_eq!(table.agent_connections["conn-1"], (1, "conn-1".to_string()));
        assert_eq!(table.agent_aliases[&(2, "conn-1".to_string())], alias);
        assert_eq!(
            table.close_agent_connection(&alias),
            Some((2, "conn-1".to_string()))
        );
        assert!(!table.agent_aliases.contains_key(&(2, "conn-1".to_string())));
        assert_eq!(table.close_agent_connection(&alias), None);
    }

    #[test]
    fn connection_id_rewrite_keeps_other_members() {
        let p = RawValue::from_string(
            r#"{"connectionId":"c@2.1","method":"tools/call","params":{"n":9007199254740993}}"#
                .into(),
        )
        .unwrap();
        let out = with_connection_id(&p, "c@2.1", "c").unwrap();
        assert_eq!(
            out.get(),
            r#"{"connectionId":"c","method":"tools/call","params":{"n":9007199254740993}}"#
        );
        assert!(with_connection_id(&p, "c", "c").is_none());
    }
}
