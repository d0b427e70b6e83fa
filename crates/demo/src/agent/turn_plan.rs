//! The plans a demo turn shows: its checklist as the turn progresses and, for a prompt that
//! mentions a plan, an outline of what the turn will do. Knows update shapes, not how they are sent.
//!
//! A client that advertised plans in `initialize` (`clientCapabilities.plan`, or the older
//! spelling `planCapabilities`) gets plan operations in schema 1.20's shapes: the checklist as a
//! `plan_update` of type `items` under [`CHECKLIST_ID`] as the turn starts and again, all done, as
//! it ends, and the outline as a `markdown` one under [`OUTLINE_ID`], taken down with
//! `plan_removed` as the turn ends. Agents must not send those to other clients: they get the
//! baseline `plan` update instead, the checklist as the turn starts and again, all done, before it
//! ends (the spec's way of updating a plan: every entry again, with its current status; the client
//! replaces what it shows), so that no client is left showing a plan in progress after the turn.
//!
//! There is no update between the two: it would come between the echo and the first thing the
//! turn does, where clients (and tests) read the demo's output as one piece.

use serde_json::{Value, json};

use super::intent::{Asked, ToolIntent};

/// The checklist's id: every turn of a session updates the same plan.
pub(super) const CHECKLIST_ID: &str = "demo-checklist";
/// The outline's id; each turn that shows one removes it before it ends.
pub(super) const OUTLINE_ID: &str = "demo-outline";

/// Whether the params of a client's `initialize` advertise plan operations: `plan` (or the
/// older `planCapabilities`) in its `clientCapabilities`, an object (`{}`); `null` says no.
pub(super) fn client_shows_plans(initialize: &Value) -> bool {
    let capabilities = &initialize["clientCapabilities"];
    capabilities["plan"].is_object() || capabilities["planCapabilities"].is_object()
}

/// Where a turn is in its checklist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Progress {
    /// The turn starts by showing back what the prompt contained.
    Started,
    /// Everything done.
    Done,
}

/// The plans of one turn.
pub(super) struct TurnPlan {
    operations: bool,
    /// The checklist's second entry.
    action: &'static str,
    /// The outline's markdown, when the prompt mentions a plan and the client takes operations.
    outline: Option<String>,
}

impl TurnPlan {
    /// The plans of turn `turn_number`, whose prompt has `blocks` content blocks and asks for
    /// `asked`; `operations` when the client advertised plans.
    pub(super) fn new(
        operations: bool,
        turn_number: u64,
        blocks: usize,
        asked: &Asked,
        mentions_plan: bool,
    ) -> Self {
        let action = match asked {
            Asked::Tool(_) => "Use the requested MCP tool",
            Asked::Actions { .. } => "Carry out a requested write or read",
        };
        let outline = (operations && mentions_plan).then(|| outline(turn_number, blocks, asked));
        TurnPlan {
            operations,
            action,
            outline,
        }
    }

    /// The update showing the checklist at `progress`: an `items` plan for a client that takes
    /// operations, the plain `plan` (the whole list again) for one that does not.
    pub(super) fn checklist(&self, progress: Progress) -> Value {
        let (shown, acted) = match progress {
            Progress::Started => ("in_progress", "pending"),
            Progress::Done => ("completed", "completed"),
        };
        let entries = json!([
            {"content": "Show what the prompt contained", "priority": "high", "status": shown},
            {"content": self.action, "priority": "medium", "status": acted},
        ]);
        if self.operations {
            json!({
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": CHECKLIST_ID, "entries": entries},
            })
        } else {
            json!({"sessionUpdate": "plan", "entries": entries})
        }
    }

    /// The update showing the outline, if this turn has one.
    pub(super) fn outline(&self) -> Option<Value> {
        let content = self.outline.as_ref()?;
        Some(json!({
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": OUTLINE_ID, "content": content},
        }))
    }

    /// The update taking the outline down, if this turn has one.
    pub(super) fn outline_removal(&self) -> Option<Value> {
        self.outline.as_ref()?;
        Some(json!({"sessionUpdate": "plan_removed", "planId": OUTLINE_ID}))
    }
}

/// The outline of a turn as markdown: a heading and the turn's steps, numbered.
fn outline(turn_number: u64, blocks: usize, asked: &Asked) -> String {
    let mut steps = vec![format!("Show back the {blocks} content block(s) received")];
    match asked {
        Asked::Tool(ToolIntent::Call { tool, .. }) => {
            steps.push(format!("Call the MCP tool `{tool}` and report its answer"));
        }
        Asked::Tool(ToolIntent::List) => {
            steps.push("List the tools of the session's MCP servers".to_owned());
        }
        Asked::Tool(ToolIntent::BadArguments { tool, .. }) => {
            steps.push(format!(
                "Explain why `{tool}` is not called: its arguments are not a JSON object"
            ));
        }
        Asked::Actions { slow, write, read } => {
            if *slow {
                steps.push("Tick every 100 ms until cancelled (at most 50 ticks)".to_owned());
            }
            if *write {
                steps.push("Ask permission to write demo.txt (never written)".to_owned());
            }
            if let Some(target) = read {
                steps.push(format!(
                    "Read the first line of {target} through the client"
                ));
            }
            if !*slow && !*write && read.is_none() {
                steps.push("Nothing else: no tool, write or read was asked for".to_owned());
            }
        }
    }
    steps.push("End the turn".to_owned());
    let mut markdown = format!("# Plan for turn {turn_number}\n\n");
    for (number, step) in steps.iter().enumerate() {
        markdown.push_str(&format!("{}. {step}\n", number + 1));
    }
    markdown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(slow: bool, write: bool, read: Option<&str>) -> Asked {
        Asked::Actions {
            slow,
            write,
            read: read.map(str::to_owned),
        }
    }

    #[test]
    fn plans_are_advertised_by_an_object_under_either_spelling() {
        for params in [
            json!({"clientCapabilities": {"plan": {}}}),
            json!({"clientCapabilities": {"plan": {"_meta": {"x": 1}}}}),
            json!({"clientCapabilities": {"planCapabilities": {}}}),
        ] {
            assert!(client_shows_plans(&params), "{params}");
        }
        for params in [
            json!({"clientCapabilities": {}}),
            json!({"clientCapabilities": {"plan": null}}),
            json!({"clientCapabilities": {"plan": true}}),
            json!({"clientCapabilities": {"planCapabilities": null}}),
            json!({"plan": {}}),
            json!({}),
        ] {
            assert!(!client_shows_plans(&params), "{params}");
        }
    }

    #[test]
    fn the_checklist_is_an_items_plan_at_start_and_end_for_a_client_that_takes_operations() {
        let plan = TurnPlan::new(true, 1, 1, &actions(false, false, None), false);
        let statuses = [
            (Progress::Started, "in_progress", "pending"),
            (Progress::Done, "completed", "completed"),
        ];
        for (progress, shown, acted) in statuses {
            assert_eq!(
                plan.checklist(progress),
                json!({"sessionUpdate": "plan_update", "plan": {
                    "type": "items", "planId": "demo-checklist", "entries": [
                        {"content": "Show what the prompt contained", "priority": "high", "status": shown},
                        {"content": "Carry out a requested write or read", "priority": "medium", "status": acted},
                    ],
                }}),
                "{progress:?}"
            );
        }
        assert_eq!(plan.outline(), None);
        assert_eq!(plan.outline_removal(), None);
    }

    #[test]
    fn other_clients_get_the_plain_plan_at_start_and_end_and_no_outline() {
        let asked = Asked::Tool(ToolIntent::List);
        let plan = TurnPlan::new(false, 1, 1, &asked, true);
        assert_eq!(
            plan.checklist(Progress::Started),
            json!({"sessionUpdate": "plan", "entries": [
                {"content": "Show what the prompt contained", "priority": "high", "status": "in_progress"},
                {"content": "Use the requested MCP tool", "priority": "medium", "status": "pending"},
            ]})
        );
        assert_eq!(
            plan.checklist(Progress::Done),
            json!({"sessionUpdate": "plan", "entries": [
                {"content": "Show what the prompt contained", "priority": "high", "status": "completed"},
                {"content": "Use the requested MCP tool", "priority": "medium", "status": "completed"},
            ]})
        );
        assert_eq!(plan.outline(), None);
        assert_eq!(plan.outline_removal(), None);
    }

    #[test]
    fn a_prompt_that_mentions_a_plan_gets_an_outline_of_its_steps() {
        let plan = TurnPlan::new(true, 3, 2, &actions(true, true, Some("notes.txt")), true);
        assert_eq!(
            plan.outline(),
            Some(json!({"sessionUpdate": "plan_update", "plan": {
                "type": "markdown", "planId": "demo-outline",
                "content": "# Plan for turn 3\n\n\
                            1. Show back the 2 content block(s) received\n\
                            2. Tick every 100 ms until cancelled (at most 50 ticks)\n\
                            3. Ask permission to write demo.txt (never written)\n\
                            4. Read the first line of notes.txt through the client\n\
                            5. End the turn\n",
            }}))
        );
        assert_eq!(
            plan.outline_removal(),
            Some(json!({"sessionUpdate": "plan_removed", "planId": "demo-outline"}))
        );
    }

    #[test]
    fn the_outline_names_what_the_prompt_asked_for() {
        let second_step = |asked: Asked| {
            let content = outline(1, 1, &asked);
            content.lines().nth(3).unwrap().to_owned()
        };
        let call = ToolIntent::Call {
            tool: "recall".into(),
            arguments: json!({}),
        };
        assert_eq!(
            second_step(Asked::Tool(call)),
            "2. Call the MCP tool `recall` and report its answer"
        );
        assert_eq!(
            second_step(Asked::Tool(ToolIntent::List)),
            "2. List the tools of the session's MCP servers"
        );
        let bad = ToolIntent::BadArguments {
            tool: "t".into(),
            problem: "got 2".into(),
        };
        assert_eq!(
            second_step(Asked::Tool(bad)),
            "2. Explain why `t` is not called: its arguments are not a JSON object"
        );
        assert_eq!(
            second_step(actions(false, false, None)),
            "2. Nothing else: no tool, write or read was asked for"
        );
    }
}
