//! Text fitted to a width, as the embedded font measures it: wrapped into
//! lines, or shortened with an ellipsis.

use crate::output::style;

/// Breaks `text` into lines no wider than `width` at `size`.
pub(super) fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && style::text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Shortens `text` with an ellipsis to fit `width` at `size`.
pub(super) fn fit(text: &str, size: f64, width: f64) -> String {
    if style::text_width(text, size) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    for n in (1..chars.len()).rev() {
        let t: String = chars[..n].iter().collect::<String>() + "…";
        if style::text_width(&t, size) <= width {
            return t;
        }
    }
    "…".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping() {
        let lines = wrap("one two three four five six", 14.0, 80.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| style::text_width(l, 14.0) <= 80.0));
    }
}
