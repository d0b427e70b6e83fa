//! `${VAR}` and `${VAR:-default}` substitution inside configuration string values.
//! Must not know where the string came from: the caller locates any error it returns.

/// Why a string could not be interpolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InterpolationError {
    /// `${NAME}` names a variable that is not set on this machine.
    Unset { name: String },
    /// The string itself is wrong wherever it is used (unterminated `${`, bad name).
    Malformed { message: String },
}

impl InterpolationError {
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Unset { name } => format!(
                "environment variable `{name}` is not set (write `${{{name}:-default}}` to give a default)"
            ),
            Self::Malformed { message } => message.clone(),
        }
    }
}

/// Replaces every `${NAME}` and `${NAME:-default}` in `text`; `$${` stands for a literal `${`.
///
/// As in POSIX shells, `:-` uses the default when the variable is unset or empty, and the
/// default is taken literally. Every problem in the string is returned, not only the first.
pub(crate) fn interpolate(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Vec<InterpolationError>> {
    let mut output = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        output.push_str(&rest[..dollar]);
        let from_dollar = &rest[dollar..];
        if let Some(after) = from_dollar.strip_prefix("$${") {
            output.push_str("${");
            rest = after;
        } else if let Some(after) = from_dollar.strip_prefix("${") {
            let Some(close) = after.find('}') else {
                errors.push(InterpolationError::Malformed {
                    message: format!(
                        "unterminated `${{` in \"{text}\" (write `$${{` for a literal `${{`)"
                    ),
                });
                break;
            };
            let reference = &after[..close];
            match substitute(reference, lookup) {
                Ok(value) => output.push_str(&value),
                Err(error) => errors.push(error),
            }
            rest = &after[close + 1..];
        } else {
            output.push('$');
            rest = &from_dollar[1..];
        }
    }
    if errors.is_empty() {
        output.push_str(rest);
        Ok(output)
    } else {
        Err(errors)
    }
}

/// The well-formed references in `text`, in order: each name and whether it has a default.
pub(crate) fn references(text: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        let from_dollar = &rest[dollar..];
        if let Some(after) = from_dollar.strip_prefix("$${") {
            rest = after;
        } else if let Some(after) = from_dollar.strip_prefix("${") {
            let Some(close) = after.find('}') else {
                break;
            };
            let reference = &after[..close];
            let (name, default) = match reference.split_once(":-") {
                Some((name, _)) => (name, true),
                None => (reference, false),
            };
            if is_variable_name(name) {
                found.push((name.to_owned(), default));
            }
            rest = &after[close + 1..];
        } else {
            rest = &from_dollar[1..];
        }
    }
    found
}

/// The value of one `NAME` or `NAME:-default` reference.
fn substitute(
    reference: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    let (name, default) = match reference.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (reference, None),
    };
    if !is_variable_name(name) {
        return Err(InterpolationError::Malformed {
            message: format!(
                "`${{{reference}}}` is not a variable reference: write `${{NAME}}` or \
                 `${{NAME:-default}}` with NAME made of letters, digits and `_`, not starting \
                 with a digit"
            ),
        });
    }
    match (lookup(name), default) {
        (Some(value), None) => Ok(value),
        (Some(value), Some(_)) if !value.is_empty() => Ok(value),
        (_, Some(default)) => Ok(default.to_owned()),
        (None, None) => Err(InterpolationError::Unset {
            name: name.to_owned(),
        }),
    }
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".to_owned()),
            "EMPTY" => Some(String::new()),
            "_UNDER_1" => Some("u".to_owned()),
            "DOLLAR" => Some("${HOME}".to_owned()),
            _ => None,
        }
    }

    fn expand(text: &str) -> Result<String, Vec<InterpolationError>> {
        interpolate(text, &vars)
    }

    #[test]
    fn references_are_listed_with_whether_they_have_a_default() {
        assert_eq!(
            references("a${HOME}b${KEY:-x}$${NOT}${1BAD}${LAST"),
            [("HOME".to_owned(), false), ("KEY".to_owned(), true)]
        );
        assert!(references("plain $ text").is_empty());
    }

    #[test]
    fn text_without_references_is_unchanged() {
        assert_eq!(expand("plain text").unwrap(), "plain text");
        assert_eq!(expand("").unwrap(), "");
        assert_eq!(expand("héllo € {}").unwrap(), "héllo € {}");
    }

    #[test]
    fn set_variables_are_substituted_anywhere_in_the_string() {
        assert_eq!(expand("${HOME}").unwrap(), "/home/me");
        assert_eq!(expand("a${HOME}b${_UNDER_1}c").unwrap(), "a/home/mebuc");
        assert_eq!(expand("${HOME}${HOME}").unwrap(), "/home/me/home/me");
    }

    #[test]
    fn substituted_values_are_not_expanded_again() {
        assert_eq!(expand("${DOLLAR}").unwrap(), "${HOME}");
    }

    #[test]
    fn defaults_apply_when_unset_or_empty() {
        assert_eq!(expand("${MISSING:-fallback}").unwrap(), "fallback");
        assert_eq!(expand("${EMPTY:-fallback}").unwrap(), "fallback");
        assert_eq!(expand("${HOME:-fallback}").unwrap(), "/home/me");
        assert_eq!(expand("${MISSING:-}").unwrap(), "");
        assert_eq!(expand("${MISSING:-a:-b $x}").unwrap(), "a:-b $x");
    }

    #[test]
    fn set_but_empty_without_default_is_empty() {
        assert_eq!(expand("[${EMPTY}]").unwrap(), "[]");
    }

    #[test]
    fn double_dollar_brace_is_a_literal() {
        assert_eq!(expand("$${HOME}").unwrap(), "${HOME}");
        assert_eq!(expand("a$${").unwrap(), "a${");
        // Left to right: the first `$` is lone, then `$${` is the literal.
        assert_eq!(expand("$$${HOME}").unwrap(), "$${HOME}");
    }

    #[test]
    fn lone_dollars_are_literal() {
        assert_eq!(expand("$HOME costs $5 $").unwrap(), "$HOME costs $5 $");
        assert_eq!(expand("$$").unwrap(), "$$");
    }

    #[test]
    fn unset_variable_without_default_is_reported_by_name() {
        assert_eq!(
            expand("key=${API_KEY}").unwrap_err(),
            vec![InterpolationError::Unset {
                name: "API_KEY".to_owned()
            }]
        );
        assert_eq!(
            InterpolationError::Unset {
                name: "API_KEY".to_owned()
            }
            .message(),
            "environment variable `API_KEY` is not set (write `${API_KEY:-default}` to give a default)"
        );
    }

    #[test]
    fn every_unset_variable_in_a_string_is_reported() {
        let errors = expand("${A}/${HOME}/${B}").unwrap_err();
        let names: Vec<_> = errors
            .iter()
            .map(|error| match error {
                InterpolationError::Unset { name } => name.as_str(),
                InterpolationError::Malformed { .. } => "malformed",
            })
            .collect();
        assert_eq!(names, ["A", "B"]);
    }

    #[test]
    fn unterminated_reference_is_malformed() {
        let errors = expand("x${HOME").unwrap_err();
        assert_eq!(
            errors[0].message(),
            "unterminated `${` in \"x${HOME\" (write `$${` for a literal `${`)"
        );
    }

    #[test]
    fn invalid_names_are_malformed() {
        for text in ["${}", "${1A}", "${A-B}", "${A:B}", "${ A}", "${:-x}"] {
            let errors = expand(text).unwrap_err();
            assert!(
                matches!(errors[..], [InterpolationError::Malformed { .. }]),
                "{text}: {errors:?}"
            );
        }
        assert_eq!(
            expand("${A-B}").unwrap_err()[0].message(),
            "`${A-B}` is not a variable reference: write `${NAME}` or `${NAME:-default}` with \
             NAME made of letters, digits and `_`, not starting with a digit"
        );
    }
}
