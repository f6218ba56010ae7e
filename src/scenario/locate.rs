//! Finds the line of a dotted key path in the scenario's source text, so that an
//! error can say where to look.

use toml::de::{DeTable, DeValue};

/// The 1-based line of the value at `path` ("stations.0.frame"); for a path that
/// is not in the file, the line of its nearest ancestor that is.
pub fn line_of(source: &str, path: &str) -> Option<usize> {
    let doc = DeTable::parse(source).ok()?;
    let segs: Vec<&str> = path.split('.').filter(|s| !s.is_empty()).collect();
    let mut span = None;
    let mut table: Option<&DeTable> = Some(doc.get_ref());
    let mut value: Option<&DeValue> = None;
    let mut i = 0;
    while i < segs.len() {
        // A key may itself hold dots (`"stations.0.count" = [...]` in a
        // [sweep] table): try the longest run of segments first.
        let next = if let Some(t) = table {
            (i + 1..=segs.len()).rev().find_map(|j| {
                let key = segs[i..j].join(".");
                t.iter()
                    .find(|(k, _)| k.get_ref().as_ref() == key)
                    .map(|(k, v)| (j, k.span(), v))
            })
        } else if let (Some(DeValue::Array(a)), Ok(n)) = (value, segs[i].parse::<usize>()) {
            a.get(n).map(|v| (i + 1, v.span(), v))
        } else {
            None
        };
        let Some((j, s, v)) = next else { break };
        i = j;
        span = Some(s);
        value = Some(v.get_ref());
        table = match v.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => None,
        };
    }
    let start = span?.start;
    Some(source[..start.min(source.len())].matches('\n').count() + 1)
}

/// The 1-based line of a byte offset.
pub fn line_of_offset(source: &str, offset: usize) -> usize {
    source[..offset.min(source.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_array_items() {
        let src = "name = \"x\"\n[medium]\nlength = \"2500m\"\n\n[[stations]]\ncount = 2\n\n[[stations]]\ncount = 3\nframe = \"64B\"\n";
        assert_eq!(line_of(src, "name"), Some(1));
        assert_eq!(line_of(src, "medium.length"), Some(3));
        assert_eq!(line_of(src, "stations.1.frame"), Some(10));
        assert_eq!(line_of(src, "stations.0.count"), Some(6));
        // Missing key: falls back to its parent.
        assert_eq!(line_of(src, "medium.speed"), Some(2));
        let sweep = "name = \"x\"\n[sweep]\n\"stations.0.count\" = [1, 2]\n";
        assert_eq!(line_of(sweep, "sweep.stations.0.count"), Some(3));
    }
}
