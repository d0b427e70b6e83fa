//! The full session through each shape of chain: the agent alone, proxies of both dialects,
//! and a conductor nested as a proxy of another; every line on every link judged.

use super::chains::Chain;
use super::full_session;
use super::links::LinkKind;
use super::paths;
use super::report::Report;

/// Runs the full session through `chain` and judges every link; returns the report.
fn judged_session(chain: &Chain, scenario: &str) -> Report {
    let mut editor = chain.launch();
    full_session::run(&mut editor);
    let (links, status) = chain.finish(&mut editor);
    assert!(status.success(), "{status}: {}", editor.stderr());
    let report = Report::of(&links);
    report.assert_conformant(scenario);
    report
}

#[test]
fn agent_alone() {
    let chain = Chain::new("conformance-alone", &[]);
    let report = judged_session(&chain, "agent alone");
    report.assert_covers(&paths::ends());
    assert!(!report.counts().contains_key(&LinkKind::Proxy));
}

#[test]
fn proxies_of_both_dialects() {
    let mut chain = Chain::new("conformance-dialects", &[]);
    chain
        .proxy("p-rfd", "rfd")
        .proxy("p-underscore", "underscore");
    let report = judged_session(&chain, "proxies of both dialects");
    report.assert_covers(&paths::ends());
    report.assert_covers(&paths::through_proxy("proxy/successor"));
    report.assert_covers(&paths::through_proxy("_proxy/successor"));
    report.assert_never(&paths::NEVER_WRAPPED_CANCEL);
}

#[test]
fn conductor_nested_as_a_proxy() {
    let mut chain = Chain::new("conformance-nested", &[]);
    chain
        .proxy("outer", "rfd")
        .nested("inner", &[("inner-underscore", "underscore")]);
    let report = judged_session(&chain, "nested conductor");
    report.assert_covers(&paths::ends());
    report.assert_covers(&paths::through_proxy("proxy/successor"));
    report.assert_covers(&paths::through_proxy("_proxy/successor"));
    report.assert_covers(&paths::toward_parent());
    report.assert_never(&paths::NEVER_WRAPPED_CANCEL);
}
