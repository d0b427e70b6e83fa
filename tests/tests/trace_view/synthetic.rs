//! Large traces for the viewer's timing: prompt turns through editor → p1 → p2 → agent as
//! the conductor records them (each hop's request with its id and `mapsTo`, streamed
//! `session/update`s relayed wrapped and unwrapped, responses back; every 50th turn ends in
//! an error), cut at exactly the number of messages asked for.

use serde_json::{Value, json};

pub const LANES: [&str; 4] = ["editor", "p1", "p2", "agent"];
/// Updates the agent streams per turn.
const UPDATES: usize = 10;

struct Writer {
    out: String,
    messages: usize,
    limit: usize,
    t: f64,
}

impl Writer {
    fn full(&self) -> bool {
        self.messages >= self.limit
    }

    #[allow(clippy::too_many_arguments)]
    fn message(
        &mut self,
        lane: usize,
        dir: &str,
        kind: &str,
        method: &str,
        wrapped: bool,
        id: Option<u64>,
        maps_to: Option<(usize, u64)>,
        session: &str,
        payload: Value,
    ) {
        if self.full() {
            return;
        }
        self.t += 0.031;
        let bytes = payload.to_string().len();
        let record = json!({
            "type": "message",
            "t": (self.t * 1000.0).round() / 1000.0,
            "link": LANES[lane],
            "position": lane,
            "dir": dir,
            "kind": kind,
            "method": method,
            "wrapped": if wrapped { json!("proxy/successor") } else { Value::Null },
            "id": id,
            "mapsTo": maps_to.map(|(l, id)| json!({"link": LANES[l], "id": id})),
            "session": session,
            "bytes": bytes,
            "payload": payload,
        });
        self.out.push_str(&record.to_string());
        self.out.push('\n');
        self.messages += 1;
    }
}

fn wrap(message: Value) -> Value {
    let mut inner = message.as_object().cloned().unwrap_or_default();
    inner.remove("jsonrpc");
    let id = inner.remove("id");
    let mut envelope = json!({"jsonrpc": "2.0", "method": "proxy/successor", "params": inner});
    if let Some(id) = id {
        envelope["id"] = id;
    }
    envelope
}

/// A trace of exactly `messages` message records, with its header.
pub fn trace(messages: usize) -> String {
    let header = json!({
        "type": "header", "format": "acp-conductor-trace", "version": 1,
        "startedAt": "2026-01-01T00:00:00.000000Z", "conductor": "synthetic",
        "components": [
            {"name": "editor", "role": "editor", "position": 0},
            {"name": "p1", "role": "proxy", "position": 1, "kind": "native"},
            {"name": "p2", "role": "proxy", "position": 2, "kind": "wasm"},
            {"name": "agent", "role": "agent", "position": 3},
        ],
    });
    let mut w = Writer {
        out: format!("{header}\n"),
        messages: 0,
        limit: messages,
        t: 0.0,
    };
    let text: String =
        "The quick brown fox jumps over the lazy dog while the conductor relays each chunk; "
            .repeat(2);
    let mut turn = 0u64;
    while !w.full() {
        turn += 1;
        let session = format!("sess-{}", turn % 4);
        let (e, q1, w1, q2, w2, a) = (turn, turn * 2, turn * 2 + 1, turn * 3, turn * 3 + 1, turn);
        let prompt = json!({"jsonrpc": "2.0", "id": e, "method": "session/prompt", "params": {
            "sessionId": session, "prompt": [{"type": "text", "text": format!("turn {turn}")}]}});
        let with_id = |mut m: Value, id: u64| {
            m["id"] = json!(id);
            m
        };
        w.message(
            0,
            "in",
            "request",
            "session/prompt",
            false,
            Some(e),
            Some((1, q1)),
            &session,
            prompt.clone(),
        );
        w.message(
            1,
            "out",
            "request",
            "session/prompt",
            false,
            Some(q1),
            None,
            &session,
            with_id(prompt.clone(), q1),
        );
        w.message(
            1,
            "in",
            "request",
            "session/prompt",
            true,
            Some(w1),
            Some((2, q2)),
            &session,
            wrap(with_id(prompt.clone(), w1)),
        );
        w.message(
            2,
            "out",
            "request",
            "session/prompt",
            false,
            Some(q2),
            None,
            &session,
            with_id(prompt.clone(), q2),
        );
        w.message(
            2,
            "in",
            "request",
            "session/prompt",
            true,
            Some(w2),
            Some((3, a)),
            &session,
            wrap(with_id(prompt.clone(), w2)),
        );
        w.message(
            3,
            "out",
            "request",
            "session/prompt",
            false,
            Some(a),
            None,
            &session,
            with_id(prompt, a),
        );
        for k in 0..UPDATES {
            w.t += 1.7;
            let update = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": session, "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": format!("{k}: {text}")}}}});
            w.message(
                3,
                "in",
                "notification",
                "session/update",
                false,
                None,
                None,
                &session,
                update.clone(),
            );
            w.message(
                2,
                "out",
                "notification",
                "session/update",
                true,
                None,
                None,
                &session,
                wrap(update.clone()),
            );
            w.message(
                2,
                "in",
                "notification",
                "session/update",
                false,
                None,
                None,
                &session,
                update.clone(),
            );
            w.message(
                1,
                "out",
                "notification",
                "session/update",
                true,
                None,
                None,
                &session,
                wrap(update.clone()),
            );
            w.message(
                1,
                "in",
                "notification",
                "session/update",
                false,
                None,
                None,
                &session,
                update.clone(),
            );
            w.message(
                0,
                "out",
                "notification",
                "session/update",
                false,
                None,
                None,
                &session,
                update,
            );
        }
        w.t += 0.9;
        let (kind, answer) = if turn.is_multiple_of(50) {
            (
                "error",
                json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603, "message": "model overloaded"}}),
            )
        } else {
            (
                "response",
                json!({"jsonrpc": "2.0", "id": 0, "result": {"stopReason": "end_turn"}}),
            )
        };
        w.message(
            3,
            "in",
            kind,
            "session/prompt",
            false,
            Some(a),
            Some((2, w2)),
            &session,
            with_id(answer.clone(), a),
        );
        w.message(
            2,
            "out",
            kind,
            "session/prompt",
            false,
            Some(w2),
            None,
            &session,
            with_id(answer.clone(), w2),
        );
        w.message(
            2,
            "in",
            kind,
            "session/prompt",
            false,
            Some(q2),
            Some((1, w1)),
            &session,
            with_id(answer.clone(), q2),
        );
        w.message(
            1,
            "out",
            kind,
            "session/prompt",
            false,
            Some(w1),
            None,
            &session,
            with_id(answer.clone(), w1),
        );
        w.message(
            1,
            "in",
            kind,
            "session/prompt",
            false,
            Some(q1),
            Some((0, e)),
            &session,
            with_id(answer.clone(), q1),
        );
        w.message(
            0,
            "out",
            kind,
            "session/prompt",
            false,
            Some(e),
            None,
            &session,
            with_id(answer, e),
        );
        w.t += 25.0;
    }
    w.out
}
