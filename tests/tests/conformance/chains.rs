//! The suite's chains: the conformance agent, test proxies of either dialect, MCP providers
//! and a nested conductor behind a wiretap, each recording both sides of its link; and, once
//! the run is over, every link's recording for the judge.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use acp_conductor_tests::editor::{Direction as Sent, Editor};
use acp_conductor_tests::test_chain::{AGENT, AgentEntry, TestChain};
use acp_conductor_tests::{binaries, processes};

use super::judge;
use super::links::{LinkKind, LinkRecord};

const CONFORMANCE_AGENT: &str = env!("CARGO_BIN_EXE_conformance-agent");
const WIRETAP: &str = env!("CARGO_BIN_EXE_wiretap");
const MCP_PROVIDER: &str = env!("CARGO_BIN_EXE_test-mcp-provider");

/// The wire form a test-mcp-provider serves (its `--variant`).
#[derive(Debug, Clone, Copy)]
pub enum Form {
    Rfd,
    ServerId,
    Connectionless,
}

impl Form {
    fn arg(self) -> &'static str {
        match self {
            Form::Rfd => "rfd",
            Form::ServerId => "server-id",
            Form::Connectionless => "connectionless",
        }
    }
}

/// A recorded component: its name, the chain directory its files are in, and its link kind.
struct Recorded {
    name: String,
    dir: PathBuf,
    kind: LinkKind,
}

/// A proxy whose link a wiretap records, both ways (`<name>.in`, `<name>.out`).
struct Tapped {
    name: String,
    /// A conductor in proxy mode: the link is also its link to its parent.
    conductor: bool,
}

/// A chain whose every link is recorded.
pub struct Chain {
    pub chain: TestChain,
    /// The chains of nested conductors, kept for their directories and their proxies' files.
    inner: Vec<TestChain>,
    recorded: Vec<Recorded>,
    tapped: Vec<Tapped>,
}

impl Chain {
    /// The conformance agent (with `agent_args`, e.g. `--acp`) and no proxy yet. Builds the
    /// judge first (once per test run), before any process of the scenario starts.
    pub fn new(label: &str, agent_args: &[&str]) -> Self {
        judge::program();
        let binaries = binaries!();
        let mut chain = TestChain::new(&binaries, label);
        let mut args = fixture_args(&chain.dir, AGENT);
        args.push("--record-shim".to_string());
        args.push(chain.file(AGENT, "shim").display().to_string());
        args.extend(agent_args.iter().map(|a| a.to_string()));
        chain.agent = Some(AgentEntry {
            command: PathBuf::from(CONFORMANCE_AGENT),
            args,
            settings: Vec::new(),
        });
        let recorded = vec![Recorded {
            name: AGENT.to_string(),
            dir: chain.dir.clone(),
            kind: LinkKind::Agent,
        }];
        Self {
            chain,
            inner: Vec::new(),
            recorded,
            tapped: Vec::new(),
        }
    }

    /// Appends a test-proxy speaking `dialect` (`rfd` or `underscore`).
    pub fn proxy(&mut self, name: &str, dialect: &str) -> &mut Self {
        add_test_proxy(&mut self.chain, name, dialect);
        self.recorded.push(Recorded {
            name: name.to_string(),
            dir: self.chain.dir.clone(),
            kind: LinkKind::Proxy,
        });
        self
    }

    /// Appends a test-mcp-provider serving MCP server `server` (id `<server>-1`) in `form`.
    pub fn provider(&mut self, name: &str, server: &str, form: Form) -> &mut Self {
        let file = |kind: &str| self.chain.file(name, kind).display().to_string();
        let args = [
            "--variant".to_string(),
            form.arg().to_string(),
            "--name".to_string(),
            server.to_string(),
            "--record".to_string(),
            file("events"),
            "--record-received".to_string(),
            file("record"),
            "--record-sent".to_string(),
            file("sent"),
            "--pid-file".to_string(),
            file("pid"),
        ];
        self.chain.add_proxy(name, Path::new(MCP_PROVIDER), &args);
        self.recorded.push(Recorded {
            name: name.to_string(),
            dir: self.chain.dir.clone(),
            kind: LinkKind::Proxy,
        });
        self
    }

    /// Appends a conductor in proxy mode (`run --proxy`) behind a wiretap, with its own chain
    /// of test-proxies `(name, dialect)`.
    pub fn nested(&mut self, name: &str, proxies: &[(&str, &str)]) -> &mut Self {
        let binaries = binaries!();
        let mut inner = TestChain::new(&binaries, &format!("{name}-inner"));
        inner.without_agent();
        for (proxy, dialect) in proxies {
            add_test_proxy(&mut inner, proxy, dialect);
            self.recorded.push(Recorded {
                name: proxy.to_string(),
                dir: inner.dir.clone(),
                kind: LinkKind::Proxy,
            });
        }
        let config = inner.write_config();
        let config = config.display().to_string();
        self.tap(
            name,
            &binaries.conductor,
            &["run", "--proxy", "--config", config.as_str()],
            true,
        );
        self.inner.push(inner);
        self
    }

    /// Appends any program as a proxy, behind a wiretap that records its link both ways.
    pub fn tapped(&mut self, name: &str, command: &Path, args: &[&str]) -> &mut Self {
        self.tap(name, command, args, false);
        self
    }

    fn tap(&mut self, name: &str, command: &Path, args: &[&str], conductor: bool) {
        let file = |kind: &str| self.chain.file(name, kind).display().to_string();
        let mut tap_args = vec![
            "--in".to_string(),
            file("in"),
            "--out".to_string(),
            file("out"),
            "--".to_string(),
            command.display().to_string(),
        ];
        tap_args.extend(args.iter().map(|a| a.to_string()));
        self.chain.add_proxy(name, Path::new(WIRETAP), &tap_args);
        self.tapped.push(Tapped {
            name: name.to_string(),
            conductor,
        });
    }

    pub fn launch(&self) -> Editor {
        self.chain.launch()
    }

    /// Ends the run (the editor closes its stdin), waits for the conductor and every fixture
    /// to be gone, and returns every link's recording with the conductor's exit status.
    pub fn finish(&self, editor: &mut Editor) -> (Vec<LinkRecord>, ExitStatus) {
        let fixtures = self.fixture_pids();
        editor.close_stdin();
        let status = editor.wait_exit();
        editor.drain();
        let remaining =
            processes::wait_until_gone(&fixtures, acp_conductor_tests::editor::patience());
        assert!(
            remaining.is_empty(),
            "fixtures still running: {remaining:?}"
        );
        (self.links(editor), status)
    }

    fn fixture_pids(&self) -> Vec<u32> {
        self.recorded
            .iter()
            .filter_map(|r| read_pid(&r.dir.join(format!("{}.pid", r.name))))
            .collect()
    }

    /// Every link's recording.
    fn links(&self, editor: &Editor) -> Vec<LinkRecord> {
        let lines = |direction| {
            editor
                .transcript
                .iter()
                .filter(|(d, _)| *d == direction)
                .flat_map(|(_, line)| line.lines().map(str::to_string).collect::<Vec<_>>())
                .collect()
        };
        let mut links = vec![LinkRecord::new(
            "editor",
            LinkKind::Editor,
            lines(Sent::Received),
            lines(Sent::Sent),
        )];
        for r in &self.recorded {
            let file = |kind: &str| read_lines(&r.dir.join(format!("{}.{kind}", r.name)));
            let name = match r.kind {
                LinkKind::Agent => r.name.clone(),
                kind => format!("{kind} {}", r.name),
            };
            links.push(LinkRecord::new(&name, r.kind, file("record"), file("sent")));
        }
        for tapped in &self.tapped {
            let name = &tapped.name;
            let to_proxy = read_lines(&self.chain.file(name, "in"));
            let from_proxy = read_lines(&self.chain.file(name, "out"));
            if tapped.conductor {
                links.push(LinkRecord::new(
                    &format!("parent of nested conductor {name}"),
                    LinkKind::Parent,
                    from_proxy.clone(),
                    to_proxy.clone(),
                ));
            }
            links.push(LinkRecord::new(
                &format!("proxy {name} (wiretapped)"),
                LinkKind::Proxy,
                to_proxy,
                from_proxy,
            ));
        }
        links.push(LinkRecord::new(
            "bridge shims",
            LinkKind::Shim,
            read_lines(&self.chain.file(AGENT, "shim")),
            Vec::new(),
        ));
        links
    }
}

/// `--record`, `--record-sent`, `--pid-file`, `--eof-file` for fixture `name` in `dir`.
fn fixture_args(dir: &Path, name: &str) -> Vec<String> {
    ["record", "sent", "pid", "eof"]
        .into_iter()
        .zip(["--record", "--record-sent", "--pid-file", "--eof-file"])
        .flat_map(|(kind, option)| {
            [
                option.to_string(),
                dir.join(format!("{name}.{kind}")).display().to_string(),
            ]
        })
        .collect()
}

fn add_test_proxy(chain: &mut TestChain, name: &str, dialect: &str) {
    let mut args = fixture_args(&chain.dir, name);
    args.extend(["--dialect", dialect, "--tag", name].map(str::to_string));
    let proxy = chain.binaries.proxy.clone();
    chain.add_proxy(name, &proxy, &args);
}

/// The lines of a recording; none when the file was never written.
fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
