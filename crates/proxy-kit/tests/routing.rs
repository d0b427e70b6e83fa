//! The kit's routing as the conductor sees it: lines in, exact lines out. The test plays the
//! conductor, so responses to the kit's requests use the ids the kit is known to choose (1, 2, ...).

use proxy_kit::{
    Notification, NotificationAction, Peers, Proxy, Request, RequestAction, RequestHandle,
    ResponseAction, RpcError, serve,
};

/// Runs `proxy` over `input` lines and returns the lines it wrote and the proxy.
fn transcript<P: Proxy>(proxy: P, input: &[&str]) -> (Vec<String>, P) {
    // Some transcripts provoke errors on purpose; their log lines are not the subject here.
    proxy_kit::log::init("routing-test", Some(proxy_kit::log::Level::Off));
    let mut text = input.join("\n");
    text.push('\n');
    let mut out = Vec::new();
    let proxy = serve(proxy, text.as_bytes(), &mut out).expect("in-memory I/O cannot fail");
    let out = String::from_utf8(out).expect("output is UTF-8");
    (out.lines().map(str::to_string).collect(), proxy)
}

fn lines(proxy: impl Proxy, input: &[&str]) -> Vec<String> {
    transcript(proxy, input).0
}

/// Passes everything through.
struct Transparent;
impl Proxy for Transparent {}

#[test]
fn initialize_goes_to_successor_and_its_response_answers_proxy_initialize() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"mcpCapabilities":{"acp":true}}}}"#,
        ]
    );
}

#[test]
fn underscore_dialect_is_answered_in_kind() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":"init","method":"_proxy/initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/update","params":{"sessionId":"s"}}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"_proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","method":"_proxy/successor","params":{"method":"session/cancel","params":{"sessionId":"s"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}"#,
        ]
    );
}

#[test]
fn passed_through_payloads_keep_their_bytes_and_ids_come_back_exactly() {
    let odd_params = r#"{ "sessionId" : "s", "n": 9007199254740993, "f": 1e400, "t": "\u0041\n" }"#;
    let editor_request = format!(
        r#"{{"jsonrpc":"2.0","id":"\u0061b","method":"session/prompt","params":{odd_params}}}"#
    );
    let agent_request = format!(
        r#"{{"jsonrpc":"2.0","id":12345678901234567890,"method":"proxy/successor","params":{{"method":"fs/read_text_file","params":{odd_params}}}}}"#
    );
    let out = lines(
        Transparent,
        &[
            &editor_request,
            &agent_request,
            r#"{"jsonrpc":"2.0","id":2,"result":{ "content" : "x" }}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"busy","data":[1.0]}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{{"method":"session/prompt","params":{odd_params}}}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{odd_params}}}"#),
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{ "content" : "x" }}"#.to_string(),
            r#"{"jsonrpc":"2.0","id":"\u0061b","error":{"code":-32000,"message":"busy","data":[1.0]}}"#.to_string(),
        ]
    );
}

#[test]
fn notifications_cross_in_both_directions_without_params_too() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","method":"x/ping"}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/pong"}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/ping"}}"#,
            r#"{"jsonrpc":"2.0","method":"x/pong"}"#,
        ]
    );
}

#[test]
fn plain_initialize_is_refused_because_a_proxy_needs_a_successor() {
    let out = lines(
        Transparent,
        &[r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"this program is an ACP proxy: run it from a conductor, which sends `proxy/initialize`"}}"#
        ]
    );
}

#[test]
fn cancel_requests_are_renamed_to_our_ids_in_both_directions() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p","_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":40,"method":"proxy/successor","params":{"method":"terminal/wait_for_exit","params":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"$/cancel_request","params":{"requestId":40}}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"unknown"}}"#,
            // Schema 1.20: the conductor cancels its proxy/successor request 41 plain.
            r#"{"jsonrpc":"2.0","id":41,"method":"proxy/successor","params":{"method":"fs/read_text_file","params":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":41}}"#,
        ],
    );
    // Every cancel leaves plain, naming our request on this hop; none is wrapped.
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/prompt","params":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1,"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"terminal/wait_for_exit","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}"#,
        ]
    );
}

#[test]
fn malformed_and_unexpected_lines_are_answered_or_dropped() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"params":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":7}}"#,
            r#"{"jsonrpc":"2.0","id":99,"result":null}"#,
            r#"{not json"#,
        ],
    );
    assert_eq!(out.len(), 2, "{out:#?}");
    assert_eq!(
        out[0],
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"`proxy/successor` params must be an object with a string `method`"}}"#
    );
    assert!(
        out[1].starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"message is not valid JSON"#),
        "{}",
        out[1]
    );
}

#[test]
fn invalid_response_to_a_forwarded_request_answers_the_requester() {
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":"q","method":"session/new","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ],
    );
    assert_eq!(
        out[1],
        r#"{"jsonrpc":"2.0","id":"q","error":{"code":-32603,"message":"invalid response from the successor: not a JSON-RPC 2.0 message: a response needs `result` or `error`"}}"#
    );
}

/// Behaves by method name, to exercise every action.
#[derive(Default)]
struct Scripted {
    deferred: Option<RequestHandle>,
    seen_meta: Vec<String>,
    responses_seen: Vec<String>,
}

impl Proxy for Scripted {
    fn on_editor_request(
        &mut self,
        peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        match request.method() {
            "x/answer" => RequestAction::respond(serde_json::json!({"answered": true})),
            "x/fail" => RequestAction::Fail(RpcError::new(-32000, "no").with_data("why")),
            "x/modify" => RequestAction::forward_modified(serde_json::json!({"modified": true})),
            "x/then" => RequestAction::forward_then(|me: &mut Self, _, response| {
                me.responses_seen.push(
                    response
                        .result()
                        .map_or("error".into(), |r| r.get().to_string()),
                );
                ResponseAction::replace(serde_json::json!({"replaced": true}))
            }),
            "x/then-fail" => RequestAction::forward_then(|_, _, _| {
                ResponseAction::Fail(RpcError::new(-32001, "late"))
            }),
            "x/defer" => {
                self.deferred = Some(request.handle());
                peers.request_agent(
                    "x/ask",
                    serde_json::json!({"q": 1}),
                    |me: &mut Self, peers, response| {
                        let handle = me.deferred.take().expect("deferred request");
                        let answer = response.result().expect("result").get().to_string();
                        peers.respond(handle, serde_json::json!({ "via": answer }));
                    },
                );
                RequestAction::Defer
            }
            "x/twice" => {
                peers.respond(request.handle(), "first");
                RequestAction::respond("second")
            }
            "x/answer-later-twice" => {
                peers.respond(request.handle(), 1);
                peers.respond(request.handle(), 2);
                RequestAction::Defer
            }
            _ => RequestAction::Forward,
        }
    }

    fn on_editor_notification(
        &mut self,
        peers: &mut Peers<Self>,
        n: &Notification<'_>,
    ) -> NotificationAction {
        match n.method() {
            "x/drop" => NotificationAction::Drop,
            "x/modify" => NotificationAction::forward_modified(serde_json::json!([1])),
            "x/reply" => {
                peers.notify_editor("x/replied", serde_json::json!({}));
                NotificationAction::Forward
            }
            _ => NotificationAction::Forward,
        }
    }

    fn on_agent_request(
        &mut self,
        peers: &mut Peers<Self>,
        request: &Request<'_>,
    ) -> RequestAction<Self> {
        if let Some(meta) = request.envelope_meta().underscore_meta {
            self.seen_meta.push(meta.get().to_string());
        }
        match request.method() {
            "x/answer" => RequestAction::respond(serde_json::json!(null)),
            "x/ask-editor" => {
                let handle = request.handle();
                peers.request_editor(
                    "x/confirm",
                    serde_json::json!({}),
                    move |_, peers, response| {
                        peers.respond(handle, response.result().map(|r| r.get() == "true"));
                    },
                );
                RequestAction::Defer
            }
            _ => RequestAction::Forward,
        }
    }

    fn on_agent_notification(
        &mut self,
        peers: &mut Peers<Self>,
        n: &Notification<'_>,
    ) -> NotificationAction {
        if n.method() == "x/echo" {
            peers.notify_agent("x/seen", serde_json::json!({"of": n.method()}));
            return NotificationAction::Drop;
        }
        NotificationAction::Forward
    }
}

#[test]
fn hooks_answer_fail_and_modify_requests() {
    let out = lines(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"x/answer","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"x/fail"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"x/modify","params":{"original":1}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"proxy/successor","params":{"method":"x/answer","params":{}}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"answered":true}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"no","data":"why"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"x/modify","params":{"modified":true}}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":null}"#,
        ]
    );
}

#[test]
fn response_hook_sees_and_replaces_the_response() {
    let (out, proxy) = transcript(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":"a","method":"x/then","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"b","method":"x/then-fail"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"orig":true}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"x/then","params":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"proxy/successor","params":{"method":"x/then-fail"}}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{"replaced":true}}"#,
            r#"{"jsonrpc":"2.0","id":"b","error":{"code":-32001,"message":"late"}}"#,
        ]
    );
    assert_eq!(proxy.responses_seen, [r#"{"orig":true}"#]);
}

#[test]
fn deferred_request_is_answered_from_the_response_to_our_own_request() {
    let out = lines(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":7,"method":"x/defer","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"x/unrelated"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"agent says hi"}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"x/ask","params":{"q":1}}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/unrelated"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"via":"\"agent says hi\""}}"#,
        ]
    );
}

#[test]
fn agent_request_can_be_settled_by_asking_the_editor() {
    let out = lines(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"x/ask-editor","params":{},"_meta":{"trace":"t1"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":true}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"x/confirm","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":true}"#,
        ]
    );
}

#[test]
fn envelope_meta_is_shown_to_the_hook() {
    let (_, proxy) = transcript(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"x/answer","params":{},"_meta":{"trace":"t1"}}}"#,
        ],
    );
    assert_eq!(proxy.seen_meta, [r#"{"trace":"t1"}"#]);
}

#[test]
fn a_request_is_answered_exactly_once() {
    let out = lines(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"x/twice"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"x/answer-later-twice"}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":"first"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":1}"#,
        ]
    );
}

#[test]
fn notification_hooks_drop_modify_and_send_new_messages_first() {
    let out = lines(
        Scripted::default(),
        &[
            r#"{"jsonrpc":"2.0","method":"x/drop","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"x/modify","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"x/reply","params":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/echo"}}"#,
        ],
    );
    assert_eq!(
        out,
        [
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/modify","params":[1]}}"#,
            r#"{"jsonrpc":"2.0","method":"x/replied","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/reply","params":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"x/seen","params":{"of":"x/echo"}}}"#,
        ]
    );
}

#[test]
fn input_split_anywhere_gives_the_same_transcript() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
        "\r\n",
        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}"#
    );
    let expected = [
        r#"{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
    ];
    /// Hands out the input a few bytes per read.
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    for step in [1, 2, 7, 64, 1000] {
        let mut out = Vec::new();
        serve(Transparent, Trickle(input.as_bytes(), step), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            expected,
            "read size {step}"
        );
    }
}

#[test]
fn a_forwarded_response_keeps_its_members_order_and_spacing_with_only_the_id_changed() {
    // codex-acp writes `result` before `id`: the response goes back as written (issue 23, 7).
    let out = lines(
        Transparent,
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
            r#"{"jsonrpc":"2.0","result":{ "protocolVersion":1 },"id":1}"#,
        ],
    );
    assert_eq!(
        out[1],
        r#"{"jsonrpc":"2.0","result":{ "protocolVersion":1 },"id":0}"#
    );
}
