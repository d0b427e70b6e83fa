//! A soak: many messages through three proxies while proxies are killed at random, under
//! `bypass` and under `restart`, or while the configuration is reloaded every few hundred
//! messages (a proxy replaced each time, another removed or added every third time). Every
//! request gets exactly one response, no process is left behind, and the conductor's memory
//! stays flat.
//!
//! `SOAK_MESSAGES` sets how many messages cross the chain (default 30,000; the figures in
//! docs/failures.md are from 100,000); `SOAK_SEED` replays a run (the seed is printed).

use std::collections::{HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use acp_conductor_tests::editor::{Editor, prompt_params};
use acp_conductor_tests::processes::{descendants, wait_until_gone};
use acp_conductor_tests::{TestChain, binaries};

/// Chunks the agent streams per prompt: each prompt is `UPDATES + 2` messages.
const UPDATES: usize = 8;
/// Prompts in flight at once.
const WINDOW: u64 = 16;
const KILLS: usize = 8;
/// Under reloads: prompts between two reloads (each prompt is `UPDATES + 2` messages).
const PROMPTS_PER_RELOAD: u64 = 30;
const PROXIES: [&str; 3] = ["p1", "p2", "p3"];

/// xorshift64*: enough randomness to pick victims and moments, replayable from its seed.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Resident and peak memory of `pid`, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What happens to the chain while the messages cross it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Disturbance {
    /// Proxies are killed at random moments.
    Kills,
    /// The configuration is edited and SIGHUP sent every [`PROMPTS_PER_RELOAD`] prompts.
    Reloads,
}

fn soak(label: &str, policy: &[(&str, &str)], disturbance: Disturbance) {
    let messages = setting("SOAK_MESSAGES", 30_000);
    let seed = setting(
        "SOAK_SEED",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1,
    );
    eprintln!("{label}: {messages} messages, SOAK_SEED={seed}");
    let mut random = Random(seed);
    let prompts = messages / (UPDATES as u64 + 2);

    let binaries = binaries!();
    let mut chain = TestChain::with_test_proxies(&binaries, label, PROXIES.len());
    chain.agent_args(&["--updates", &UPDATES.to_string()]);
    for proxy in &mut chain.proxies {
        for (key, value) in policy {
            proxy.setting(key, value);
        }
    }
    let mut editor = chain.launch();
    editor.initialize();
    let session = editor.new_session();
    let conductor = editor.pid();

    // Kill moments, as prompt numbers, spread at random over the run.
    let kills = match disturbance {
        Disturbance::Kills => KILLS,
        Disturbance::Reloads => 0,
    };
    let mut kill_at: Vec<u64> = (0..kills)
        .map(|_| prompts / 10 + random.below(prompts * 8 / 10))
        .collect();
    // Reloads asked for, and taken effect; the next is asked once the last took effect.
    let (mut reloads, mut reloaded) = (0u64, 0u64);
    kill_at.sort_unstable();
    let mut seen_pids: HashSet<u32> = chain.fixture_pids().into_iter().collect();
    let mut answers: HashMap<u64, u32> = HashMap::new();
    let (mut errors, mut notifications) = (0u64, 0u64);
    let mut memory = Vec::new();
    let first_id = 100;
    let (mut sent, mut answered) = (0u64, 0u64);
    while answered < prompts {
        while sent < prompts && sent - answered < WINDOW {
            let id = first_id + sent;
            let line = acp_conductor_tests::jsonrpc::request_line(
                &id.to_string(),
                "session/prompt",
                Some(&prompt_params(&session, &format!("soak {id}")).to_string()),
            );
            editor.send_line(&line);
            sent += 1;
            while kill_at.first().is_some_and(|&at| at < sent) {
                kill_at.remove(0);
                kill_a_proxy(&chain, &mut random, &mut seen_pids);
            }
            if disturbance == Disturbance::Reloads
                && sent.is_multiple_of(PROMPTS_PER_RELOAD)
                && reloaded == reloads
            {
                reloads += 1;
                edit_and_reload(&mut chain, &editor, reloads, &mut seen_pids);
            }
            if sent % (prompts / 10).max(1) == 0 {
                memory.push(memory_kib(conductor));
            }
        }
        let message = editor.recv();
        match (message.get("method"), message.get("id")) {
            (None, Some(id)) => {
                let id = id.as_u64().expect("the ids we sent are numbers");
                *answers.entry(id).or_default() += 1;
                if message.get("error").is_some() {
                    assert_eq!(message["error"]["code"], -32001, "{message}");
                    errors += 1;
                }
                answered += 1;
            }
            (Some(method), None) => {
                if disturbance == Disturbance::Reloads {
                    assert_ne!(method, "_acp-conductor/config_rejected", "{message}");
                    if method == "_acp-conductor/config_reloaded" {
                        reloaded += 1;
                    }
                }
                notifications += 1
            }
            _ => panic!("unexpected message {message}"),
        }
    }
    collect_pids(&chain, &mut seen_pids);
    seen_pids.extend(descendants(conductor));
    if disturbance == Disturbance::Reloads {
        assert_eq!(errors, 0, "a drained instance answers what it was sent");
        assert!(
            reloads >= prompts / PROMPTS_PER_RELOAD / 2,
            "{reloads} reloads"
        );
        eprintln!("{label}: {reloads} reloads");
    }

    // Exactly one response per request, and none for anything else.
    assert_eq!(answers.len() as u64, prompts);
    for id in first_id..first_id + prompts {
        assert_eq!(answers.get(&id), Some(&1), "responses to request {id}");
    }
    // The chain still serves.
    let last = editor.prompt(&session, "after the soak");
    assert!(last.response.get("result").is_some(), "{}", last.response);
    memory.push(memory_kib(conductor));
    editor.close_stdin();
    let status = editor.wait_exit();
    assert_eq!(status.code(), Some(0), "{}", editor.stderr());
    let pids: Vec<u32> = seen_pids.into_iter().collect();
    let left = wait_until_gone(&pids, acp_conductor_tests::editor::patience());
    assert!(left.is_empty(), "processes left behind: {left:?}");

    let rss: Vec<u64> = memory.iter().map(|(rss, _)| rss / 1024).collect();
    let peak = memory
        .iter()
        .map(|(_, hwm)| hwm)
        .max()
        .copied()
        .unwrap_or(0);
    eprintln!(
        "{label}: {prompts} prompts ({} messages), {errors} answered with an error, \
         {notifications} notifications, {} processes seen; conductor VmRSS MiB at each tenth: \
         {rss:?}, VmHWM {} KiB",
        prompts * (UPDATES as u64 + 2),
        pids.len(),
        peak
    );
    // Flat: after the first tenth, the resident set does not keep growing.
    let settled = rss[1.min(rss.len() - 1)];
    let last = *rss.last().unwrap();
    assert!(
        last <= settled + 4,
        "conductor memory grew from {settled} MiB to {last} MiB: {rss:?}"
    );
    report_stderr(&editor);
}

/// Replaces `p2` (another argument each time); every third time removes `p3`, or adds it
/// back; then SIGHUP. The pids of the instances it ends are recorded.
fn edit_and_reload(chain: &mut TestChain, editor: &Editor, round: u64, seen: &mut HashSet<u32>) {
    collect_pids(chain, seen);
    let p2 = chain
        .proxies
        .iter_mut()
        .find(|p| p.name == "p2")
        .expect("p2 stays");
    p2.args.truncate(p2.args.len().min(BASE_ARGS));
    if p2.args.len() == BASE_ARGS {
        p2.args.extend(["--tag".to_string(), format!("p2-{round}")]);
    }
    if round.is_multiple_of(3) {
        match chain.proxies.iter().position(|p| p.name == "p3") {
            Some(index) => {
                chain.proxies.remove(index);
            }
            None => {
                chain.add_test_proxy("p3");
            }
        }
    }
    chain.write_config();
    editor.signal(libc::SIGHUP);
}

/// The arguments `add_test_proxy` gives a test-proxy (record, pid file, eof file, init
/// response and tag): what follows is the reload's own.
const BASE_ARGS: usize = 10;

/// Kills a proxy chosen at random, recording the pids seen (a bypassed proxy is already gone
/// and the kill does nothing).
fn kill_a_proxy(chain: &TestChain, random: &mut Random, seen: &mut HashSet<u32>) {
    collect_pids(chain, seen);
    let name = PROXIES[random.below(PROXIES.len() as u64) as usize];
    let pid = chain.pid(name);
    // SAFETY: sending a signal has no memory effects.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
}

fn collect_pids(chain: &TestChain, seen: &mut HashSet<u32>) {
    for name in chain.fixture_names() {
        seen.insert(chain.pid(name));
    }
}

fn report_stderr(editor: &Editor) {
    let stderr = editor.stderr();
    let failures = stderr
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("proxy `"))
        .count();
    eprintln!("failures logged: {failures}");
}

#[test]
fn soak_under_bypass_answers_every_request_once_and_leaves_nothing_behind() {
    soak(
        "soak-bypass",
        &[("on_failure", "\"bypass\"")],
        Disturbance::Kills,
    );
}

#[test]
fn soak_under_restart_answers_every_request_once_and_leaves_nothing_behind() {
    soak(
        "soak-restart",
        &[
            ("on_failure", "\"restart\""),
            ("restart_then", "\"bypass\""),
        ],
        Disturbance::Kills,
    );
}

#[test]
fn soak_with_a_reload_every_few_hundred_messages_answers_every_request_once() {
    soak("soak-reload", &[], Disturbance::Reloads);
}
