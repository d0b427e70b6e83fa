//! The conformance suite: sessions that exercise every path through the conductor, with every
//! line it writes on every link judged by the official ACP schema crate's types.
//!
//! Each scenario records what the conductor writes to the editor (the harness's stdout), to
//! each proxy and to the agent (the fixtures' `--record`), to and from components that record
//! nothing themselves (the `wiretap` fixture: a nested conductor, the SDK provider) and to the
//! bridge shims (what the agent reads from them), together with what each peer sent
//! (`--record-sent`, the harness's transcript), and hands it to the judge: a program of its own
//! workspace, `tests/conformance-judge`, which this suite builds and runs
//! (`conformance/judge.rs`). The schema judges; the conductor's routing stays byte-faithful.

mod conformance {
    pub mod chains;
    pub mod editor_client;
    pub mod full_session;
    pub mod judge;
    pub mod links;
    pub mod paths;
    pub mod report;

    mod mcp_forms;
    mod own_answers;
    mod refused_lines;
    mod topologies;
}
