//! The core's trace points: the links named first, each frame it takes recorded once with
//! where it went; an untraced router hands out none. Formatting them is the trace layer's.

use super::harness::Spec;
use crate::trace_record::{Dir, Frame, TracePoint};

#[test]
fn links_are_named_and_a_forwarded_request_says_where_it_went() {
    let mut chain = Spec::new(0).traced().start();
    let (editor, agent) = (chain.editor.id, chain.agent().id);
    let at_agent =
        chain.editor_sends(r#"{"jsonrpc":"2.0","id":"n","method":"session/new","params":{}}"#);
    let points = chain.trace_points();
    let names: Vec<(usize, String, Option<usize>)> = points
        .iter()
        .filter_map(|p| match p {
            TracePoint::Link {
                link,
                name,
                position,
            } => Some((link.0, name.clone(), *position)),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        [
            (editor.0, "editor".to_string(), Some(0)),
            (agent.0, "agent".to_string(), Some(1))
        ]
    );
    let messages: Vec<_> = points
        .iter()
        .filter_map(|p| match p {
            TracePoint::Message(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 1, "{points:?}");
    let m = messages[0];
    assert_eq!((m.link, m.dir), (editor, Dir::In));
    assert!(matches!(&m.frame, Frame::Line(line) if line.starts_with(b"{\"jsonrpc\"")));
    let id = at_agent["id"].as_u64().expect("our id at the agent");
    assert_eq!(m.route.forwarded, Some((agent, id)));

    // The answer is recorded as relayed to the editor under the editor's id.
    chain
        .agent()
        .send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    assert_eq!(chain.editor.recv()["id"], "n");
    let points = chain.trace_points();
    let answered: Vec<_> = points
        .iter()
        .filter_map(|p| match p {
            TracePoint::Message(m) => m.route.answered.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(answered, [(editor, "\"n\"".into())]);
}

#[test]
fn an_untraced_router_hands_out_no_trace_point() {
    let mut chain = Spec::new(1).start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#);
    assert!(chain.trace_points().is_empty());
}

#[test]
fn an_untraced_router_counting_component_events_hands_out_those_only() {
    use crate::policy::{FailurePolicy, OnFailure};
    use crate::trace_record::ComponentEvent;
    let bypass = FailurePolicy {
        on_failure: OnFailure::Bypass,
        ..FailurePolicy::default()
    };
    let mut chain = Spec::new(1)
        .on_failure(1, bypass)
        .counting_component_events()
        .start();
    chain.editor_sends(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#);
    let p1 = chain.proxy(1).id;
    chain.exited(p1, "exited with status 2", &[]);
    let events: Vec<(String, ComponentEvent)> = chain
        .trace_points()
        .into_iter()
        .map(|point| match point {
            TracePoint::Component { name, event, .. } => (name, event),
            other => panic!("only component events, not {other:?}"),
        })
        .collect();
    assert_eq!(
        events,
        [
            ("p1".to_string(), ComponentEvent::Failed),
            ("p1".to_string(), ComponentEvent::Bypassed)
        ]
    );
}
