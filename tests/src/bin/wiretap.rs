//! `wiretap`: runs a program between two pipes and records every line that passes, each way;
//! the conformance suite puts it around components that record nothing themselves.
//!
//! Usage: `wiretap --in PATH --out PATH -- PROGRAM ARGS...`. Lines read on stdin are appended
//! to the `--in` file and written to the program's stdin; lines the program writes on stdout
//! are appended to the `--out` file and written to stdout; its stderr is inherited. Every line
//! is passed on byte for byte, as soon as it is whole. When stdin reaches EOF the program's
//! stdin is closed; when the program closes its stdout, `wiretap` waits for it and exits with
//! its status. The program dies with `wiretap` (`PR_SET_PDEATHSIG`), and shares its process
//! group, so a signal to the group reaches both.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

fn main() {
    let (in_path, out_path, program, args) = parse_args(std::env::args().skip(1).collect());
    let mut command = Command::new(&program);
    command
        .args(&args)
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
        .unwrap_or_else(|e| panic!("wiretap: cannot start {program}: {e}"));
    let child_stdin = child.stdin.take().expect("stdin is piped");
    let child_stdout = child.stdout.take().expect("stdout is piped");

    std::thread::spawn(move || {
        copy_lines(std::io::stdin().lock(), child_stdin, &in_path);
    });
    copy_lines(BufReader::new(child_stdout), std::io::stdout(), &out_path);
    let status = child.wait().expect("wait for the tapped program");
    std::process::exit(status.code().unwrap_or(1));
}

/// `--in PATH --out PATH -- PROGRAM ARGS...`
fn parse_args(args: Vec<String>) -> (String, String, String, Vec<String>) {
    let usage = "usage: wiretap --in PATH --out PATH -- PROGRAM ARGS...";
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
    let mut rest = rest[1..].iter().cloned();
    let program = rest.next().expect(usage);
    (value("--in"), value("--out"), program, rest.collect())
}

/// Copies whole lines from `from` to `to`, appending each (without its newline) to the file
/// at `record` first; returns at EOF on `from` or when `to` is gone, dropping `to`.
fn copy_lines(mut from: impl BufRead, mut to: impl Write, record: &str) {
    let mut recording = File::options()
        .create(true)
        .append(true)
        .open(record)
        .unwrap_or_else(|e| panic!("wiretap: cannot open {record}: {e}"));
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut recorded = line.clone();
        if recorded.last() != Some(&b'\n') {
            recorded.push(b'\n');
        }
        recording
            .write_all(&recorded)
            .and_then(|()| recording.flush())
            .expect("write the wiretap recording");
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}
