//! Turns scenario figures into markdown: the figures table, the targets with met / not met,
//! and the generated section of `docs/performance.md`. Must not run or time anything.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::measure::{Cost, ScenarioFigures, Settings, Target};

pub const SECTION_BEGIN: &str =
    "<!-- acp-bench:figures:begin (written by `acp-bench --write`; edit outside these markers) -->";
pub const SECTION_END: &str = "<!-- acp-bench:figures:end -->";

/// The targets for this 2-core machine.
pub const SMALL_PROMPT_ADDED_MAX: Duration = Duration::from_micros(30);
pub const STREAMING_MIN_NO_PROXY: f64 = 300_000.0;
pub const STREAMING_MIN_THREE_PROXIES: f64 = 100_000.0;
pub const BIG_PROMPT_ADDED_PER_HOP_MAX: Duration = Duration::from_millis(1);
pub const IDLE_PEAK_RSS_MAX_KIB: u64 = 4 * 1024;

/// Where and how the figures were taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunContext {
    pub command: String,
    pub machine: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute averages when the run began: anything else
    /// running on the machine shows in the figures.
    pub load_at_start: String,
    pub date: String,
    pub conductor_version: String,
    pub official_version: Option<String>,
}

/// One target: what was asked, what was measured, and whether that meets it (`None`
/// when it could not be measured).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetCheck {
    pub target: String,
    pub measured: String,
    pub met: Option<bool>,
}

fn find(figures: &[ScenarioFigures], target: Target) -> Option<&ScenarioFigures> {
    figures.iter().find(|f| f.target == target)
}

/// Evaluates the targets against acp-conductor's figures.
pub fn check_targets(figures: &[ScenarioFigures]) -> Vec<TargetCheck> {
    let direct = find(figures, Target::Direct);
    let ours = |proxies| find(figures, Target::Conductor { proxies });
    let mut checks = Vec::new();

    let added = match (ours(0).and_then(|f| f.small), direct.and_then(|f| f.small)) {
        (Some(chain), Some(direct)) => Some(signed_micros(chain.p50, direct.p50)),
        _ => None,
    };
    checks.push(TargetCheck {
        target: format!(
            "small prompt p50 with 0 proxies within {} of direct",
            duration(SMALL_PROMPT_ADDED_MAX)
        ),
        measured: added.map_or_else(unmeasured, |us| format!("{} added", signed_us(us))),
        met: added.map(|us| us <= SMALL_PROMPT_ADDED_MAX.as_secs_f64() * 1e6),
    });

    for (proxies, min) in [
        (0, STREAMING_MIN_NO_PROXY),
        (3, STREAMING_MIN_THREE_PROXIES),
    ] {
        let rate = ours(proxies)
            .and_then(|f| f.streaming)
            .map(|t| t.per_second());
        checks.push(TargetCheck {
            target: format!(
                "streaming with {proxies} proxies at least {} messages/s",
                rate_text(min)
            ),
            measured: rate.map_or_else(unmeasured, |r| format!("{} messages/s", rate_text(r))),
            met: rate.map(|r| r >= min),
        });
    }

    let direct_big = direct.and_then(|f| f.big);
    for f in figures
        .iter()
        .filter(|f| matches!(f.target, Target::Conductor { .. }))
    {
        let per_hop = match (f.big, direct_big) {
            (Some(chain), Some(direct)) => {
                Some(signed_micros(chain.p50, direct.p50) / f.target.hops() as f64)
            }
            _ => None,
        };
        checks.push(TargetCheck {
            target: format!(
                "1 MiB prompt, {}: at most {} added per hop ({})",
                proxies_text(f.target),
                duration(BIG_PROMPT_ADDED_PER_HOP_MAX),
                match f.target.hops() {
                    1 => "1 hop".to_owned(),
                    n => format!("{n} hops"),
                }
            ),
            measured: per_hop.map_or_else(unmeasured, |us| format!("{} per hop", signed_us(us))),
            met: per_hop.map(|us| us <= BIG_PROMPT_ADDED_PER_HOP_MAX.as_secs_f64() * 1e6),
        });
    }

    for f in figures
        .iter()
        .filter(|f| matches!(f.target, Target::Conductor { .. }))
    {
        let peak = f.idle_memory.map(|m| m.peak_kib);
        checks.push(TargetCheck {
            target: format!(
                "conductor peak RSS idle after initialize, {}: at most {}",
                proxies_text(f.target),
                mib(IDLE_PEAK_RSS_MAX_KIB)
            ),
            measured: peak.map_or_else(unmeasured, mib),
            met: peak.map(|kib| kib <= IDLE_PEAK_RSS_MAX_KIB),
        });
    }
    checks
}

fn unmeasured() -> String {
    "not measured".to_owned()
}

fn proxies_text(target: Target) -> String {
    match target {
        Target::Conductor { proxies } | Target::Official { proxies } => {
            if proxies == 1 {
                "1 proxy".to_owned()
            } else {
                format!("{proxies} proxies")
            }
        }
        Target::Direct => "direct".to_owned(),
    }
}

fn signed_micros(a: Duration, b: Duration) -> f64 {
    (a.as_secs_f64() - b.as_secs_f64()) * 1e6
}

/// A duration for people: µs below a millisecond, ms below a second.
pub fn duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A signed difference in microseconds, in the unit `duration` would pick.
pub fn signed_us(us: f64) -> String {
    let sign = if us < 0.0 { "−" } else { "+" };
    format!(
        "{sign}{}",
        duration(Duration::from_secs_f64(us.abs() / 1e6))
    )
}

pub fn rate_text(per_second: f64) -> String {
    if per_second >= 100_000.0 {
        format!("{:.0}k", per_second / 1e3)
    } else if per_second >= 10_000.0 {
        format!("{:.1}k", per_second / 1e3)
    } else {
        format!("{per_second:.0}")
    }
}

pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The figures table: one column per target, one row per figure.
pub fn figures_table(figures: &[ScenarioFigures], settings: &Settings) -> String {
    let direct_big = find(figures, Target::Direct).and_then(|f| f.big);
    let dash = || "–".to_owned();
    type Row<'a> = (String, Box<dyn Fn(&ScenarioFigures) -> String + 'a>);
    let rows: Vec<Row<'_>> = vec![
        (
            "initialize (spawn → response), p50".to_owned(),
            Box::new(move |f| f.initialize.map_or_else(dash, |s| duration(s.p50))),
        ),
        (
            "small prompt round trip, p50".to_owned(),
            Box::new(move |f| f.small.map_or_else(dash, |s| duration(s.p50))),
        ),
        (
            "small prompt round trip, p99".to_owned(),
            Box::new(move |f| f.small.map_or_else(dash, |s| duration(s.p99))),
        ),
        (
            format!(
                "streaming ({} × {} B updates per prompt), messages/s",
                settings.stream.updates, settings.stream.bytes
            ),
            Box::new(move |f| f.streaming.map_or_else(dash, |t| rate_text(t.per_second()))),
        ),
        (
            format!("{} prompt round trip, p50", size_text(settings.big_bytes)),
            Box::new(move |f| f.big.map_or_else(dash, |s| duration(s.p50))),
        ),
        (
            format!(
                "{} prompt, added per hop vs direct",
                size_text(settings.big_bytes)
            ),
            Box::new(move |f| match (f.big, direct_big, f.target.hops()) {
                (Some(chain), Some(direct), hops) if hops > 0 => {
                    signed_us(signed_micros(chain.p50, direct.p50) / hops as f64)
                }
                _ => dash(),
            }),
        ),
        (
            "RSS idle after initialize: VmRSS / VmHWM".to_owned(),
            Box::new(move |f| {
                f.idle_memory.map_or_else(dash, |m| {
                    format!("{} / {}", mib(m.rss_kib), mib(m.peak_kib))
                })
            }),
        ),
        (
            "VmHWM after streaming".to_owned(),
            Box::new(move |f| f.peak_after_streaming_kib.map_or_else(dash, mib)),
        ),
        (
            format!("VmHWM after {} prompts", size_text(settings.big_bytes)),
            Box::new(move |f| f.peak_after_big_kib.map_or_else(dash, mib)),
        ),
        (
            "CPU per small prompt: measured process + its children".to_owned(),
            Box::new(move |f| f.small_cost.map_or_else(dash, cpu_split)),
        ),
        (
            "context switches per small prompt, measured process".to_owned(),
            Box::new(move |f| {
                f.small_cost
                    .map_or_else(dash, |c| format!("{:.1}", c.switches))
            }),
        ),
        (
            "CPU per streamed message: measured process + its children".to_owned(),
            Box::new(move |f| f.streaming_cost.map_or_else(dash, cpu_split)),
        ),
        (
            format!(
                "CPU per {} prompt: measured process + its children",
                size_text(settings.big_bytes)
            ),
            Box::new(move |f| f.big_cost.map_or_else(dash, cpu_split)),
        ),
        (
            "samples: starts / small / streamed messages / big".to_owned(),
            Box::new(move |f| {
                let n = |s: Option<crate::stats::LatencySummary>| s.map_or(0, |s| s.samples);
                format!(
                    "{} / {} / {} / {}",
                    n(f.initialize),
                    n(f.small),
                    f.streaming.map_or(0, |t| t.messages),
                    n(f.big)
                )
            }),
        ),
    ];
    let mut out = String::from("| |");
    for f in figures {
        out.push_str(&format!(" {} |", f.target.label()));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(figures.len()));
    out.push('\n');
    for (name, cell) in &rows {
        out.push_str(&format!("| {name} |"));
        for f in figures {
            out.push_str(&format!(" {} |", cell(f)));
        }
        out.push('\n');
    }
    out
}

fn cpu_split(cost: Cost) -> String {
    format!("{} + {}", duration(cost.cpu), duration(cost.children_cpu))
}

fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

pub fn targets_table(checks: &[TargetCheck]) -> String {
    let mut out = String::from("| target | measured | |\n|---|---|---|\n");
    for c in checks {
        let verdict = match c.met {
            Some(true) => "met",
            Some(false) => "**not met**",
            None => "not measured",
        };
        out.push_str(&format!("| {} | {} | {verdict} |\n", c.target, c.measured));
    }
    out
}

/// The generated section of `docs/performance.md`, markers included.
pub fn section(context: &RunContext, figures: &[ScenarioFigures], settings: &Settings) -> String {
    let mut out = format!("{SECTION_BEGIN}\n\n");
    out.push_str(&format!("Command: `{}`  \n", context.command));
    out.push_str(&format!(
        "Machine: {}; load average at start {}  \n",
        context.machine, context.load_at_start
    ));
    out.push_str(&format!("Date: {} (UTC)  \n", context.date));
    out.push_str(&format!("Conductor: {}  \n", context.conductor_version));
    out.push_str(&format!(
        "Official conductor: {}\n\n",
        context
            .official_version
            .as_deref()
            .unwrap_or("not installed, not measured")
    ));
    out.push_str(&figures_table(figures, settings));
    out.push_str("\nTargets (acp-conductor):\n\n");
    out.push_str(&targets_table(&check_targets(figures)));
    let errors: Vec<String> = figures
        .iter()
        .filter_map(|f| {
            f.error
                .as_ref()
                .map(|e| format!("- {}: {e}", f.target.label()))
        })
        .collect();
    if !errors.is_empty() {
        out.push_str("\nFailed measurements:\n\n");
        out.push_str(&errors.join("\n"));
        out.push('\n');
    }
    out.push_str(&format!("\n{SECTION_END}\n"));
    out
}

/// `document` with its generated section replaced by `section` (appended when it has none;
/// a new document when there is none).
pub fn splice_section(document: Option<&str>, section: &str) -> String {
    let Some(document) = document else {
        return format!("# Performance\n\n{section}");
    };
    let begin = document.find(SECTION_BEGIN);
    let end = document.find(SECTION_END).map(|i| i + SECTION_END.len());
    match (begin, end) {
        (Some(begin), Some(end)) if begin < end => {
            let rest = document[end..]
                .strip_prefix('\n')
                .unwrap_or(&document[end..]);
            format!("{}{section}{rest}", &document[..begin])
        }
        _ => {
            let separator = if document.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{document}{separator}{section}")
        }
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The CPU model and core count from `/proc/cpuinfo`, and the kernel release.
pub fn machine_description() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (model, cores) = cpu_of(&cpuinfo);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = if cores > 0 {
        cores
    } else {
        std::thread::available_parallelism().map_or(0, |n| n.get())
    };
    format!(
        "{}, {cores} cores (`/proc/cpuinfo`), Linux {}",
        model.unwrap_or_else(|| "unknown CPU".to_owned()),
        kernel.trim()
    )
}

/// The 1, 5 and 15 minute load averages, as `/proc/loadavg` writes them.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    if fields.is_empty() {
        "unknown".to_owned()
    } else {
        fields.join(" ")
    }
}

/// The first `model name` and the number of `processor` entries.
pub fn cpu_of(cpuinfo: &str) -> (Option<String>, usize) {
    let field = |line: &str, name: &str| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_owned())
    };
    let model = cpuinfo.lines().find_map(|l| field(l, "model name"));
    let cores = cpuinfo
        .lines()
        .filter(|l| field(l, "processor").is_some())
        .count();
    (model, cores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc_status::Memory;
    use crate::stats::{LatencySummary, Throughput};

    fn latency(p50_us: u64) -> Option<LatencySummary> {
        Some(LatencySummary {
            samples: 10,
            p50: Duration::from_micros(p50_us),
            p99: Duration::from_micros(p50_us * 2),
        })
    }

    fn figures(
        target: Target,
        small_us: u64,
        msgs_per_s: u64,
        big_us: u64,
        idle_peak_kib: u64,
    ) -> ScenarioFigures {
        ScenarioFigures {
            target,
            initialize: latency(1_000),
            small: latency(small_us),
            streaming: Some(Throughput {
                messages: msgs_per_s,
                elapsed: Duration::from_secs(1),
            }),
            big: latency(big_us),
            idle_memory: Some(Memory {
                rss_kib: idle_peak_kib - 100,
                peak_kib: idle_peak_kib,
            }),
            peak_after_streaming_kib: Some(idle_peak_kib + 200),
            peak_after_big_kib: Some(idle_peak_kib + 3000),
            small_cost: None,
            streaming_cost: None,
            big_cost: None,
            error: None,
        }
    }

    fn sample_run() -> Vec<ScenarioFigures> {
        vec![
            figures(Target::Direct, 20, 900_000, 2_000, 2_000),
            figures(Target::Conductor { proxies: 0 }, 45, 400_000, 2_600, 3_000),
            figures(Target::Conductor { proxies: 3 }, 150, 90_000, 7_000, 4_200),
        ]
    }

    #[test]
    fn targets_are_judged_against_direct() {
        let checks = check_targets(&sample_run());
        let verdicts: Vec<(&str, Option<bool>)> = checks
            .iter()
            .map(|c| (c.measured.as_str(), c.met))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("+25.0 µs added", Some(true)),
                ("400k messages/s", Some(true)),
                ("90.0k messages/s", Some(false)),
                ("+600.0 µs per hop", Some(true)),
                ("+1.25 ms per hop", Some(false)),
                ("2.9 MiB", Some(true)),
                ("4.1 MiB", Some(false)),
            ]
        );
    }

    #[test]
    fn missing_figures_are_not_measured_rather_than_failed() {
        let mut run = sample_run();
        run.remove(0);
        let checks = check_targets(&run);
        assert_eq!(checks[0].met, None);
        assert_eq!(checks[0].measured, "not measured");
        assert_eq!(checks[1].met, Some(true));
    }

    #[test]
    fn table_has_a_column_per_target() {
        let table = figures_table(&sample_run(), &Settings::default());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "| | agent direct | acp-conductor, 0 proxies | acp-conductor, 3 proxies |"
        );
        assert_eq!(lines[1], "|---|---:|---:|---:|");
        assert!(lines.contains(&"| small prompt round trip, p50 | 20.0 µs | 45.0 µs | 150.0 µs |"));
        assert!(
            lines.contains(&"| 1 MiB prompt, added per hop vs direct | – | +600.0 µs | +1.25 ms |")
        );
        assert!(lines.iter().all(|l| l.matches('|').count() == 5));
    }

    #[test]
    fn section_is_replaced_in_place() {
        let old = format!(
            "# Performance\n\nIntro.\n\n{SECTION_BEGIN}\nold figures\n{SECTION_END}\n\n## Notes\n"
        );
        let new = format!("{SECTION_BEGIN}\nnew figures\n{SECTION_END}\n");
        assert_eq!(
            splice_section(Some(&old), &new),
            format!("# Performance\n\nIntro.\n\n{new}\n## Notes\n")
        );
        assert_eq!(splice_section(Some("# P\n"), &new), format!("# P\n\n{new}"));
        assert_eq!(
            splice_section(None, &new),
            format!("# Performance\n\n{new}")
        );
    }

    #[test]
    fn section_names_command_machine_and_failures() {
        let mut run = sample_run();
        run[2].error = Some("it closed its output".to_owned());
        let context = RunContext {
            command: "target/release/acp-bench".to_owned(),
            machine: "AMD EPYC, 2 cores".to_owned(),
            load_at_start: "0.01 0.05 0.10".to_owned(),
            date: "2025-01-02".to_owned(),
            conductor_version: "acp-conductor 0.1.0".to_owned(),
            official_version: None,
        };
        let text = section(&context, &run, &Settings::default());
        assert!(text.starts_with(SECTION_BEGIN) && text.ends_with(&format!("{SECTION_END}\n")));
        assert!(text.contains("Command: `target/release/acp-bench`"));
        assert!(text.contains("Official conductor: not installed, not measured"));
        assert!(text.contains("- acp-conductor, 3 proxies: it closed its output"));
    }

    #[test]
    fn formats_figures_for_people() {
        assert_eq!(duration(Duration::from_nanos(23_456)), "23.5 µs");
        assert_eq!(duration(Duration::from_micros(4_200)), "4.20 ms");
        assert_eq!(duration(Duration::from_millis(1_500)), "1.50 s");
        assert_eq!(signed_us(-2.0), "−2.0 µs");
        assert_eq!(rate_text(15_700.0), "15.7k");
        assert_eq!(rate_text(312_345.0), "312k");
        assert_eq!(rate_text(950.4), "950");
        assert_eq!(mib(4096), "4.0 MiB");
        assert_eq!(size_text(1 << 20), "1 MiB");
        assert_eq!(size_text(1000), "1000 B");
    }

    #[test]
    fn dates_and_cpus() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        let cpuinfo =
            "processor\t: 0\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n";
        assert_eq!(cpu_of(cpuinfo), (Some("AMD EPYC".to_owned()), 2));
    }
}
