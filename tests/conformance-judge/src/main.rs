//! The conformance judge's command line: reads a recording, writes a verdict per line the
//! conductor wrote, and exits 1 if the schema refused any. Knows no scenario and no conductor.

use std::io::{Read, Write};
use std::process::ExitCode;

use acp_conformance_judge::judge::{Judged, judge_link};
use acp_conformance_judge::legacy::ALLOW_LIST;
use acp_conformance_judge::{recording, verdicts};

const USAGE: &str = "\
usage: acp-conformance-judge [RECORDING]
       acp-conformance-judge --allow-list

Judges every line the conductor wrote in RECORDING (standard input when absent; JSON lines,
see src/recording.rs) with the official ACP schema crate's types. Standard output: one JSON
verdict per judged line. Standard error: the counts and every refused line.
--allow-list prints the names of the legacy forms excused from payload judging, one a line.

Exit status: 0 every line conforms, 1 the schema refused a line, 2 the recording or the
arguments could not be read.";

/// The schema refused a line.
const REFUSED: u8 = 1;
/// The recording or the arguments could not be read.
const UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["--allow-list"] => print_allow_list(),
        ["--help" | "-h"] => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [] => read_stdin().and_then(|text| judge(&text)),
        [path] if !path.starts_with('-') => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {path}: {e}"))
            .and_then(|text| judge(&text)),
        _ => Err(USAGE.to_string()),
    };
    match outcome {
        Ok(code) => code,
        Err(problem) => {
            eprintln!("acp-conformance-judge: {problem}");
            ExitCode::from(UNREADABLE)
        }
    }
}

fn read_stdin() -> Result<String, String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(text)
}

/// Judges the recording `text`: verdicts to stdout, counts and refusals to stderr.
fn judge(text: &str) -> Result<ExitCode, String> {
    let links = recording::read(text).map_err(|e| e.to_string())?;
    let judged: Vec<Judged> = links.iter().flat_map(judge_link).collect();
    let mut out = std::io::stdout().lock();
    for verdict in &judged {
        writeln!(out, "{}", verdicts::verdict_line(verdict))
            .map_err(|e| format!("cannot write a verdict: {e}"))?;
    }
    out.flush()
        .map_err(|e| format!("cannot write a verdict: {e}"))?;
    eprintln!("{}", verdicts::summary(&judged));
    if judged.iter().all(|j| j.verdict.is_ok()) {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "the schema refused these lines the conductor wrote:\n{}",
        verdicts::refusals(&judged)
    );
    Ok(ExitCode::from(REFUSED))
}

fn print_allow_list() -> Result<ExitCode, String> {
    let mut out = std::io::stdout().lock();
    for form in ALLOW_LIST {
        writeln!(out, "{}", form.name()).map_err(|e| format!("cannot write: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
