//! The `router` fuzz target's input format: a header line choosing the chain, then one step
//! per line, each something one side does (send, answer, cancel, close, exit) or the run does.
//!
//! Text, so that seeds are written by hand and read in a crash report:
//!
//! ```text
//! #1ad                          1 proxy, agent mode (p: proxy mode), dialect d|r|u
//! e>{"jsonrpc":"2.0",...}       the editor sends this line as it is
//! 1w0                           proxy 1 passes on the first request it holds, wrapped
//! ar0{"stopReason":"end_turn"}  the agent answers the first request it holds with a result
//! a!1                           ... the second, with an error (the default one, or the JSON given)
//! aR0                           the agent sends its first answer again
//! ec0                           the editor cancels the first request it sent
//! a.   ax   af   afs   ad       close output, exited, write failed (stalled), drained
//! N   x>{...}                   a bridge shim dials in; shims are x, y, z
//! T600   K                      600 ms pass; SIGTERM
//! ```
//!
//! Sides are `e`, `1`-`3`, `a`, `x`-`z`; a digit after the action picks among what the side
//! holds (modulo its count). Unknown lines are skipped, so every input is a script.

use std::time::Duration;

use acp_wire::successor::Dialect;
use bytes::Bytes;

use acp_router::DialectChoice;
use acp_router::topology::ChainMode;

/// At most this many steps are played, so every input runs quickly.
const MAX_STEPS: usize = 256;

/// A chain and what happens to it.
#[derive(Debug)]
pub struct Script {
    pub proxies: usize,
    pub mode: ChainMode,
    pub dialect: DialectChoice,
    pub steps: Vec<Step>,
}

/// Who does something: the editor (or parent conductor), a proxy, the agent, a bridge shim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Editor,
    /// 1-based, like positions.
    Proxy(usize),
    Agent,
    /// 0-based, in the order the shims dialed in.
    Shim(usize),
}

#[derive(Debug)]
pub enum Step {
    /// Sends this message as it is.
    Send(Side, Bytes),
    /// Answers the `pick`th request the side holds, with a result or an error (the JSON
    /// given, or a default).
    Answer {
        side: Side,
        pick: usize,
        error: bool,
        payload: Bytes,
    },
    /// Sends the `pick`th answer the side gave again.
    Repeat(Side, usize),
    /// Passes the `pick`th request a proxy holds on (wrapped toward the agent, plain toward
    /// the editor) with an id of its own; the answer is relayed back when it comes.
    Forward(Side, usize),
    /// `$/cancel_request` for the `pick`th request the side sent.
    Cancel(Side, usize),
    /// The side closes its output.
    Close(Side),
    /// The component behind the side's link exited.
    Exit(Side),
    /// Writing to the side failed, or stalled.
    WriteFailed(Side, bool),
    /// The side's writer reports that its queue drained.
    Drained(Side),
    /// Time passes.
    Wait(Duration),
    /// The conductor gets SIGTERM.
    Signal,
    /// A bridge shim dials in.
    ConnectShim,
}

impl Script {
    pub fn parse(data: &[u8]) -> Script {
        let mut lines = data.split(|&b| b == b'\n').peekable();
        let mut script = Script {
            proxies: 1,
            mode: ChainMode::Agent,
            dialect: DialectChoice::Detect,
            steps: Vec::new(),
        };
        if let Some(header) = lines.next_if(|l| l.first() == Some(&b'#')) {
            script.header(&header[1..]);
        }
        script.steps = lines.filter_map(step).take(MAX_STEPS).collect();
        script
    }

    fn header(&mut self, header: &[u8]) {
        if let Some(&n @ b'0'..=b'3') = header.first() {
            self.proxies = usize::from(n - b'0');
        }
        if header.get(1) == Some(&b'p') {
            self.mode = ChainMode::Proxy;
        }
        self.dialect = match header.get(2) {
            Some(b'r') => DialectChoice::Pinned(Dialect::Rfd),
            Some(b'u') => DialectChoice::Pinned(Dialect::Underscore),
            _ => DialectChoice::Detect,
        };
    }
}

fn step(line: &[u8]) -> Option<Step> {
    let (&who, rest) = line.split_first()?;
    let side = match who {
        b'e' => Side::Editor,
        b'1'..=b'3' => Side::Proxy(usize::from(who - b'0')),
        b'a' => Side::Agent,
        b'x'..=b'z' => Side::Shim(usize::from(who - b'x')),
        b'T' => return Some(Step::Wait(Duration::from_millis(millis(rest)))),
        b'K' => return Some(Step::Signal),
        b'N' => return Some(Step::ConnectShim),
        _ => return None,
    };
    let (&action, rest) = rest.split_first()?;
    let pick = rest
        .first()
        .map_or(0, |&d| usize::from(d.wrapping_sub(b'0')) % 10);
    let payload = || Bytes::copy_from_slice(rest.get(1..).unwrap_or_default());
    Some(match action {
        b'>' => Step::Send(side, Bytes::copy_from_slice(rest)),
        b'r' | b'!' => Step::Answer {
            side,
            pick,
            error: action == b'!',
            payload: payload(),
        },
        b'R' => Step::Repeat(side, pick),
        b'w' => Step::Forward(side, pick),
        b'c' => Step::Cancel(side, pick),
        b'.' => Step::Close(side),
        b'x' => Step::Exit(side),
        b'f' => Step::WriteFailed(side, rest.first() == Some(&b's')),
        b'd' => Step::Drained(side),
        _ => return None,
    })
}

/// Milliseconds written in decimal, at most ten minutes; 1000 when none are written.
fn millis(text: &[u8]) -> u64 {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits)
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .unwrap_or(1000)
        .min(600_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_header_and_each_kind_of_step() {
        let script = Script::parse(
            b"#2pu\ne>{\"a\":1}\nar3{}\n1!\nxR1\n2w9\nec0\na.\nax\nefs\nyd\nT250\nK\nN\n?junk\n",
        );
        assert_eq!(script.proxies, 2);
        assert_eq!(script.mode, ChainMode::Proxy);
        assert_eq!(script.dialect, DialectChoice::Pinned(Dialect::Underscore));
        let steps: Vec<String> = script.steps.iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(
            steps,
            [
                r#"Send(Editor, b"{\"a\":1}")"#,
                r#"Answer { side: Agent, pick: 3, error: false, payload: b"{}" }"#,
                r#"Answer { side: Proxy(1), pick: 0, error: true, payload: b"" }"#,
                "Repeat(Shim(0), 1)",
                "Forward(Proxy(2), 9)",
                "Cancel(Editor, 0)",
                "Close(Agent)",
                "Exit(Agent)",
                "WriteFailed(Editor, true)",
                "Drained(Shim(1))",
                "Wait(250ms)",
                "Signal",
                "ConnectShim",
            ]
        );
    }

    #[test]
    fn without_a_header_the_chain_is_one_proxy_and_an_agent() {
        let script = Script::parse(b"e>x");
        assert_eq!((script.proxies, script.mode), (1, ChainMode::Agent));
        assert_eq!(script.dialect, DialectChoice::Detect);
        assert_eq!(script.steps.len(), 1);
    }
}
