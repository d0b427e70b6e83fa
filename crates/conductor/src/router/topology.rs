//! The routing table of the chain: where a message arriving on a link goes, and whether it
//! travels plain or wrapped in `proxy/successor`. Pure: every routing rule lives here.
//!
//! Positions: 0 is the editor (in proxy mode, the parent conductor), 1..=n are the proxies,
//! n+1 is the agent (in proxy mode, the parent's successor, reached through link 0 wrapped).
//! Links are numbered like positions; in proxy mode there is no link n+1.

use acp_wire::successor::Dialect;

use crate::event::LinkId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainMode {
    /// Terminal: link 0 is an editor, position n+1 is our own agent.
    Agent,
    /// Nested: link 0 is a parent conductor that also stands for our successor.
    Proxy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toward {
    Agent,
    Editor,
}

/// Where a message came from in chain terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    pub position: usize,
    pub toward: Toward,
    /// It arrived wrapped in `proxy/successor` and must be unwrapped first.
    pub wrapped: bool,
}

/// Where a message goes: a link, plain or wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub link: LinkId,
    pub wrap: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub proxies: usize,
    pub mode: ChainMode,
}

impl Topology {
    pub fn link_count(&self) -> usize {
        match self.mode {
            ChainMode::Agent => self.proxies + 2,
            ChainMode::Proxy => self.proxies + 1,
        }
    }

    pub fn agent_link(&self) -> Option<LinkId> {
        (self.mode == ChainMode::Agent).then_some(self.proxies + 1)
    }

    pub fn is_proxy(&self, link: LinkId) -> bool {
        (1..=self.proxies).contains(&link)
    }

    /// Reads the direction of a request or notification from the link it arrived on and its
    /// outer method name.
    pub fn classify(&self, link: LinkId, method: &str) -> Origin {
        let successor = Dialect::of_successor(method).is_some();
        if link == 0 {
            if self.mode == ChainMode::Proxy && successor {
                // The parent delivers what our successor sent toward the editor.
                return Origin {
                    position: self.proxies + 1,
                    toward: Toward::Editor,
                    wrapped: true,
                };
            }
            return Origin {
                position: 0,
                toward: Toward::Agent,
                wrapped: false,
            };
        }
        if self.is_proxy(link) && successor {
            return Origin {
                position: link,
                toward: Toward::Agent,
                wrapped: true,
            };
        }
        Origin {
            position: link,
            toward: Toward::Editor,
            wrapped: false,
        }
    }

    /// The next hop for a message from `origin`.
    pub fn next_hop(&self, origin: Origin) -> Hop {
        match origin.toward {
            Toward::Agent => {
                let to = origin.position + 1;
                if to <= self.proxies {
                    Hop {
                        link: to,
                        wrap: false,
                    }
                } else {
                    match self.mode {
                        ChainMode::Agent => Hop {
                            link: to,
                            wrap: false,
                        },
                        ChainMode::Proxy => Hop {
                            link: 0,
                            wrap: true,
                        },
                    }
                }
            }
            Toward::Editor => {
                let to = origin.position - 1;
                Hop {
                    link: to,
                    wrap: to != 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &str = "session/prompt";
    const WRAPPED: &str = "proxy/successor";

    fn route(t: Topology, link: LinkId, method: &str) -> (LinkId, bool) {
        let hop = t.next_hop(t.classify(link, method));
        (hop.link, hop.wrap)
    }

    #[test]
    fn zero_proxies_agent_mode() {
        let t = Topology {
            proxies: 0,
            mode: ChainMode::Agent,
        };
        assert_eq!(t.link_count(), 2);
        assert_eq!(route(t, 0, PLAIN), (1, false));
        assert_eq!(route(t, 1, PLAIN), (0, false));
        // An agent has no successor: a `proxy/successor` from it is just another method
        // going to the editor.
        assert_eq!(route(t, 1, WRAPPED), (0, false));
    }

    #[test]
    fn three_proxies_agent_mode_every_rule() {
        let t = Topology {
            proxies: 3,
            mode: ChainMode::Agent,
        };
        assert_eq!(t.agent_link(), Some(4));
        // editor -> proxy 1, plain
        assert_eq!(route(t, 0, PLAIN), (1, false));
        // proxy k successor -> k+1 plain; proxy 3 -> agent plain
        assert_eq!(route(t, 1, WRAPPED), (2, false));
        assert_eq!(route(t, 2, "_proxy/successor"), (3, false));
        assert_eq!(route(t, 3, WRAPPED), (4, false));
        // proxy k plain -> k-1: wrapped for a proxy, plain for the editor
        assert_eq!(route(t, 3, PLAIN), (2, true));
        assert_eq!(route(t, 2, PLAIN), (1, true));
        assert_eq!(route(t, 1, PLAIN), (0, false));
        // agent -> last proxy, wrapped
        assert_eq!(route(t, 4, PLAIN), (3, true));
    }

    #[test]
    fn proxy_mode_successor_is_the_parent() {
        let t = Topology {
            proxies: 2,
            mode: ChainMode::Proxy,
        };
        assert_eq!(t.link_count(), 3);
        assert_eq!(t.agent_link(), None);
        // from parent (as predecessor) -> first proxy
        assert_eq!(route(t, 0, PLAIN), (1, false));
        // last proxy toward its successor -> parent, wrapped
        assert_eq!(route(t, 2, WRAPPED), (0, true));
        // parent delivering from our successor -> last proxy, wrapped
        assert_eq!(route(t, 0, WRAPPED), (2, true));
        // first proxy toward its predecessor -> parent, plain
        assert_eq!(route(t, 1, PLAIN), (0, false));
    }

    #[test]
    fn proxy_mode_without_proxies_loops_through_the_parent() {
        let t = Topology {
            proxies: 0,
            mode: ChainMode::Proxy,
        };
        assert_eq!(route(t, 0, PLAIN), (0, true));
        assert_eq!(route(t, 0, WRAPPED), (0, false));
    }
}
