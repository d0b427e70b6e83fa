//! How each conductor is told to run N bench proxies in front of the bench agent: a
//! `conductor.toml` for acp-conductor, a command line for the official conductor.
//! Must not know how the chains are driven or measured.

use std::path::Path;

/// A `conductor.toml` running `proxies` copies of `proxy` in front of `agent`.
pub fn conductor_toml(agent: &Path, proxy: &Path, proxies: usize) -> String {
    let mut text = String::from("# Written by acp-bench.\n[agent]\nname = \"bench-agent\"\n");
    text.push_str(&format!(
        "command = {}\n",
        toml_string(&agent.to_string_lossy())
    ));
    for index in 1..=proxies {
        text.push_str("\n[[proxy]]\n");
        text.push_str(&format!("name = \"bench-proxy-{index}\"\n"));
        text.push_str(&format!(
            "command = {}\n",
            toml_string(&proxy.to_string_lossy())
        ));
    }
    text
}

/// The arguments for the official conductor (`agent-client-protocol-conductor agent
/// "proxy" ... "agent"`): each component is one shell-words string.
pub fn official_args(agent: &Path, proxy: &Path, proxies: usize) -> Vec<String> {
    let mut args = vec!["agent".to_owned()];
    args.extend((0..proxies).map(|_| shell_quote(&proxy.to_string_lossy())));
    args.push(shell_quote(&agent.to_string_lossy()));
    args
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One word for a POSIX-shell-style splitter: bare when that is unambiguous, else quoted.
pub fn shell_quote(s: &str) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:=+@%".contains(c));
    if bare {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_names_the_agent_and_each_proxy() {
        let text = conductor_toml(Path::new("/b/bench-agent"), Path::new("/b/bench-proxy"), 3);
        let doc: toml::Table = text.parse().unwrap();
        assert_eq!(doc["agent"]["command"].as_str(), Some("/b/bench-agent"));
        let proxies = doc["proxy"].as_array().unwrap();
        assert_eq!(proxies.len(), 3);
        for (i, proxy) in proxies.iter().enumerate() {
            assert_eq!(proxy["command"].as_str(), Some("/b/bench-proxy"));
            assert_eq!(
                proxy["name"].as_str().unwrap(),
                format!("bench-proxy-{}", i + 1)
            );
        }
        let none: toml::Table = conductor_toml(Path::new("a"), Path::new("p"), 0)
            .parse()
            .unwrap();
        assert!(!none.contains_key("proxy"));
    }

    #[test]
    fn toml_strings_escape_what_they_must() {
        let odd = "/tmp/we\"ird\\dir\n/agent";
        let doc: toml::Table = format!("x = {}", toml_string(odd)).parse().unwrap();
        assert_eq!(doc["x"].as_str(), Some(odd));
    }

    #[test]
    fn official_command_line_lists_proxies_then_agent() {
        assert_eq!(
            official_args(Path::new("/b/agent"), Path::new("/b/my proxy"), 2),
            ["agent", "'/b/my proxy'", "'/b/my proxy'", "/b/agent"]
        );
        assert_eq!(
            official_args(Path::new("/b/agent"), Path::new("/p"), 0),
            ["agent", "/b/agent"]
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
