//! `trace-tap`: runs a program between two pipes and logs every line that passes, each way,
//! with the time it passed; the trace viewer's tests put it around a conductor and around
//! each component to make a trace of a real chain (`acp_conductor_tests::trace_tap`).
//!
//! Usage: `trace-tap --log PATH --stdin-dir in|out -- PROGRAM ARGS...`. Each line is logged
//! as `{"us":<µs since the Unix epoch>,"dir":"in"|"out","line":"<the line>"}`; lines read on
//! stdin get `--stdin-dir`, lines the program writes the other one (so the taps around the
//! conductor and around a component both log from the conductor's side). A line is logged
//! before it is passed on, so that what one tap passed on and another received are logged in
//! that order. The program's start and exit are logged too, as `{"us":..,"event":"started"|
//! "exited","detail":".."}`. Otherwise like `wiretap`: byte for byte, stdin EOF closes the program's stdin,
//! the program dies with the tap, the exit status is the program's.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let usage = "usage: trace-tap --log PATH --stdin-dir in|out -- PROGRAM ARGS...";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").expect(usage);
    let (options, rest) = args.split_at(split);
    let value = |name: &str| {
        options
            .iter()
            .position(|o| o == name)
            .and_then(|i| options.get(i + 1))
            .cloned()
            .expect(usage)
    };
    let log_path = value("--log");
    let stdin_dir = value("--stdin-dir");
    let stdout_dir = match stdin_dir.as_str() {
        "in" => "out",
        "out" => "in",
        _ => panic!("{usage}"),
    };
    let (program, program_args) = rest[1..].split_first().expect(usage);

    let log = Arc::new(Mutex::new(
        File::options()
            .create(true)
            .append(true)
            .open(&log_path)
            .unwrap_or_else(|e| panic!("trace-tap: cannot open {log_path}: {e}")),
    ));
    let mut command = Command::new(program);
    command
        .args(program_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // SAFETY: prctl(2) only, between fork and exec, as std's pre_exec allows.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("trace-tap: cannot start {program}: {e}"));
    log_event(&log, "started", &format!("pid {}", child.id()));
    let child_stdin = child.stdin.take().expect("stdin is piped");
    let child_stdout = child.stdout.take().expect("stdout is piped");

    let stdin_log = log.clone();
    std::thread::spawn(move || {
        copy_lines(std::io::stdin().lock(), child_stdin, &stdin_log, &stdin_dir);
    });
    copy_lines(
        BufReader::new(child_stdout),
        std::io::stdout(),
        &log,
        stdout_dir,
    );
    let status = child.wait().expect("wait for the tapped program");
    log_event(&log, "exited", &status.to_string());
    std::process::exit(status.code().unwrap_or(1));
}

fn now_us() -> u64 {
    let us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros();
    u64::try_from(us).expect("µs fit in u64")
}

fn log_event(log: &Mutex<File>, event: &str, detail: &str) {
    let entry = serde_json::json!({ "us": now_us(), "event": event, "detail": detail });
    let mut log = log.lock().expect("log lock");
    let _ = writeln!(log, "{entry}");
}

fn copy_lines(mut from: impl BufRead, mut to: impl Write, log: &Mutex<File>, dir: &str) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let entry = serde_json::json!({ "us": now_us(), "dir": dir, "line": text });
        {
            let mut log = log.lock().expect("log lock");
            let _ = writeln!(log, "{entry}");
        }
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}
