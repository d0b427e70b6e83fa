//! `acp-conductor agents`: the registry's agents as a table for people. Must not know the
//! configuration file.

use std::io::Write;
use std::path::Path;

use super::{Agent, Kind, Registry, RegistryError, install_root, platform, published};

/// Prints the agents of `registry_file`, or of the published registry, to stdout; returns
/// why no registry could be read.
pub fn agents_command(registry_file: Option<&Path>) -> Result<(), RegistryError> {
    let vars = |name: &str| std::env::var(name).ok();
    let registry = match registry_file {
        Some(file) => Registry::from_file(&std::path::absolute(file).unwrap_or(file.into())),
        None => published(crate::cache_dir::default_cache_dir(&vars).as_deref(), &vars),
    }?;
    let root = install_root(&vars);
    let text = table(&registry, &platform(), root.as_deref());
    // A closed pipe (`| head`) is not worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(())
}

/// The whole listing: where the registry came from, one row per agent, how to use one.
pub fn table(registry: &Registry, platform: &str, install_root: Option<&Path>) -> String {
    let mut rows: Vec<[String; 4]> = vec![[
        "ID".to_owned(),
        "NAME".to_owned(),
        "VERSION".to_owned(),
        "DISTRIBUTION".to_owned(),
    ]];
    let mut agents: Vec<&Agent> = registry.agents.iter().collect();
    agents.sort_by(|a, b| a.id.cmp(&b.id));
    for agent in agents {
        rows.push([
            agent.id.clone(),
            agent.name.clone(),
            agent.version.clone(),
            distributions(agent, platform, install_root),
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = format!(
        "{} agents in {}\n\n",
        registry.agents.len(),
        registry.origin.describe()
    );
    for row in &rows {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[column] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if let Some(warning) = registry.origin.warning() {
        text.push_str(&format!("\nwarning: {warning}\n"));
    }
    for entry in &registry.unreadable {
        text.push_str(&format!("\nleft out, unreadable: {entry}"));
    }
    if !registry.unreadable.is_empty() {
        text.push('\n');
    }
    text.push_str(
        "\nRun one as the chain's agent with `registry = \"<id>\"` in the [agent] table of \
         conductor.toml.\n",
    );
    text
}

/// "npx", "binary (installed)", "binary (not for linux-x86_64)", "npx, binary".
fn distributions(agent: &Agent, platform: &str, install_root: Option<&Path>) -> String {
    let kinds: Vec<String> = agent
        .distribution
        .kinds()
        .into_iter()
        .map(|kind| match kind {
            Kind::Binary => {
                let targets = agent
                    .distribution
                    .binary
                    .as_ref()
                    .expect("listed as binary");
                if !targets.contains_key(platform) {
                    format!("binary (not for {platform})")
                } else if matches!(
                    agent.launch(platform, install_root),
                    Ok(launch) if launch.kind == Kind::Binary
                ) {
                    "binary (installed)".to_owned()
                } else {
                    "binary".to_owned()
                }
            }
            other => other.name().to_owned(),
        })
        .collect();
    kinds.join(", ")
}
