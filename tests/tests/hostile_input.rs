//! Hostile or broken input on every link, driving the real conductor: each kind of bad line
//! from the editor and, where it applies, from the agent (the test-agent writes the bytes the
//! test chooses). Each gets the exact JSON-RPC error its sender can match, or is skipped with
//! a log line and counted in the summary the conductor logs when the run ends; after each, the
//! chain still serves a normal prompt.

mod hostile_input {
    pub mod harness;

    mod envelopes;
    mod framing;
    mod noisy_peers;
    mod out_of_turn;
}
