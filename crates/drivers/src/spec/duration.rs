//! Durations written as "500ms", "5s", "2m" or "1h".
//! Must not know which setting a duration is for: callers name the key in their errors.

use std::time::Duration;

const UNITS: [(&str, u64); 4] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)];

/// Parses a whole number followed by a unit; the unit is required because a bare number
/// is ambiguous between seconds and milliseconds.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let unit = unit.trim_start_matches(' ');
    let multiplier = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, multiplier)| *multiplier);
    let (Some(multiplier), false) = (multiplier, digits.is_empty()) else {
        return Err(DurationError::Invalid(text.to_owned()));
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|count| count.checked_mul(multiplier))
        .map(Duration::from_millis)
        .ok_or_else(|| DurationError::TooLong(text.to_owned()))
}

/// Why a text is not a duration; each names the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error(
        "invalid duration \"{0}\": write a whole number followed by ms, s, m or h, such as \"30s\""
    )]
    Invalid(String),
    #[error("duration \"{0}\" is too long")]
    TooLong(String),
}

/// The shortest exact rendering of a duration, for summaries ("30s", "1500ms").
pub fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    let (name, multiplier) = UNITS
        .iter()
        .rev()
        .find(|(_, multiplier)| {
            millis >= u128::from(*multiplier) && millis.is_multiple_of(u128::from(*multiplier))
        })
        .copied()
        .unwrap_or(UNITS[0]);
    format!("{}{name}", millis / u128::from(multiplier))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_parses() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("30 s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn malformed_durations_explain_the_format() {
        for text in [
            "", "5", "s", "1.5s", "-1s", "5sec", "5S", "5 s ", "2d", "5us",
        ] {
            let error = parse_duration(text).unwrap_err().to_string();
            assert_eq!(
                error,
                format!(
                    "invalid duration \"{text}\": write a whole number followed by ms, s, m \
                     or h, such as \"30s\""
                )
            );
        }
    }

    #[test]
    fn overflowing_durations_are_rejected() {
        assert_eq!(
            parse_duration("99999999999999999999h").map_err(|e| e.to_string()),
            Err("duration \"99999999999999999999h\" is too long".to_owned())
        );
        assert_eq!(
            parse_duration("18446744073709552h").map_err(|e| e.to_string()),
            Err("duration \"18446744073709552h\" is too long".to_owned())
        );
    }

    #[test]
    fn formatting_uses_the_largest_exact_unit() {
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_secs(7200)), "2h");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::ZERO), "0ms");
    }

    #[test]
    fn formatted_durations_parse_back() {
        for millis in [1, 999, 1000, 90_000, 3_600_000] {
            let duration = Duration::from_millis(millis);
            assert_eq!(parse_duration(&format_duration(duration)), Ok(duration));
        }
    }
}
