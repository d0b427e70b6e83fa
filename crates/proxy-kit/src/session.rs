//! Which working directory each ACP session has, learned from the session setup requests that
//! pass through (`session/new`, `load`, `resume`, `fork`, `close`). Knows those methods only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::action::{RequestAction, ResponseAction};
use crate::message::{Request, Response, Side};
use crate::proxy::Proxy;

/// Session id → `cwd`, fed from the editor's session setup requests.
///
/// ```
/// use proxy_kit::{Peers, Proxy, Request, RequestAction, session::SessionDirectories};
///
/// struct Mine { sessions: SessionDirectories }
///
/// impl Proxy for Mine {
///     fn on_editor_request(&mut self, _: &mut Peers<Self>, request: &Request<'_>) -> RequestAction<Self> {
///         if let Some(action) = self.sessions.track(request, |mine: &mut Mine| &mut mine.sessions) {
///             return action;
///         }
///         RequestAction::Forward
///     }
/// }
/// ```
#[derive(Debug, Default)]
pub struct SessionDirectories {
    cwds: HashMap<String, PathBuf>,
}

#[derive(Deserialize)]
struct SetupParams {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    cwd: Option<PathBuf>,
}

#[derive(Deserialize)]
struct NewSessionResult {
    #[serde(rename = "sessionId")]
    session_id: String,
}

impl SessionDirectories {
    pub fn new() -> Self {
        SessionDirectories::default()
    }

    pub fn cwd(&self, session_id: &str) -> Option<&Path> {
        self.cwds.get(session_id).map(PathBuf::as_path)
    }

    pub fn insert(&mut self, session_id: impl Into<String>, cwd: impl Into<PathBuf>) {
        self.cwds.insert(session_id.into(), cwd.into());
    }

    pub fn len(&self) -> usize {
        self.cwds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cwds.is_empty()
    }

    /// Learns from a request of the editor side. `session/load` and `session/resume` name
    /// their session and are recorded at once, `session/close` forgets it; for `session/new`
    /// and `session/fork` the id comes in the response, so this returns the action that
    /// forwards the request and records it then. `select` finds this table in the proxy.
    /// Returns `None` when the caller should decide about the request itself.
    pub fn track<P: Proxy>(
        &mut self,
        request: &Request<'_>,
        select: fn(&mut P) -> &mut SessionDirectories,
    ) -> Option<RequestAction<P>> {
        if request.from() != Side::Editor {
            return None;
        }
        let method = request.method();
        if !matches!(
            method,
            "session/new" | "session/fork" | "session/load" | "session/resume" | "session/close"
        ) {
            return None;
        }
        let params: SetupParams = match request.parse_params() {
            Ok(params) => params,
            Err(e) => {
                crate::warn!("`{method}` params not understood ({e}); session not tracked");
                return None;
            }
        };
        match (method, params.session_id, params.cwd) {
            ("session/close", Some(id), _) => {
                self.cwds.remove(&id);
                None
            }
            ("session/load" | "session/resume", Some(id), Some(cwd)) => {
                crate::debug!("session {id} has cwd {}", cwd.display());
                self.cwds.insert(id, cwd);
                None
            }
            ("session/new" | "session/fork", _, Some(cwd)) => Some(RequestAction::forward_then(
                move |proxy: &mut P, _, response| {
                    select(proxy).record_created(cwd, &response);
                    ResponseAction::Forward
                },
            )),
            _ => None,
        }
    }

    fn record_created(&mut self, cwd: PathBuf, response: &Response<'_>) {
        match response.parse_result::<NewSessionResult>() {
            Some(Ok(result)) => {
                crate::debug!("session {} has cwd {}", result.session_id, cwd.display());
                self.cwds.insert(result.session_id, cwd);
            }
            Some(Err(e)) => crate::warn!("session setup result without a sessionId ({e})"),
            None => {}
        }
    }
}
