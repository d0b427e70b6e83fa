//! The routing table of the chain: where a message arriving from a position goes, and whether it
//! travels plain or wrapped in `proxy/successor`. Pure: every routing rule lives here.
//!
//! Positions: 0 is the editor (in proxy mode, the parent conductor), 1..=n are the proxies,
//! n+1 is the agent (in proxy mode, the parent's successor, reached through position 0
//! wrapped, so there is no position n+1). A position is a place in the chain, not a link: a
//! component started again keeps its position and gets a new link.

use acp_wire::successor::Dialect;

/// A place in the chain: 0 the editor, 1..=n the proxies, n+1 the agent.
pub type Position = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainMode {
    /// Terminal: position 0 is an editor, position n+1 is our own agent.
    Agent,
    /// Nested: position 0 is a parent conductor that also stands for our successor.
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

/// Where a message goes: a position, plain or wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub position: Position,
    pub wrap: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub proxies: usize,
    pub mode: ChainMode,
}

impl Topology {
    /// How many positions have a link of their own (in proxy mode the agent's has none).
    pub fn link_count(&self) -> usize {
        match self.mode {
            ChainMode::Agent => self.proxies + 2,
            ChainMode::Proxy => self.proxies + 1,
        }
    }

    pub fn agent_position(&self) -> Option<Position> {
        (self.mode == ChainMode::Agent).then_some(self.proxies + 1)
    }

    pub fn is_proxy(&self, position: Position) -> bool {
        (1..=self.proxies).contains(&position)
    }

    /// Reads the direction of a request or notification from the position it arrived from
    /// and its outer method name.
    pub fn classify(&self, from: Position, method: &str) -> Origin {
        let successor = Dialect::of_successor(method).is_some();
        if from == 0 {
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
        if self.is_proxy(from) && successor {
            return Origin {
                position: from,
                toward: Toward::Agent,
                wrapped: true,
            };
        }
        Origin {
            position: from,
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
                        position: to,
                        wrap: false,
                    }
                } else {
                    match self.mode {
                        ChainMode::Agent => Hop {
                            position: to,
                            wrap: false,
                        },
                        ChainMode::Proxy => Hop {
                            position: 0,
                            wrap: true,
                        },
                    }
                }
            }
            Toward::Editor => {
                let to = origin.position - 1;
                Hop {
                    position: to,
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

    fn route(t: Topology, from: Position, method: &str) -> (Position, bool) {
        let hop = t.next_hop(t.classify(from, method));
        (hop.position, hop.wrap)
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
        assert_eq!(t.agent_position(), Some(4));
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
        assert_eq!(t.agent_position(), None);
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
