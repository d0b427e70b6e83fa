//! The `acp-bench` command line.
//! Must not know how the options are used beyond their defaults.

use std::path::PathBuf;
use std::time::Duration;

use crate::measure::Settings;
use crate::messages::StreamSpec;

pub const USAGE: &str = "\
usage: acp-bench [OPTIONS]

Measures the bench agent called directly, through acp-conductor with 0, 1 and 3 bench
proxies, and through the official conductor when it is installed. Prints a markdown table.

Programs (default: next to this executable; the official conductor from PATH):
  --conductor PATH       acp-conductor binary
  --agent PATH           bench-agent binary
  --proxy PATH           bench-proxy binary
  --official PATH        official conductor (agent-client-protocol-conductor) binary
  --no-official          do not look for the official conductor

What to run:
  --proxies LIST         proxy counts to measure, comma-separated (default 0,1,3;
                         empty: the agent alone)
  --starts N             starts timed for initialize (default 20)
  --small N              small prompt round trips (default 20000)
  --small-warmup N       (default 2000)
  --stream-prompts N     streaming prompts (default 2000)
  --stream-warmup N      (default 100)
  --updates N            updates per streaming prompt (default 100)
  --update-bytes N       text bytes per update (default 100)
  --big N                big prompt round trips (default 50)
  --big-warmup N         (default 5)
  --big-bytes N          text bytes of the big prompt (default 1048576)
  --time-limit SECS      longest any one measurement loop runs (default 8)
  --quick                tiny counts, to check that everything runs

Tracing:
  --trace-dir DIR        run acp-conductor with `--trace DIR/conductor-N.jsonl` (the cost
                         of tracing; the trace's records and drops are reported on stderr)

Output:
  --write FILE           also replace the figures section of FILE (e.g. docs/performance.md)
  -h, --help             this text
";

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub conductor: Option<PathBuf>,
    pub agent: Option<PathBuf>,
    pub proxy: Option<PathBuf>,
    pub official: Official,
    pub proxies: Vec<usize>,
    pub settings: Settings,
    pub write: Option<PathBuf>,
    pub trace_dir: Option<PathBuf>,
    pub help: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Official {
    /// Look for it on PATH.
    Search,
    At(PathBuf),
    Skip,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            conductor: None,
            agent: None,
            proxy: None,
            official: Official::Search,
            proxies: vec![0, 1, 3],
            settings: Settings::default(),
            write: None,
            trace_dir: None,
            help: false,
        }
    }
}

/// Counts small enough that a whole run takes a few seconds.
fn quick(settings: &mut Settings) {
    *settings = Settings {
        starts: 2,
        small: 200,
        small_warmup: 20,
        stream_prompts: 20,
        stream_warmup: 2,
        big: 3,
        big_warmup: 1,
        ..settings.clone()
    };
}

/// Why the command line cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("{0} needs a value")]
    NeedsValue(String),
    #[error("{flag}: `{text}` is not a valid number")]
    NotANumber { flag: String, text: String },
    #[error("{flag}: {source}")]
    NotADuration {
        flag: String,
        source: std::time::TryFromFloatSecsError,
    },
    #[error("unknown option `{0}`")]
    Unknown(String),
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, OptionError> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| OptionError::NeedsValue(flag.clone()))
        };
        let s = &mut options.settings;
        match flag.as_str() {
            "-h" | "--help" => options.help = true,
            "--conductor" => options.conductor = Some(value()?.into()),
            "--agent" => options.agent = Some(value()?.into()),
            "--proxy" => options.proxy = Some(value()?.into()),
            "--official" => options.official = Official::At(value()?.into()),
            "--no-official" => options.official = Official::Skip,
            "--proxies" => options.proxies = list(&flag, &value()?)?,
            "--starts" => s.starts = number(&flag, &value()?)?,
            "--small" => s.small = number(&flag, &value()?)?,
            "--small-warmup" => s.small_warmup = number(&flag, &value()?)?,
            "--stream-prompts" => s.stream_prompts = number(&flag, &value()?)?,
            "--stream-warmup" => s.stream_warmup = number(&flag, &value()?)?,
            "--updates" => {
                s.stream = StreamSpec {
                    updates: number(&flag, &value()?)?,
                    ..s.stream
                }
            }
            "--update-bytes" => {
                s.stream = StreamSpec {
                    bytes: number(&flag, &value()?)?,
                    ..s.stream
                }
            }
            "--big" => s.big = number(&flag, &value()?)?,
            "--big-warmup" => s.big_warmup = number(&flag, &value()?)?,
            "--big-bytes" => s.big_bytes = number(&flag, &value()?)?,
            "--time-limit" => {
                let secs: f64 = number(&flag, &value()?)?;
                s.time_limit = Duration::try_from_secs_f64(secs).map_err(|source| {
                    OptionError::NotADuration {
                        flag: flag.clone(),
                        source,
                    }
                })?;
            }
            "--quick" => quick(s),
            "--write" => options.write = Some(value()?.into()),
            "--trace-dir" => options.trace_dir = Some(value()?.into()),
            other => return Err(OptionError::Unknown(other.to_owned())),
        }
    }
    Ok(options)
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, OptionError> {
    text.parse().map_err(|_| OptionError::NotANumber {
        flag: flag.to_owned(),
        text: text.to_owned(),
    })
}

fn list(flag: &str, text: &str) -> Result<Vec<usize>, OptionError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|item| number(flag, item.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &str) -> Result<Options, OptionError> {
        parse(words.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn defaults_match_the_issue() {
        let options = parse_words("").unwrap();
        assert_eq!(options.proxies, [0, 1, 3]);
        assert_eq!(options.official, Official::Search);
        let s = options.settings;
        assert_eq!((s.small, s.big, s.starts), (20_000, 50, 20));
        assert_eq!(
            s.stream,
            StreamSpec {
                updates: 100,
                bytes: 100
            }
        );
        assert_eq!(s.big_bytes, 1 << 20);
    }

    #[test]
    fn flags_set_counts_programs_and_output() {
        let options = parse_words(
            "--proxies 0,2 --small 5 --updates 7 --update-bytes 9 --time-limit 0.5 \
             --official /x/official --write docs/performance.md --conductor c",
        )
        .unwrap();
        assert_eq!(options.proxies, [0, 2]);
        assert_eq!(options.settings.small, 5);
        assert_eq!(
            options.settings.stream,
            StreamSpec {
                updates: 7,
                bytes: 9
            }
        );
        assert_eq!(options.settings.time_limit, Duration::from_millis(500));
        assert_eq!(options.official, Official::At("/x/official".into()));
        assert_eq!(options.write, Some("docs/performance.md".into()));
        assert_eq!(options.conductor, Some("c".into()));
        assert_eq!(options.trace_dir, None);
        assert_eq!(
            parse_words("--trace-dir /tmp/t").unwrap().trace_dir,
            Some("/tmp/t".into())
        );
        assert_eq!(
            parse_words("--no-official").unwrap().official,
            Official::Skip
        );
        assert_eq!(parse_words("--quick").unwrap().settings.small, 200);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(
            parse_words("--small").unwrap_err().to_string(),
            "--small needs a value"
        );
        assert!(parse_words("--small many").is_err());
        assert!(parse_words("--proxies 0,x").is_err());
        assert!(
            parse(["--proxies".to_owned(), String::new()])
                .unwrap()
                .proxies
                .is_empty()
        );
        assert!(parse_words("--time-limit -1").is_err());
        assert_eq!(
            parse_words("--fast").unwrap_err().to_string(),
            "unknown option `--fast`"
        );
    }
}
