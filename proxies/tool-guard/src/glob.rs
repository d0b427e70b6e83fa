//! Wildcard patterns: `*`, `**` and `?` over paths (where `/` separates segments) or over plain
//! text (titles, command lines). Pure string matching; knows nothing about policies.
//!
//! Path patterns: `?` is one character other than `/`, `*` any run of characters other than
//! `/`, `**` any run including `/`, and `**/` at the start of a segment also matches nothing,
//! so `a/**/b` matches `a/b`. Text patterns: `?` is any one character and `*` (or `**`) any
//! run. `\` makes the next character literal. Matching is case-sensitive and covers the
//! whole string.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Path,
    Text,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`
    AnyChar,
    /// `*`
    Star,
    /// `**` (path patterns only)
    GlobStar,
    /// `**/` at the start of a segment: nothing, or anything ending in `/`.
    Dirs,
}

#[derive(Debug, Clone)]
pub struct Glob {
    pattern: String,
    kind: Kind,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    pub pattern: String,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pattern {:?} ends with a lone `\\`", self.pattern)
    }
}

impl std::error::Error for GlobError {}

impl Glob {
    /// A pattern over `/`-separated paths.
    pub fn path(pattern: &str) -> Result<Glob, GlobError> {
        Glob::parse(pattern, Kind::Path)
    }

    /// A pattern over free text, where `/` is an ordinary character.
    pub fn text(pattern: &str) -> Result<Glob, GlobError> {
        Glob::parse(pattern, Kind::Text)
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    fn parse(pattern: &str, kind: Kind) -> Result<Glob, GlobError> {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            let token = match c {
                '\\' => Token::Char(chars.next().ok_or_else(|| GlobError {
                    pattern: pattern.to_string(),
                })?),
                '?' => Token::AnyChar,
                '*' if chars.peek() == Some(&'*') => {
                    chars.next();
                    while chars.peek() == Some(&'*') {
                        chars.next();
                    }
                    let segment_start =
                        matches!(tokens.last(), None | Some(Token::Char('/') | Token::Dirs));
                    match kind {
                        Kind::Text => Token::Star,
                        Kind::Path if segment_start && chars.peek() == Some(&'/') => {
                            chars.next();
                            Token::Dirs
                        }
                        Kind::Path => Token::GlobStar,
                    }
                }
                '*' => Token::Star,
                c => Token::Char(c),
            };
            tokens.push(token);
        }
        Ok(Glob {
            pattern: pattern.to_string(),
            kind,
            tokens,
        })
    }

    pub fn matches(&self, subject: &str) -> bool {
        let s: Vec<char> = subject.chars().collect();
        let n = s.len();
        let crosses = |c: char| self.kind == Kind::Text || c != '/';
        // `next[j]`: do the tokens after the current one match `s[j..]`? Built from the last
        // token backwards, one row per token, so the cost is tokens × length.
        let mut next = vec![false; n + 1];
        next[n] = true;
        let mut row = vec![false; n + 1];
        for token in self.tokens.iter().rev() {
            // For `Dirs`: is there a k > j with s[k-1] == '/' and next[k]?
            let mut after_slash = false;
            for j in (0..=n).rev() {
                row[j] = match token {
                    Token::Char(c) => j < n && s[j] == *c && next[j + 1],
                    Token::AnyChar => j < n && crosses(s[j]) && next[j + 1],
                    Token::Star => next[j] || (j < n && crosses(s[j]) && row[j + 1]),
                    Token::GlobStar => next[j] || (j < n && row[j + 1]),
                    Token::Dirs => {
                        if j < n && s[j] == '/' && next[j + 1] {
                            after_slash = true;
                        }
                        next[j] || (j < n && after_slash)
                    }
                };
            }
            std::mem::swap(&mut next, &mut row);
        }
        next[0]
    }
}

/// Escapes `text` so a pattern matches it literally (for values put into patterns).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str, s: &str) -> bool {
        Glob::path(p).unwrap().matches(s)
    }

    fn text(p: &str, s: &str) -> bool {
        Glob::text(p).unwrap().matches(s)
    }

    #[test]
    fn literal_patterns_match_whole_strings_only() {
        assert!(path("/a/b", "/a/b"));
        assert!(!path("/a/b", "/a/bc"));
        assert!(!path("/a/b", "/a"));
        assert!(path("", ""));
        assert!(!path("", "x"));
        assert!(!path("/A", "/a"));
    }

    #[test]
    fn star_stays_within_a_segment_in_paths() {
        assert!(path("/a/*.rs", "/a/main.rs"));
        assert!(path("/a/*.rs", "/a/.rs"));
        assert!(!path("/a/*.rs", "/a/b/main.rs"));
        assert!(path("/a/*", "/a/"));
        assert!(!path("/a/*", "/a"));
        assert!(path("*", "file"));
        assert!(!path("*", "dir/file"));
        assert!(path("/a/*/c", "/a/b/c"));
        assert!(!path("/a/*/c", "/a/b/x/c"));
        assert!(path("/a/b*d*f", "/a/bcdef"));
    }

    #[test]
    fn question_mark_is_one_character_but_never_a_separator_in_paths() {
        assert!(path("/a/?.md", "/a/x.md"));
        assert!(!path("/a/?.md", "/a/.md"));
        assert!(!path("/a/?.md", "/a/xy.md"));
        assert!(!path("/a?b", "/a/b"));
        assert!(text("a?b", "a/b"));
        assert!(path("/ü/?", "/ü/é"));
    }

    #[test]
    fn globstar_crosses_segments() {
        assert!(path("/p/**", "/p/a"));
        assert!(path("/p/**", "/p/a/b/c.txt"));
        assert!(path("/p/**", "/p/"));
        assert!(!path("/p/**", "/p"));
        assert!(!path("/p/**", "/q/a"));
        assert!(path("**", "/anything/at/all"));
        assert!(path("/p/**.rs", "/p/a/b.rs"));
        assert!(path("/p/a**", "/p/abc/d"));
    }

    #[test]
    fn globstar_slash_matches_zero_or_more_directories() {
        assert!(path("/p/**/x.md", "/p/x.md"));
        assert!(path("/p/**/x.md", "/p/a/x.md"));
        assert!(path("/p/**/x.md", "/p/a/b/x.md"));
        assert!(!path("/p/**/x.md", "/p/ax.md"));
        assert!(!path("/p/**/x.md", "/p/a/bx.md"));
        assert!(path("**/.git/**", "/p/.git/config"));
        assert!(path("**/.git/**", ".git/x"));
        assert!(!path("**/.git/**", "/p/.github/x"));
        assert!(path("/p/**/**/x", "/p/x"));
        assert!(path("/p/***/x", "/p/a/b/x"));
    }

    #[test]
    fn text_patterns_ignore_separators() {
        assert!(text("rm -rf *", "rm -rf /"));
        assert!(text("rm -rf *", "rm -rf /home/me/project"));
        assert!(!text("rm -rf *", "sudo rm -rf /"));
        assert!(text("*rm -rf*", "sudo rm -rf / --no-preserve-root"));
        assert!(text("git push*", "git push"));
        assert!(text("git push*", "git push origin main --force"));
        assert!(!text("git push*", "git pull"));
        assert!(text("**", "a/b"));
        assert!(text("Read *", "Read /etc/hosts"));
        assert!(text("*", ""));
    }

    #[test]
    fn backslash_makes_the_next_character_literal() {
        assert!(path(r"/a/\*", "/a/*"));
        assert!(!path(r"/a/\*", "/a/b"));
        assert!(text(r"what\?", "what?"));
        assert!(!text(r"what\?", "whatx"));
        assert!(text(r"a\\b", r"a\b"));
        assert_eq!(
            Glob::path("abc\\").unwrap_err(),
            GlobError {
                pattern: "abc\\".into()
            }
        );
    }

    #[test]
    fn escaped_values_match_only_themselves() {
        let dir = "/home/we*rd?/x\\y";
        let pattern = format!("{}/**", escape(dir));
        assert!(path(&pattern, "/home/we*rd?/x\\y/file"));
        assert!(!path(&pattern, "/home/weXrdZ/x\\y/file"));
    }

    #[test]
    fn long_subjects_match_in_linear_passes() {
        let long = format!("/p/{}/end", "a/".repeat(5_000));
        assert!(path("/p/**/end", &long));
        assert!(!path("/p/*/*/*/*/*/*/*/*/x", &long));
        let text_long = "a".repeat(20_000);
        assert!(!text("*a*a*a*a*a*b", &text_long));
    }
}
