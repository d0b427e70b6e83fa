//! A component's stderr, line by line, into the conductor's log (under [`TARGET`], with the
//! component's name) and into its [`StderrTail`].
//!
//! Agents colour their stderr (and some draw spinners or set the window title), expecting a
//! terminal. The conductor's stderr is usually an editor's log pane or a file, where those
//! escape sequences are noise, so they are removed; when the conductor's own stderr is a
//! terminal, colours (SGR sequences) are kept and everything else is still removed, as a
//! cursor movement or a title change would garble the lines around it. The tail, which
//! ends up in error responses, never keeps any.
//!
//! The relay's log lines bypass `tracing-subscriber`'s own escaping (see the
//! binary's `logging`): that escaping writes each ESC as the four characters `\x1b`, which
//! is how coloured stderr used to arrive. [`clean`] is what makes the bypass safe.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::LazyLock;

use super::stderr_tail::StderrTail;

/// The `tracing` target of relayed stderr lines: `--log acp_conductor::component::stderr=off`
/// silences them.
pub const TARGET: &str = "acp_conductor::component::stderr";

/// Whether the conductor's stderr is a terminal: decides colours in its own log lines and
/// whether relayed component stderr keeps its colours. Asked once per process.
pub fn stderr_is_terminal() -> bool {
    static TERMINAL: LazyLock<bool> = LazyLock::new(|| std::io::stderr().is_terminal());
    *TERMINAL
}

/// What [`clean`] keeps of terminal control sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: plain text, for a log that is not a terminal.
    Nothing,
    /// SGR sequences (colours, bold, ...), for a terminal; the line then ends with a reset,
    /// so that a colour left on does not leak into the next line.
    Colours,
}

/// Logs one line a component wrote to stderr (with or without its line break) and keeps it
/// in `tail`.
pub fn relay(component: &str, line: &[u8], tail: &StderrTail) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    let plain = clean(text, Keep::Nothing);
    if stderr_is_terminal() {
        let shown = clean(text, Keep::Colours);
        tracing::info!(target: TARGET, component = %component, "{shown}");
    } else {
        tracing::info!(target: TARGET, component = %component, "{plain}");
    }
    tail.push(&plain);
}

/// `line` without terminal control sequences (ECMA-48: CSI, OSC, DCS and the other string
/// sequences, two- and three-character escapes, their 8-bit C1 forms) and without control
/// characters other than tab, keeping SGR sequences when `keep` says so. A sequence cut off
/// by the end of the line is removed up to there.
pub fn clean(line: &str, keep: Keep) -> Cow<'_, str> {
    if !line.chars().any(is_control) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut kept_sgr = false;
    let mut rest = line;
    while let Some(at) = rest.find(is_control) {
        out.push_str(&rest[..at]);
        let (sequence, after) = split_sequence(&rest[at..]);
        if keep == Keep::Colours && is_sgr(sequence) {
            out.push_str(sequence);
            kept_sgr = true;
        }
        rest = after;
    }
    out.push_str(rest);
    if kept_sgr {
        out.push_str("\x1b[0m");
    }
    Cow::Owned(out)
}

/// C0 controls but tab, DEL, and C1 controls (U+0080..=U+009F).
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\t') || c == '\u{7f}'
}

/// The control sequence (or lone control character) at the start of `s`, and what follows.
fn split_sequence(s: &str) -> (&str, &str) {
    let mut chars = s.char_indices();
    let (_, first) = chars.next().expect("starts with a control character");
    let introducer = match first {
        '\x1b' => match chars.next() {
            None => return (s, ""),
            Some((_, '[')) => Introducer::Csi,
            Some((_, ']')) => Introducer::String,
            Some((_, 'P' | 'X' | '^' | '_')) => Introducer::String,
            // nF: intermediates, then one final character.
            Some((i, c)) if ('\x20'..='\x2f').contains(&c) => {
                let tail = &s[i..];
                let end = tail
                    .find(|c: char| !('\x20'..='\x2f').contains(&c))
                    .map_or(tail.len(), |j| {
                        j + tail[j..].chars().next().map_or(0, char::len_utf8)
                    });
                return s.split_at(i + end);
            }
            // Fp, Fe, Fs: ESC and one character.
            Some((i, c)) => return s.split_at(i + c.len_utf8()),
        },
        '\u{9b}' => Introducer::Csi,
        '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => Introducer::String,
        c => return s.split_at(c.len_utf8()),
    };
    let body_start = chars.offset();
    let body = &s[body_start..];
    let end = match introducer {
        // Parameters and intermediates (0x20..=0x3F), then the final byte (0x40..=0x7E).
        // Anything else ends the sequence where it stands (it is malformed).
        Introducer::Csi => match body.find(|c: char| !('\x20'..='\x3f').contains(&c)) {
            Some(j) if ('\x40'..='\x7e').contains(&body[j..].chars().next().unwrap_or('\0')) => {
                j + 1
            }
            Some(j) => j,
            None => body.len(),
        },
        // Until BEL or ST (ESC \ or U+009C), which are part of it.
        Introducer::String => {
            let mut end = body.len();
            let mut it = body.char_indices().peekable();
            while let Some((j, c)) = it.next() {
                match c {
                    '\x07' | '\u{9c}' => {
                        end = j + c.len_utf8();
                        break;
                    }
                    '\x1b' => {
                        end = match it.peek() {
                            Some((k, '\\')) => k + 1,
                            _ => j,
                        };
                        break;
                    }
                    _ => {}
                }
            }
            end
        }
    };
    s.split_at(body_start + end)
}

enum Introducer {
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string ended by ST (or BEL, for OSC as terminals accept).
    String,
}

/// `ESC [ ... m` with numeric parameters only: a colour or text style.
fn is_sgr(sequence: &str) -> bool {
    sequence
        .strip_prefix("\x1b[")
        .and_then(|s| s.strip_suffix('m'))
        .is_some_and(|params| {
            params
                .chars()
                .all(|c| c.is_ascii_digit() || c == ';' || c == ':')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> String {
        clean(s, Keep::Nothing).into_owned()
    }

    fn coloured(s: &str) -> String {
        clean(s, Keep::Colours).into_owned()
    }

    #[test]
    fn text_without_controls_is_borrowed_as_is() {
        let line = "INFO ready — listening\ton stdio";
        assert!(matches!(clean(line, Keep::Nothing), Cow::Borrowed(l) if l == line));
        assert!(matches!(clean(line, Keep::Colours), Cow::Borrowed(l) if l == line));
    }

    #[test]
    fn colours_and_styles_are_removed() {
        assert_eq!(plain("\x1b[31merror\x1b[0m: boom"), "error: boom");
        assert_eq!(plain("\x1b[1;38;5;208mwarn\x1b[m x"), "warn x");
        assert_eq!(
            plain("\x1b[38:2::255:0:0mtrue colour\x1b[39m"),
            "true colour"
        );
        assert_eq!(plain("\u{9b}32mC1 CSI\u{9b}0m"), "C1 CSI");
    }

    #[test]
    fn cursor_and_erase_sequences_are_removed() {
        assert_eq!(plain("\x1b[2K\x1b[1G⠋ thinking"), "⠋ thinking");
        assert_eq!(plain("\x1b[?25lhidden cursor\x1b[?25h"), "hidden cursor");
        assert_eq!(plain("a\x1b[3Ab"), "ab");
    }

    #[test]
    fn string_sequences_are_removed_with_their_payload() {
        // Window title, ended by BEL or by ST.
        assert_eq!(plain("\x1b]0;my agent\x07started"), "started");
        assert_eq!(plain("\x1b]2;title\x1b\\started"), "started");
        // A hyperlink keeps its text.
        assert_eq!(
            plain("see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\ now"),
            "see the docs now"
        );
        assert_eq!(plain("x\x1bPq#0;2;0;0;0\x1b\\y"), "xy");
        assert_eq!(plain("x\u{9d}0;t\u{9c}y"), "xy");
    }

    #[test]
    fn short_escapes_and_control_characters_are_removed() {
        assert_eq!(plain("\x1b(Bcharset"), "charset");
        assert_eq!(plain("\x1b7saved\x1b8"), "saved");
        assert_eq!(plain("\x1bMreverse index"), "reverse index");
        assert_eq!(
            plain("bell\x07 back\x08space\x0c del\x7f"),
            "bell backspace del"
        );
        assert_eq!(plain("50%\r100%"), "50%100%");
        assert_eq!(plain("c1 \u{85}next line"), "c1 next line");
        assert_eq!(plain("tab\tkept"), "tab\tkept");
    }

    #[test]
    fn a_sequence_cut_off_by_the_end_of_the_line_is_removed() {
        assert_eq!(plain("text\x1b"), "text");
        assert_eq!(plain("text\x1b["), "text");
        assert_eq!(plain("text\x1b[31"), "text");
        assert_eq!(plain("text\x1b]0;title without end"), "text");
        assert_eq!(plain("text\x1b("), "text");
    }

    #[test]
    fn a_malformed_csi_ends_where_it_breaks() {
        // A character that can be neither a parameter nor a final byte: the sequence stops
        // before it, and it stays as text.
        assert_eq!(plain("\x1b[12é still text"), "é still text");
    }

    #[test]
    fn on_a_terminal_only_colours_are_kept_and_reset_at_the_end() {
        assert_eq!(
            coloured("\x1b[31merror\x1b[0m: boom"),
            "\x1b[31merror\x1b[0m: boom\x1b[0m"
        );
        assert_eq!(
            coloured("\x1b]0;title\x07\x1b[2K\x1b[1;33mwarn"),
            "\x1b[1;33mwarn\x1b[0m"
        );
        // Nothing but non-colour sequences: no reset is added.
        assert_eq!(coloured("\x1b[2Kclear\x07"), "clear");
        // A CSI that is not SGR is removed even when it ends in `m` after other bytes.
        assert_eq!(coloured("\x1b[>4;2mmodify keys"), "modify keys");
    }
}
