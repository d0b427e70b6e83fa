//! The supervisor's part of a reload: from the running configuration and a new one, which
//! proxy instances to start and where they go (a plan in the chain's current positions);
//! then, once the core placed them, the slots in their new order, and old instances stopped.
//!
//! Knows configurations and instances; never messages. What a change is comes from
//! `spec::diff`; when a new instance takes traffic is the core's to decide.

use acp_link::{Link, LinkId};
use acp_router::topology::Position;
use acp_router::{NewInstance, Placement, ReloadPlan, ReloadStep};

use super::starter;
use super::{Slot, Supervisor};
use crate::component::Started;
use crate::component::shared::SharedProxies;
use crate::driver::{ReloadStart, Reloading};
use crate::spec::diff::{AgentChange, ChainDiff, FileDigests, ProxyChange, Side, diff};
use crate::spec::{Config, OnReload};

/// The configuration the chain runs, and what a reload under way would make of it.
#[derive(Debug)]
pub(super) struct Running {
    config: Config,
    digests: FileDigests,
    /// A reload begun and not yet placed: its configuration, the slots of its new instances
    /// by link, and the positions it removes.
    next: Option<Next>,
}

#[derive(Debug)]
struct Next {
    config: Config,
    digests: FileDigests,
    started: Vec<(LinkId, Slot)>,
    removed: Vec<Position>,
    /// The agent's new slot, when it is restarted (`on_reload = "restart"`).
    agent: Option<Slot>,
}

impl Running {
    pub(super) fn of(config: &Config) -> Running {
        Running {
            config: config.clone(),
            digests: FileDigests::of(config),
            next: None,
        }
    }
}

/// What a chain is reloaded to: the configuration, read and checked, and the shared proxies
/// its proxies with `shared = true` attach to (`serve`'s, after its own reload; none under
/// `run`, where every proxy runs once per chain).
#[derive(Debug)]
pub struct ReloadTo {
    pub config: Config,
    pub shared: SharedProxies,
}

impl Reloading for Supervisor {
    type Request = ReloadTo;

    fn start_reload(&mut self, request: ReloadTo) -> ReloadStart {
        let ReloadTo {
            config: new,
            shared,
        } = request;
        let digests = FileDigests::of(&new);
        let diff = diff(
            Side {
                config: &self.running.config,
                digests: &self.running.digests,
            },
            Side {
                config: &new,
                digests: &digests,
            },
        );
        if diff.is_empty() {
            return ReloadStart::Unchanged;
        }
        let (mut steps, links, started, removed) = self.reload_steps(&new, &diff, &shared);
        let restart_agent = matches!(diff.agent, AgentChange::Changed(_))
            && new.agent_on_reload == OnReload::Restart
            && self
                .slots
                .last()
                .is_some_and(|s| s.role == acp_router::Role::Agent);
        if restart_agent {
            steps.push(ReloadStep::RestartAgent);
        }
        let plan = ReloadPlan {
            steps,
            changes: change_lines(&diff, restart_agent),
        };
        self.running.next = Some(Next {
            agent: restart_agent.then(|| Slot::of_agent(&new)),
            config: new,
            digests,
            started,
            removed,
        });
        ReloadStart::Begun { plan, links }
    }
}

/// Each change as the log and the editor are told it: a changed agent is restarted
/// (`restart_agent`) or kept running.
fn change_lines(diff: &ChainDiff, restart_agent: bool) -> Vec<String> {
    let agent_changed = matches!(diff.agent, AgentChange::Changed(_));
    diff.to_string()
        .lines()
        .map(|line| {
            if !(agent_changed && line.starts_with("agent changed")) {
                line.to_owned()
            } else if restart_agent {
                format!(
                    "{line}: restarted (on_reload = \"restart\"); its sessions are lost (load \
                     them again if the agent supports it)"
                )
            } else {
                format!(
                    "{line}: not applied, the agent keeps running with its sessions (restart \
                     the conductor, or set on_reload = \"restart\", to apply it)"
                )
            }
        })
        .collect()
}

type Steps = (
    Vec<ReloadStep>,
    Vec<Link>,
    Vec<(LinkId, Slot)>,
    Vec<Position>,
);

impl Supervisor {
    /// The chain's current position of each proxy still in it, by name.
    fn live_position(&self, name: &str) -> Option<Position> {
        self.slots
            .iter()
            .position(|slot| {
                slot.role == acp_router::Role::Proxy && !slot.removed && slot.name == name
            })
            .map(|index| index + 1)
    }

    /// The plan for `diff`: proxies that keep their place are replaced in it; moved ones are
    /// removed and inserted anew; new instances are started now.
    fn reload_steps(&mut self, new: &Config, diff: &ChainDiff, shared: &SharedProxies) -> Steps {
        let mut steps = Vec::new();
        let mut links = Vec::new();
        let mut started = Vec::new();
        let mut removed = Vec::new();
        // Where an insertion goes: before the next proxy of the new order that stays where
        // it is, else before the agent (or past the last proxy in proxy mode).
        let end = self.slots.len()
            + usize::from(
                self.slots
                    .last()
                    .is_none_or(|s| s.role != acp_router::Role::Agent),
            );
        let staying = |change: &ProxyChange| {
            matches!(
                change,
                ProxyChange::Kept { .. } | ProxyChange::Replaced { moved: false, .. }
            )
        };
        let in_new_order: Vec<&ProxyChange> = diff
            .proxies
            .iter()
            .filter(|c| !matches!(c, ProxyChange::Removed { .. }))
            .collect();
        for (index, change) in in_new_order.iter().enumerate() {
            let name = change.name();
            let spec = new
                .proxies
                .iter()
                .find(|p| p.name == name)
                .expect("a change of the new chain names one of its proxies");
            let place = match change {
                ProxyChange::Kept { .. } => continue,
                ProxyChange::Replaced { moved: false, .. } => {
                    let Some(position) = self.live_position(name) else {
                        continue;
                    };
                    Err(position)
                }
                ProxyChange::Moved { .. } | ProxyChange::Replaced { moved: true, .. } => {
                    if let Some(position) = self.live_position(name) {
                        removed.push(position);
                        steps.push(ReloadStep::Remove { position });
                    }
                    Ok(())
                }
                ProxyChange::Added { .. } => Ok(()),
                ProxyChange::Removed { .. } => unreachable!("filtered out above"),
            };
            let slot = Slot::of_proxy(spec, shared);
            let link = self.start_for_reload(&slot);
            let instance = NewInstance {
                link: link.id,
                name: slot.name.clone(),
                dialect: slot.dialect,
                failure: slot.failure,
            };
            match place {
                Err(position) => steps.push(ReloadStep::Replace { position, instance }),
                Ok(()) => {
                    let before = in_new_order[index + 1..]
                        .iter()
                        .find(|c| staying(c))
                        .and_then(|c| self.live_position(c.name()))
                        .unwrap_or(end);
                    steps.push(ReloadStep::Insert { before, instance });
                }
            }
            started.push((link.id, slot));
            links.push(link);
        }
        for change in &diff.proxies {
            if let ProxyChange::Removed { name, .. } = change
                && let Some(position) = self.live_position(name)
            {
                removed.push(position);
                steps.push(ReloadStep::Remove { position });
            }
        }
        (steps, links, started, removed)
    }

    /// Starts one instance for a reload; one that cannot start gets an unconnected link,
    /// whose end the core hears first (and abandons the reload).
    fn start_for_reload(&mut self, slot: &Slot) -> Link {
        tracing::info!(component = %slot.name, "starting for a reload");
        match self.starter.start(&slot.launch) {
            Ok(Started { link, instance }) => {
                self.instances.push(instance);
                link
            }
            Err(error) => {
                let link = self.starter.links().unconnected();
                self.report(acp_link::event::Event::Exited {
                    link: link.id,
                    reason: error.to_string(),
                    status: None,
                    stderr_tail: Vec::new(),
                });
                link
            }
        }
    }

    /// The core placed a reload's instances: the slots follow, and the new configuration is
    /// the running one.
    pub(super) fn take_places(&mut self, placements: &[Placement]) {
        let Some(next) = self.running.next.take() else {
            return;
        };
        let Next {
            config,
            digests,
            mut started,
            removed,
            agent,
        } = next;
        let mut old: Vec<Option<Slot>> = std::mem::take(&mut self.slots)
            .into_iter()
            .map(Some)
            .collect();
        for (position, slot) in old.iter_mut().enumerate() {
            if removed.contains(&(position + 1))
                && let Some(slot) = slot
            {
                slot.removed = true;
            }
        }
        for placement in placements {
            let slot = match placement {
                Placement::Kept(position) => old[position - 1].take().expect("placed once"),
                Placement::Started(link) => {
                    let index = started
                        .iter()
                        .position(|(l, _)| l == link)
                        .expect("a link this reload started");
                    let (link, mut slot) = started.swap_remove(index);
                    slot.current = self.instances.iter().position(|i| i.link == link);
                    slot
                }
            };
            self.slots.push(slot);
        }
        if let Some(mut agent) = agent
            && let Some(slot) = self.slots.last_mut()
            && slot.role == acp_router::Role::Agent
        {
            // Started again with the new launch, initialized as before.
            agent.initialize_params = slot.initialize_params.take();
            agent.current = slot.current;
            *slot = agent;
        }
        self.running.config = config;
        self.running.digests = digests;
    }

    /// Stops the instance behind `link` (replaced, removed, or started for an abandoned
    /// reload); a slot whose current instance it was has none from now on.
    pub(super) fn stop_instance(&mut self, link: LinkId) {
        let Some(index) = self.instances.iter().position(|i| i.link == link) else {
            return;
        };
        for slot in &mut self.slots {
            if slot.current == Some(index) {
                slot.current = None;
            }
        }
        let instance = self.instances[index].clone();
        tokio::spawn(starter::stop(vec![instance]));
    }
}
