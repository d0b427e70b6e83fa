//! The last lines a component wrote to stderr, kept to explain its failure in error responses.
//! A bounded ring of lines; it does not decide when anything failed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

const KEEP_LINES: usize = 20;
const KEEP_LINE_BYTES: usize = 2048;

#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    pub fn push(&self, line: &str) {
        let mut line = line.to_string();
        if line.len() > KEEP_LINE_BYTES {
            let mut cut = KEEP_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == KEEP_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_truncates_long_ones() {
        let tail = StderrTail::default();
        for i in 0..30 {
            tail.push(&format!("line {i}"));
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), KEEP_LINES);
        assert_eq!(lines[0], "line 10");
        assert_eq!(lines[19], "line 29");
        tail.push(&"é".repeat(KEEP_LINE_BYTES));
        let last = tail.lines().pop().unwrap();
        assert!(last.ends_with('…') && last.len() <= KEEP_LINE_BYTES + '…'.len_utf8());
    }
}
