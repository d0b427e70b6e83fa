//! Tests of the remote keys: `url` and `headers` in `[agent]` and `[[proxy]]`: values,
//! interpolation, what they exclude, and error locations. Goes through `parse_str` only.

use super::test_support::TempDir;
use super::*;

fn parse(temp: &TempDir, text: &str) -> Result<Config, ConfigErrors> {
    let lookup = |name: &str| (name == "TOKEN").then(|| "t0ken".to_owned());
    parse_str(
        text,
        &temp.path().join("conductor.toml"),
        &lookup,
        Some(&temp.path().join("exe")),
    )
}

fn valid(text: &str) -> Config {
    let temp = TempDir::new("remote-valid");
    temp.demo_agent("exe");
    match parse(&temp, text) {
        Ok(config) => config,
        Err(errors) => panic!("expected a valid config, got:\n{errors}"),
    }
}

/// `line:column: message` of every error.
fn errors(text: &str) -> Vec<String> {
    let temp = TempDir::new("remote-errors");
    temp.demo_agent("exe");
    match parse(&temp, text) {
        Ok(config) => panic!("expected errors, got {config:#?}"),
        Err(ConfigErrors(errors)) => errors
            .iter()
            .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
            .collect(),
    }
}

#[test]
fn a_remote_agent_and_proxy_with_interpolated_headers() {
    let config = valid(
        "[agent]\nname = \"far\"\nurl = \"wss://agents.example.com/acp\"\n\
         headers = { Authorization = \"Bearer ${TOKEN}\", X-Team = \"tools\" }\n\
         on_failure = \"restart\"\n\
         [[proxy]]\nname = \"shared\"\nurl = \"ws://127.0.0.1:8080/acp\"\n",
    );
    let Some(AgentSpec::Remote(agent)) = &config.agent else {
        panic!("expected a remote agent, got {:?}", config.agent);
    };
    assert_eq!(agent.name, "far");
    assert_eq!(agent.url.as_str(), "wss://agents.example.com/acp");
    assert_eq!(
        agent.headers,
        [
            ("Authorization".to_owned(), "Bearer t0ken".to_owned()),
            ("X-Team".to_owned(), "tools".to_owned())
        ]
    );
    assert_eq!(
        config.agent_failure.on_failure,
        OnFailure::Restart {
            then: AfterRestarts::Fail
        }
    );
    let ProxyLaunch::Remote(proxy) = &config.proxies[0].launch else {
        panic!("expected a remote proxy, got {:?}", config.proxies[0]);
    };
    assert_eq!(
        (proxy.name.as_str(), proxy.url.port()),
        ("shared", Some(8080))
    );
    assert!(proxy.headers.is_empty());
    // What the configuration prints never shows a header's value.
    let shown = format!("{config:?}");
    assert!(!shown.contains("t0ken"), "{shown}");
    assert!(shown.contains("Authorization"), "{shown}");
}

#[test]
fn a_remote_agent_is_named_agent_unless_named() {
    let config = valid("[agent]\nurl = \"ws://localhost:9/acp\"\n");
    assert_eq!(config.agent.as_ref().map(AgentSpec::name), Some("agent"));
}

#[test]
fn url_excludes_the_other_ways_to_run_a_component() {
    assert_eq!(
        errors("[agent]\ncommand = \"/bin/sh\"\nurl = \"ws://h/acp\"\n"),
        ["3:1: [agent] sets both `command` and `url`; keep one of them"]
    );
    assert_eq!(
        errors("[agent]\nbuiltin = \"demo\"\nurl = \"ws://h/acp\"\n"),
        ["3:1: [agent] sets both `builtin` and `url`; keep one of them"]
    );
    assert_eq!(
        errors(
            "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nurl = \"ws://h/acp\"\nwasm = \"p.wasm\"\n"
        ),
        ["6:1: [[proxy]] \"p\" sets both `wasm` and `url`; keep one of them"]
    );
}

#[test]
fn a_remote_proxy_is_reached_over_either_transport() {
    for url in ["https://h/acp", "http://h/acp", "wss://h/acp"] {
        let config = valid(&format!(
            "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nurl = \"{url}\"\n"
        ));
        let ProxyLaunch::Remote(remote) = &config.proxies[0].launch else {
            panic!("a remote proxy: {config:?}")
        };
        assert_eq!(remote.url.as_str(), url);
    }
}

#[test]
fn keys_of_started_components_are_refused_with_a_url() {
    assert_eq!(
        errors("[agent]\nurl = \"ws://h/acp\"\nargs = [\"-v\"]\nenv = { A = \"1\" }\n"),
        [
            "3:1: `args` in [agent] applies only to a component the conductor starts itself, \
             not to one reached at `url`",
            "4:1: `env` in [agent] applies only to a component the conductor starts itself, \
             not to one reached at `url`",
        ]
    );
    assert_eq!(
        errors("[agent]\nbuiltin = \"demo\"\nheaders = { A = \"1\" }\n"),
        [
            "3:1: `headers` in [agent] applies only to a component reached at `url`; set `url` \
          too, or remove it"
        ]
    );
}

#[test]
fn only_a_started_proxy_can_be_shared() {
    assert_eq!(
        errors(
            "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nurl = \"ws://h/acp\"\n\
             shared = true\n"
        ),
        [
            "6:10: [[proxy]] \"p\" sets `shared` with `url`: only a proxy the conductor starts \
             (`command` or `wasm`) can be shared; a proxy served at a URL is already one server \
             for every chain"
        ]
    );
    assert_eq!(
        errors(
            "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nurl = \"ws://h/acp\"\n\
             shared = \"yes\"\n"
        ),
        ["6:10: `shared` must be true or false, found string"]
    );
    let config = valid(
        "[agent]\nbuiltin = \"demo\"\n[[proxy]]\nname = \"p\"\nurl = \"ws://h/acp\"\n\
         shared = false\n",
    );
    assert!(!config.proxies[0].shared);
}

#[test]
fn bad_urls_are_explained() {
    let cases = [
        (
            "ftp://h/acp",
            "`url` must start with \"ws://\", \"wss://\", \"http://\" or \"https://\", found `ftp:`",
        ),
        (
            "wss://user:pw@h/acp",
            "`url` must not carry a user name or password: send credentials in `headers` (for \
             example `headers = { Authorization = \"Bearer ${TOKEN}\" }`)",
        ),
        (
            "ws://h/acp#part",
            "`url` must not have a fragment (`#...`): it is never sent to the server",
        ),
        (
            "h/acp",
            "`url` is not a URL (relative URL without a base): write it as `wss://host/acp`, \
             `ws://...`, `https://...` or `http://...`",
        ),
    ];
    for (url, message) in cases {
        assert_eq!(
            errors(&format!("[agent]\nurl = \"{url}\"\n")),
            [format!("2:7: {message}")],
            "{url}"
        );
    }
}

#[test]
fn bad_headers_are_explained_without_their_values() {
    assert_eq!(
        errors(
            "[agent]\nurl = \"ws://h/acp\"\n\
             headers = { \"Bad Name\" = \"v\", Acp-Session-Id = \"s\", X = \"a\\nb\", Y = 3, \
             Z = \"${UNSET}\" }\n"
        ),
        [
            "3:13: `Bad Name` is not a valid HTTP header name",
            "3:31: header `Acp-Session-Id` is set by the transport itself and cannot be configured",
            "3:57: `headers.X` is not a valid HTTP header value (line breaks and other control \
             characters are not allowed)",
            "3:69: `headers.Y` must be a string, found integer",
            "3:76: environment variable `UNSET` is not set (write `${UNSET:-default}` to give a \
             default)",
        ]
    );
}
