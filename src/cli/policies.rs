//! `csmacd policies`: every backoff policy with its formula, parameters and
//! defaults, and the channel-access modes, from the catalogue the scenario
//! reader uses (so the listing cannot drift from what a scenario accepts).

use super::CliResult;
use crate::ethernet::Access;
use crate::scenario::policies::POLICIES;

/// List the backoff policies and channel-access modes.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
n counts the collisions of the current frame (1 after the first); U(a, b) is
uniform; slot-window policies draw r slots. Durations take units (\"51.2us\",
\"10ms\") or slots (\"4slot\"). docs/policies.md explains each policy.

Examples, in a scenario (a bare name takes every default):
  backoff = \"blam\"
  backoff = { kind = \"full-jitter\", base = \"1slot\", cap = \"1024slot\" }")]
pub struct PoliciesArgs {
    /// Show only this policy.
    pub kind: Option<String>,
}

pub fn run(args: PoliciesArgs) -> CliResult {
    if matches!(args.kind.as_deref(), Some("expr" | "windows")) {
        println!(
            "see `csmacd policies` (all) and docs/expressions.md for policies the scenario writes"
        );
        return Ok(());
    }
    let chosen: Vec<_> = POLICIES
        .iter()
        .filter(|d| args.kind.as_deref().is_none_or(|k| k == d.kind))
        .collect();
    if chosen.is_empty() {
        let kinds: Vec<&str> = POLICIES.iter().map(|d| d.kind).collect();
        return Err(super::CliError::usage(anyhow::anyhow!(
            "no policy `{}`; policies: {}",
            args.kind.unwrap_or_default(),
            kinds.join(", ")
        )));
    }
    for d in chosen {
        println!("{}", d.kind);
        println!("  wait:   {}", d.formula);
        for p in d.params {
            println!("  {:<17} = {:<9} {}", p.key, p.default, p.meaning);
        }
        println!("  source: {}", d.source);
        println!("  as an expression, with its defaults:");
        println!("    backoff = {}", d.written.toml());
        println!();
    }
    if args.kind.is_none() {
        println!("expr (a policy the scenario writes)");
        println!("  backoff = {{ kind = \"expr\", wait = \"EXPR\", unit = \"slots\" }}: the wait after the n-th failure;");
        println!("  unit = \"slots\", \"s\", \"ms\" or \"us\"; optional init, on_failure, on_success (state kept");
        println!("  across frames or calls) and attempt_limit (bus). Names: n, prev, observed, slot (bus),");
        println!("  retry_after (clients), the state init declares. docs/expressions.md lists the functions.");
        println!();
        println!("windows (a table of windows)");
        println!("  backoff = {{ kind = \"windows\", windows = [2, 3, 5, 8, 13], repeat = false }}: r uniform on");
        println!("  0..w-1 slots, w the n-th window; past the table the last again, or from the start with repeat");
        println!();
        println!(
            "channel access ([medium] access): {} (default csma-cd; csma-cd-p-persistent needs p)",
            Access::NAMES.join(", ")
        );
    }
    Ok(())
}
