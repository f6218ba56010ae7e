//! Every TOML example in docs/scenario.md parses, as a scenario or as a
//! sweep, and draws no warning: an example that stops parsing fails here.

use crate::common::repo;
use csmacd::scenario;
use csmacd::sweep;

/// The fenced ```toml blocks of a Markdown file, with the line each starts on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim_start().starts_with("```toml") => {
                current = Some((i + 1, String::new()))
            }
            Some(_) if line.trim_start().starts_with("```") => out.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "an unclosed ```toml block");
    out
}

#[test]
fn every_toml_example_in_the_scenario_docs_parses() {
    let path = repo().join("docs/scenario.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let blocks = toml_blocks(&text);
    assert!(blocks.len() >= 6, "{} examples", blocks.len());
    let mut sweeps = 0;
    for (line, body) in &blocks {
        let name = format!("docs/scenario.md, the example at line {line}");
        // As the CLI reads it: a scenario is a sweep of one point.
        let plan =
            sweep::from_str(&name, "example", body, None).unwrap_or_else(|e| panic!("{e}\n{body}"));
        let warnings = sweep::checks::warnings(&plan, &name, body);
        assert!(warnings.is_empty(), "{warnings:?}");
        if plan.axes.is_empty() {
            scenario::from_str(&name, "example", body).unwrap_or_else(|e| panic!("{e}\n{body}"));
        } else {
            sweeps += 1;
        }
    }
    assert!(sweeps >= 1, "no sweep example");
}

#[test]
fn the_scenario_docs_name_every_key() {
    use csmacd::ethernet::Access;
    use csmacd::scenario::policies::POLICIES;
    let text = std::fs::read_to_string(repo().join("docs/scenario.md")).unwrap();
    let traffic = [
        "saturated",
        "poisson",
        "periodic",
        "burst",
        "on-off",
        "load",
        "rate",
        "interval",
        "phase",
        "frames",
        "at",
        "mean_on",
        "mean_off",
        "alpha",
    ];
    let frame = [
        "imix", "fixed", "size", "uniform", "min", "max", "mix", "sizes", "weights",
    ];
    let sweep_and_charts = [
        "[sweep]",
        "[[chart]]",
        "x",
        "y",
        "series",
        "title",
        "name",
        "x_scale",
        "y_scale",
        "size",
    ];
    let placement = ["\"even\"", "\"interleaved\"", "\"grouped\"", "\"random\""];
    let kinds: Vec<&str> = POLICIES.iter().map(|d| d.kind).collect();
    let missing: Vec<&&str> = scenario::TOP_KEYS
        .iter()
        .chain(scenario::MEDIUM_KEYS)
        .chain(scenario::GROUP_KEYS)
        .chain(&traffic)
        .chain(&frame)
        .chain(&sweep_and_charts)
        .chain(&placement)
        .chain(Access::NAMES)
        .chain(&kinds)
        .filter(|k| {
            // As a key, a word, a table or a key being set.
            let forms = [
                format!("`{k}`"),
                format!("\"{k}\""),
                format!("`[{k}]`"),
                format!("`[[{k}]]`"),
                format!(" {k} = "),
            ];
            !forms.iter().any(|f| text.contains(f.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/scenario.md does not name {missing:?}"
    );
}

/// A heading written twice in one document is two texts of one section that
/// drift apart (one of them goes stale): every heading of docs/, README.md
/// and ARCHITECTURE.md is unique within its file (fenced code aside).
#[test]
fn no_document_has_a_section_twice() {
    let mut files = vec![repo().join("README.md"), repo().join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    assert!(files.len() > 4, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut seen = std::collections::HashMap::new();
        let mut fenced = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced || !line.starts_with('#') {
                continue;
            }
            let title = line.trim_start_matches('#').trim();
            if let Some(first) = seen.insert(title.to_string(), i + 1) {
                panic!(
                    "{}: the heading {title:?} at line {} repeats the one at line {first}",
                    path.display(),
                    i + 1
                );
            }
        }
    }
}
