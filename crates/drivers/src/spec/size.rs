//! Byte sizes written as "512KiB", "64MiB", "1GiB" or a plain number of bytes.
//! Must not know which setting a size is for: callers name the key in their errors.

const UNITS: [(&str, u64); 4] = [
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];

/// Parses a size string; sizes are always positive because every size we configure
/// bounds a buffer, and a zero bound would refuse all traffic.
pub fn parse_size(text: &str) -> Result<usize, SizeError> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let unit = unit.trim_start_matches(' ');
    let multiplier = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, multiplier)| *multiplier)
        .or(unit.is_empty().then_some(1));
    let (Some(multiplier), false) = (multiplier, digits.is_empty()) else {
        return Err(SizeError::Invalid {
            text: text.to_owned(),
            hint: decimal_unit_hint(digits, unit),
        });
    };
    let bytes = digits
        .parse::<u64>()
        .ok()
        .and_then(|count| count.checked_mul(multiplier))
        .and_then(|bytes| usize::try_from(bytes).ok())
        .ok_or_else(|| SizeError::TooLarge(text.to_owned()))?;
    positive(bytes)
}

/// A size given as a TOML integer, in bytes.
pub fn size_from_integer(integer: i128) -> Result<usize, SizeError> {
    if integer < 0 {
        return Err(SizeError::Negative(integer));
    }
    let bytes =
        usize::try_from(integer).map_err(|_| SizeError::IntegerTooLarge(integer.to_string()))?;
    positive(bytes)
}

fn positive(bytes: usize) -> Result<usize, SizeError> {
    if bytes == 0 {
        Err(SizeError::Zero)
    } else {
        Ok(bytes)
    }
}

/// Why a text or an integer is not a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// `hint` suggests the binary unit a decimal or abbreviated one probably meant, or is empty.
    #[error(
        "invalid size \"{text}\": write a whole number of bytes, or a whole number followed by \
         KiB, MiB or GiB, such as \"64MiB\"{hint}"
    )]
    Invalid { text: String, hint: String },
    #[error("size \"{0}\" is too large")]
    TooLarge(String),
    /// An integer, as written.
    #[error("size {0} is too large")]
    IntegerTooLarge(String),
    #[error("size {0} is negative")]
    Negative(i128),
    #[error("size must be greater than zero")]
    Zero,
}

/// People often write decimal or abbreviated units; point them at the binary one we mean.
fn decimal_unit_hint(digits: &str, unit: &str) -> String {
    let binary = match unit.to_ascii_lowercase().as_str() {
        "k" | "kb" | "kib" => "KiB",
        "m" | "mb" | "mib" => "MiB",
        "g" | "gb" | "gib" => "GiB",
        "b" | "bytes" => "B",
        _ => return String::new(),
    };
    format!("; did you mean \"{digits}{binary}\"?")
}

/// The shortest exact rendering of a size, for summaries ("64 MiB", "1000 B").
pub fn format_size(bytes: usize) -> String {
    let bytes = bytes as u64;
    let (name, multiplier) = UNITS
        .iter()
        .rev()
        .find(|(_, multiplier)| bytes >= *multiplier && bytes.is_multiple_of(*multiplier))
        .copied()
        .unwrap_or(UNITS[0]);
    format!("{} {name}", bytes / multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_multiply() {
        assert_eq!(parse_size("512KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("64MiB"), Ok(64 * 1024 * 1024));
        assert_eq!(parse_size("1GiB"), Ok(1024 * 1024 * 1024));
        assert_eq!(parse_size("7B"), Ok(7));
        assert_eq!(parse_size("64 MiB"), Ok(64 * 1024 * 1024));
    }

    #[test]
    fn plain_numbers_are_bytes() {
        assert_eq!(parse_size("1"), Ok(1));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
    }

    #[test]
    fn malformed_sizes_explain_the_format() {
        for text in [
            "", "MiB", "1.5MiB", "-1", "64mb", "64 MiB ", "ten", " 5", "5 5", "0x10",
        ] {
            let error = parse_size(text).unwrap_err().to_string();
            assert!(error.starts_with("invalid size"), "{text}: {error}");
        }
        assert_eq!(
            parse_size("64Mi").unwrap_err().to_string(),
            "invalid size \"64Mi\": write a whole number of bytes, or a whole number followed \
             by KiB, MiB or GiB, such as \"64MiB\""
        );
    }

    #[test]
    fn decimal_units_get_a_binary_suggestion() {
        assert!(
            parse_size("64MB")
                .unwrap_err()
                .to_string()
                .ends_with("did you mean \"64MiB\"?")
        );
        assert!(
            parse_size("512k")
                .unwrap_err()
                .to_string()
                .ends_with("did you mean \"512KiB\"?")
        );
        assert!(
            parse_size("1gib")
                .unwrap_err()
                .to_string()
                .ends_with("did you mean \"1GiB\"?")
        );
    }

    #[test]
    fn zero_and_overflow_are_rejected() {
        assert_eq!(
            parse_size("0").map_err(|e| e.to_string()),
            Err("size must be greater than zero".to_owned())
        );
        assert_eq!(
            parse_size("0GiB").map_err(|e| e.to_string()),
            Err("size must be greater than zero".to_owned())
        );
        assert_eq!(
            parse_size("99999999999999999999GiB").map_err(|e| e.to_string()),
            Err("size \"99999999999999999999GiB\" is too large".to_owned())
        );
        assert_eq!(
            parse_size("17179869184GiB").map_err(|e| e.to_string()),
            Err("size \"17179869184GiB\" is too large".to_owned())
        );
    }

    #[test]
    fn integers_are_positive_byte_counts() {
        assert_eq!(size_from_integer(4096), Ok(4096));
        assert_eq!(
            size_from_integer(0).map_err(|e| e.to_string()),
            Err("size must be greater than zero".to_owned())
        );
        assert_eq!(
            size_from_integer(-5).map_err(|e| e.to_string()),
            Err("size -5 is negative".to_owned())
        );
    }

    #[test]
    fn formatting_uses_the_largest_exact_unit() {
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(2048), "2 KiB");
        assert_eq!(format_size(1536), "1536 B");
        assert_eq!(format_size(1000), "1000 B");
        assert_eq!(format_size(1), "1 B");
    }

    #[test]
    fn formatted_sizes_with_units_parse_back() {
        for bytes in [1usize << 10, 3 << 20, 5 << 30] {
            let text = format_size(bytes).replace(' ', "");
            assert_eq!(parse_size(&text), Ok(bytes));
        }
    }
}
