//! "Did you mean" suggestions for misspelt keys and values.
//! Must not know which words are valid where: callers pass the candidates.

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn closest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let word = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|candidate| (edit_distance(&word, candidate), *candidate))
        .filter(|(distance, candidate)| {
            let longer = word.chars().count().max(candidate.chars().count());
            *distance <= (longer / 3).max(1)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Up to `limit` candidates `word` may have meant, closest first: those [`closest`] would
/// accept, and those containing `word` or contained in it (an id typed short, `codex` for
/// `codex-acp`) when it has at least three characters.
pub fn close_matches<'c>(word: &str, candidates: &[&'c str], limit: usize) -> Vec<&'c str> {
    let lowered = word.to_ascii_lowercase();
    let mut scored: Vec<(usize, &'c str)> = candidates
        .iter()
        .filter_map(|candidate| {
            let distance = edit_distance(&lowered, candidate);
            let longer = lowered.chars().count().max(candidate.chars().count());
            let close = distance <= (longer / 3).max(1);
            let contains = lowered.chars().count() >= 3
                && (candidate.contains(lowered.as_str()) || lowered.contains(*candidate));
            (close || contains).then_some((distance, *candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(limit)
        .map(|(_, candidate)| candidate)
        .collect()
}

/// ` (did you mean `x`?)`-style tail for a message, or nothing.
pub fn did_you_mean(word: &str, candidates: &[&str], quote: char) -> String {
    closest(word, candidates)
        .map(|candidate| match quote {
            '"' => format!("; did you mean \"{candidate}\"?"),
            _ => format!("; did you mean `{candidate}`?"),
        })
        .unwrap_or_default()
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbouring characters each cost one, since those are the usual typing slips.
fn edit_distance(left: &str, right: &str) -> usize {
    let left: Vec<char> = left.chars().collect();
    let right: Vec<char> = right.chars().collect();
    let width = right.len() + 1;
    let mut table = vec![0usize; (left.len() + 1) * width];
    for (i, cell) in table.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in table.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=left.len() {
        for j in 1..=right.len() {
            let substitution = usize::from(left[i - 1] != right[j - 1]);
            let mut best = (table[(i - 1) * width + j] + 1)
                .min(table[i * width + j - 1] + 1)
                .min(table[(i - 1) * width + j - 1] + substitution);
            if i > 1 && j > 1 && left[i - 1] == right[j - 2] && left[i - 2] == right[j - 1] {
                best = best.min(table[(i - 2) * width + j - 2] + 1);
            }
            table[i * width + j] = best;
        }
    }
    table[left.len() * width + right.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT_KEYS: [&str; 6] = ["command", "builtin", "args", "env", "cwd", "name"];

    #[test]
    fn distances_count_typing_slips() {
        assert_eq!(edit_distance("command", "command"), 0);
        assert_eq!(edit_distance("comand", "command"), 1);
        assert_eq!(edit_distance("commnad", "command"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn typos_find_the_intended_key() {
        assert_eq!(closest("comand", &AGENT_KEYS), Some("command"));
        assert_eq!(closest("nmae", &AGENT_KEYS), Some("name"));
        assert_eq!(closest("arg", &AGENT_KEYS), Some("args"));
        assert_eq!(closest("Command", &AGENT_KEYS), Some("command"));
        assert_eq!(closest("buildin", &AGENT_KEYS), Some("builtin"));
    }

    #[test]
    fn unrelated_words_get_no_suggestion() {
        assert_eq!(closest("sandbox", &AGENT_KEYS), None);
        assert_eq!(closest("x", &AGENT_KEYS), None);
        assert_eq!(closest("environment", &AGENT_KEYS), None);
    }

    #[test]
    fn close_matches_include_ids_typed_short_and_stop_at_the_limit() {
        let ids = [
            "codex-acp",
            "claude-code-acp",
            "gemini",
            "qwen-code",
            "kimi",
        ];
        assert_eq!(close_matches("codex", &ids, 3), ["codex-acp"]);
        assert_eq!(close_matches("gemni", &ids, 3), ["gemini"]);
        assert_eq!(
            close_matches("code", &ids, 3),
            ["codex-acp", "qwen-code", "claude-code-acp"]
        );
        assert_eq!(close_matches("code", &ids, 1).len(), 1);
        assert!(close_matches("zz", &ids, 3).is_empty());
    }

    #[test]
    fn suggestion_tail_quotes_as_asked() {
        assert_eq!(
            did_you_mean("comand", &AGENT_KEYS, '`'),
            "; did you mean `command`?"
        );
        assert_eq!(
            did_you_mean("agnet", &["agent", "proxy"], '"'),
            "; did you mean \"agent\"?"
        );
        assert_eq!(did_you_mean("zzz", &AGENT_KEYS, '`'), "");
    }
}
