//! Configuration errors and the collector that turns byte offsets into `file:line:column`.
//! Must not know the configuration schema: it only locates and records messages.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem in a configuration file, located at the key or value it concerns.
///
/// `line` and `column` are 1-based; the column counts characters, not bytes. A problem
/// with the file as a whole (it cannot be read) has `line == 0` and `column == 0` and
/// displays without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// What kind of problem it is, for callers that treat one kind differently (`doctor`).
    pub kind: ConfigErrorKind,
}

/// The kinds of configuration problem a caller may act on; the message says the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigErrorKind {
    /// The file cannot be read at all.
    Unreadable,
    /// `${NAME}` names a variable that is not set where the conductor runs.
    UnsetVariable { name: String },
    /// Anything else the file gets wrong.
    Invalid,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }
}

impl std::error::Error for ConfigError {}

/// Every problem found in one configuration file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// A problem with the file as a whole, such as being unreadable.
    pub(crate) fn whole_file(file: &Path, message: impl Into<String>) -> Self {
        Self(vec![ConfigError {
            file: file.to_path_buf(),
            line: 0,
            column: 0,
            message: message.into(),
            kind: ConfigErrorKind::Unreadable,
        }])
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// Collects errors against one source text so that all of them can be reported at once.
pub(crate) struct Diagnostics<'s> {
    file: PathBuf,
    source: &'s str,
    line_starts: Vec<usize>,
    errors: Vec<ConfigError>,
}

impl<'s> Diagnostics<'s> {
    pub(crate) fn new(file: &Path, source: &'s str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(index, _)| index + 1))
            .collect();
        Self {
            file: file.to_path_buf(),
            source,
            line_starts,
            errors: Vec::new(),
        }
    }

    /// Records `message` at byte `offset` of the source.
    pub(crate) fn error_at(&mut self, offset: usize, message: impl Into<String>) {
        self.error_of_kind_at(offset, ConfigErrorKind::Invalid, message);
    }

    /// Records `message`, a problem of `kind`, at byte `offset` of the source.
    pub(crate) fn error_of_kind_at(
        &mut self,
        offset: usize,
        kind: ConfigErrorKind,
        message: impl Into<String>,
    ) {
        let (line, column) = self.location(offset);
        self.errors.push(ConfigError {
            file: self.file.clone(),
            line,
            column,
            message: message.into(),
            kind,
        });
    }

    /// 1-based line of a byte offset, for messages that refer to another place.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.location(offset).0
    }

    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// The errors in file order; errors at the same place keep the order they were found in.
    pub(crate) fn into_errors(mut self) -> ConfigErrors {
        self.errors.sort_by_key(|error| (error.line, error.column));
        self.errors.dedup();
        ConfigErrors(self.errors)
    }

    /// 1-based line and character column of a byte offset.
    pub(super) fn location(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_index = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line_index];
        // A byte-order mark is invisible in editors, so it does not count as a column.
        let column_text = self.source[line_start..offset].trim_start_matches('\u{feff}');
        (line_index + 1, column_text.chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location_of(source: &str, offset: usize) -> (usize, usize) {
        Diagnostics::new(Path::new("c.toml"), source).location(offset)
    }

    #[test]
    fn offsets_become_one_based_lines_and_columns() {
        let source = "ab\ncd\n\nef";
        assert_eq!(location_of(source, 0), (1, 1));
        assert_eq!(location_of(source, 1), (1, 2));
        assert_eq!(location_of(source, 2), (1, 3));
        assert_eq!(location_of(source, 3), (2, 1));
        assert_eq!(location_of(source, 6), (3, 1));
        assert_eq!(location_of(source, 7), (4, 1));
        assert_eq!(location_of(source, 9), (4, 3));
        assert_eq!(location_of(source, 100), (4, 3));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let source = "k = \"é€\" x";
        let offset = source.find('x').unwrap();
        assert_eq!(location_of(source, offset), (1, 10));
    }

    #[test]
    fn byte_order_mark_does_not_shift_the_first_line() {
        let source = "\u{feff}a = 1\nb";
        assert_eq!(location_of(source, 3), (1, 1));
        assert_eq!(location_of(source, 7), (1, 5));
        assert_eq!(location_of(source, 9), (2, 1));
    }

    #[test]
    fn crlf_line_endings_keep_columns() {
        let source = "a = 1\r\nbc = 2";
        assert_eq!(location_of(source, 8), (2, 2));
    }

    #[test]
    fn errors_come_out_in_file_order_without_duplicates() {
        let mut diagnostics = Diagnostics::new(Path::new("dir/c.toml"), "one\ntwo\nthree");
        diagnostics.error_at(8, "third");
        diagnostics.error_at(0, "first");
        diagnostics.error_at(4, "second");
        diagnostics.error_at(8, "third");
        diagnostics.error_at(8, "also third");
        assert!(diagnostics.has_errors());
        assert_eq!(
            diagnostics.into_errors().to_string(),
            "dir/c.toml:1:1: first\n\
             dir/c.toml:2:1: second\n\
             dir/c.toml:3:1: third\n\
             dir/c.toml:3:1: also third"
        );
    }

    #[test]
    fn whole_file_errors_display_without_a_location() {
        let errors = ConfigErrors::whole_file(Path::new("/x/c.toml"), "cannot read: gone");
        assert_eq!(errors.to_string(), "/x/c.toml: cannot read: gone");
    }
}
