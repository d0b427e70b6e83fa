//! `shout`: an example proxy that upper-cases the text the agent streams to the editor.
//! One hook, one lossless edit; everything else passes through untouched.

use std::process::ExitCode;

use proxy_kit::json::{set_member, to_raw};
use proxy_kit::{Notification, NotificationAction, Peers, Proxy};
use serde::Deserialize;

/// The few fields of a `session/update` this proxy looks at.
#[derive(Deserialize)]
struct SessionUpdate {
    update: Update,
}

#[derive(Deserialize)]
struct Update {
    #[serde(rename = "sessionUpdate")]
    kind: String,
    content: Option<Content>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

pub struct Shout;

impl Proxy for Shout {
    fn on_agent_notification(
        &mut self,
        _peers: &mut Peers<Self>,
        notification: &Notification<'_>,
    ) -> NotificationAction {
        let (Some(params), "session/update") = (notification.params(), notification.method())
        else {
            return NotificationAction::Forward;
        };
        let Ok(SessionUpdate { update }) = notification.parse_params() else {
            return NotificationAction::Forward;
        };
        match (update.kind.as_str(), update.content) {
            (
                "agent_message_chunk",
                Some(Content {
                    kind,
                    text: Some(text),
                }),
            ) if kind == "text" => {
                let loud = to_raw(&text.to_uppercase());
                // Only `text` changes; every other byte of the update stays as the agent sent it.
                let params = set_member(params, &["update", "content", "text"], &loud);
                NotificationAction::ForwardModified(params)
            }
            _ => NotificationAction::Forward,
        }
    }
}

fn main() -> ExitCode {
    proxy_kit::log::init("shout", None);
    proxy_kit::run(Shout)
}
