//! A path-tracking reader over a TOML table: every value is read through it, so
//! every error names its dotted key, and keys nobody read are reported as unknown.

use crate::units::{self, TimeSpec};
use toml::{Table, Value};

/// A value that is wrong, at a dotted key path such as `stations.0.frame`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, FieldError>;

/// A name (of a scenario, of a group): 1 to `most` printable characters,
/// counted as characters (an "é" is one, though two bytes), with no
/// control character (a terminal would obey an escape sequence in it when
/// it is printed). `example` shows one.
pub fn name(item: Item, most: usize, example: &str) -> Result<String> {
    let v = item.str()?.trim();
    let chars = v.chars().count();
    let allowed = format!("allowed: 1 to {most} printable characters, e.g. name = \"{example}\"");
    if v.is_empty() {
        return Err(item.err(format!("is empty; {allowed}")));
    }
    if let Some(c) = v.chars().find(|c| c.is_control()) {
        return Err(item.err(format!(
            "holds the control character U+{:04X}; {allowed}",
            c as u32
        )));
    }
    if chars > most {
        return Err(item.err(format!("is {chars} characters long; {allowed}")));
    }
    Ok(v.to_string())
}

/// A value as an error names it: "the integer 5", "the string \"hub\"".
pub fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the string \"{s}\""),
        Value::Integer(i) => format!("the integer {i}"),
        Value::Float(f) => format!("the number {f}"),
        Value::Boolean(b) => format!("the boolean {b}"),
        other => type_name(other).to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Joins a parent path and a key or index.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// One value with its path, for readers of arrays and polymorphic keys.
#[derive(Clone, Copy)]
pub struct Item<'a> {
    pub path: &'a str,
    pub value: &'a Value,
}

impl<'a> Item<'a> {
    pub fn err(&self, message: impl Into<String>) -> FieldError {
        FieldError::new(self.path, message)
    }

    fn wrong_type(&self, wanted: &str) -> FieldError {
        self.err(format!(
            "expected {wanted}, found {}",
            type_name(self.value)
        ))
    }

    pub fn str(&self) -> Result<&'a str> {
        self.value
            .as_str()
            .ok_or_else(|| self.wrong_type("a string"))
    }

    /// A fraction: a number (0.8) or a percentage ("80%").
    pub fn fraction(&self) -> Result<f64> {
        let Value::String(s) = self.value else {
            return match self.value {
                Value::Float(_) | Value::Integer(_) => self.float(),
                _ => Err(self.wrong_type("a number or a percentage such as \"80%\"")),
            };
        };
        let t = s.trim();
        match t.strip_suffix('%').map(str::trim).map(str::parse::<f64>) {
            Some(Ok(v)) if v.is_finite() => Ok(v / 100.0),
            Some(_) => Err(self.err(format!(
                "`{s}` is not a percentage; write a number and %, e.g. \"80%\", or a fraction, e.g. 0.8"
            ))),
            None if t.parse::<f64>().is_ok() => Err(self.err(format!(
                "`{s}` is text; write a number without quotes (e.g. 0.8) or a percentage with % (e.g. \"80%\")"
            ))),
            None => Err(self.err(format!(
                "`{s}` is not a number; write a fraction, e.g. 0.8, or a percentage, e.g. \"80%\""
            ))),
        }
    }

    pub fn float(&self) -> Result<f64> {
        match self.value {
            Value::Float(f) if f.is_finite() => Ok(*f),
            Value::Float(f) => Err(self.err(format!("{f} is not a finite number"))),
            Value::Integer(i) => Ok(*i as f64),
            _ => Err(self.wrong_type("a number")),
        }
    }

    pub fn integer(&self) -> Result<i64> {
        self.value
            .as_integer()
            .ok_or_else(|| self.wrong_type("an integer"))
    }

    pub fn boolean(&self) -> Result<bool> {
        self.value
            .as_bool()
            .ok_or_else(|| self.wrong_type("true or false"))
    }

    pub fn array(&self) -> Result<&'a Vec<Value>> {
        self.value
            .as_array()
            .ok_or_else(|| self.wrong_type("an array"))
    }

    /// Reads a quantity string with `parse`, naming the key on failure. A
    /// number without a unit (`10` or `"10"`) is refused with the quantity
    /// written as it should be, `suggest` giving the text for the number.
    pub fn quantity<T>(
        &self,
        parse: fn(&str) -> std::result::Result<T, units::UnitError>,
        suggest: fn(f64) -> String,
    ) -> Result<T> {
        let bare = match self.value {
            Value::Integer(i) => Some(*i as f64),
            Value::Float(f) if f.is_finite() => Some(*f),
            _ => None,
        };
        if let Some(v) = bare {
            return Err(self.err(format!(
                "{} has no unit; write the quantity in quotes with its unit, e.g. \"{}\"",
                self.value,
                suggest(v)
            )));
        }
        let s = self.str()?;
        parse(s).map_err(|e| match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => self.err(format!("{}; write e.g. \"{}\"", e.0, suggest(v))),
            _ => self.err(e.0),
        })
    }

    /// A duration: a string with a unit, e.g. "51.2us", "96bit", "4slot".
    /// A bare number is refused with a suggestion in the unit its key is
    /// usually written in: bits for the medium's timing, slots for a
    /// policy's waits, seconds for the rest.
    pub fn time(&self) -> Result<TimeSpec> {
        let key = self.path.rsplit('.').next().unwrap_or_default();
        // A service client's waits have no slot unless its group gives one:
        // a suggestion in slots would then be refused in turn.
        let service = self.path.starts_with("clients.");
        let suggest: fn(f64) -> String = match key {
            "slot" | "preamble" | "ifg" | "jam" | "burst_limit" if !service => {
                |v| format!("{v}bit")
            }
            "base" | "cap" | "delay" | "jitter" if service => |v| format!("{v}ms"),
            "base" | "cap" | "delay" | "jitter" => |v| format!("{v}slot"),
            _ => |v| format!("{v}s"),
        };
        let t = self.quantity(units::parse_time, suggest)?;
        let v = match t {
            TimeSpec::Ps(v) | TimeSpec::Bits(v) | TimeSpec::Slots(v) => v,
        };
        if v < 0.0 {
            return Err(self.err(format!(
                "{} is negative; a duration must be >= 0",
                self.str()?
            )));
        }
        Ok(t)
    }
}

/// Reads the keys of one table, remembering which were read.
pub struct Fields<'a> {
    pub path: String,
    table: &'a Table,
    seen: Vec<String>,
}

impl<'a> Fields<'a> {
    pub fn new(path: impl Into<String>, table: &'a Table) -> Self {
        Fields {
            path: path.into(),
            table,
            seen: Vec::new(),
        }
    }

    /// Reads a table-valued item as a table of fields.
    pub fn of(item: Item<'a>) -> Result<Self> {
        match item.value {
            Value::Table(t) => Ok(Fields::new(item.path, t)),
            // A kind's name alone ("saturated", "once"): the table it stands for.
            Value::String(s)
                if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
            {
                let key = item.path.rsplit('.').next().unwrap_or_default();
                Err(item.err(format!(
                    "expected a table, found the string \"{s}\"; write it as a table with its \
                     kind, e.g. {key} = {{ kind = \"{s}\" }} and the keys that kind takes"
                )))
            }
            _ => Err(item.wrong_type("a table")),
        }
    }

    pub fn key_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    pub fn err(&self, key: &str, message: impl Into<String>) -> FieldError {
        FieldError::new(self.key_path(key), message)
    }

    /// The raw value of `key`, if present, marking it as read.
    pub fn get(&mut self, key: &str) -> Option<&'a Value> {
        let v = self.table.get(key)?;
        self.seen.push(key.to_string());
        Some(v)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    /// Calls `f` with the item at `key`, if present.
    pub fn with<T>(
        &mut self,
        key: &str,
        f: impl FnOnce(Item<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let path = self.key_path(key);
        match self.get(key) {
            None => Ok(None),
            Some(value) => f(Item { path: &path, value }).map(Some),
        }
    }

    pub fn require<T>(&self, key: &str, v: Option<T>, what: &str) -> Result<T> {
        v.ok_or_else(|| self.err(key, format!("missing; {what}")))
    }

    pub fn string(&mut self, key: &str) -> Result<Option<String>> {
        self.with(key, |i| i.str().map(str::to_string))
    }

    pub fn boolean(&mut self, key: &str) -> Result<Option<bool>> {
        self.with(key, |i| i.boolean())
    }

    /// An integer in `min..=max`.
    pub fn integer(&mut self, key: &str, min: i64, max: i64) -> Result<Option<i64>> {
        self.with(key, |i| {
            let v = i.integer()?;
            if v < min || v > max {
                return Err(i.err(format!("{v} is out of range; allowed: {min} to {max}")));
            }
            Ok(v)
        })
    }

    /// A number in `[min, max]` (integers are accepted as numbers).
    pub fn float(&mut self, key: &str, min: f64, max: f64) -> Result<Option<f64>> {
        self.with(key, |i| {
            let v = i.float()?;
            if !(v >= min && v <= max) {
                return Err(i.err(format!("{v} is out of range; allowed: {min} to {max}")));
            }
            Ok(v)
        })
    }

    /// A fraction in `[min, max]`: a number or a percentage ("80%").
    pub fn fraction(&mut self, key: &str, min: f64, max: f64) -> Result<Option<f64>> {
        self.with(key, |i| {
            let v = i.fraction()?;
            if !(v >= min && v <= max) {
                let written = match i.value {
                    Value::String(s) => format!("`{s}`"),
                    _ => v.to_string(),
                };
                return Err(i.err(format!(
                    "{written} is out of range; allowed: {min} to {max}"
                )));
            }
            Ok(v)
        })
    }

    pub fn time(&mut self, key: &str) -> Result<Option<TimeSpec>> {
        self.with(key, |i| i.time())
    }

    /// One of the listed words.
    pub fn choice(&mut self, key: &str, allowed: &[&str]) -> Result<Option<String>> {
        self.with(key, |i| {
            let s = i.str()?;
            if allowed.contains(&s) {
                Ok(s.to_string())
            } else {
                Err(i.err(format!(
                    "`{s}` is not allowed{}; allowed: {}",
                    did_you_mean(s, allowed),
                    allowed.join(", ")
                )))
            }
        })
    }

    /// Errors on the first key not in `allowed`, before any value is read,
    /// so that a misspelt key is reported as such and not as a missing one.
    pub fn allow(&self, allowed: &[&str]) -> Result<()> {
        for key in self.table.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(unknown(&self.path, key, allowed));
            }
        }
        Ok(())
    }

    /// Errors on the first key that was never read, listing those that are allowed.
    pub fn finish(self, allowed: &[&str]) -> Result<()> {
        for key in self.table.keys() {
            if !self.seen.iter().any(|s| s == key) {
                return Err(unknown(&self.path, key, allowed));
            }
        }
        Ok(())
    }
}

/// A key as TOML spells it: bare when it can be, else quoted, so that an empty
/// or odd key is visible in a message.
fn spelled(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// " (did you mean `beb`?)" when one of `allowed` is within two edits of
/// `word`, else nothing.
pub fn did_you_mean(word: &str, allowed: &[&str]) -> String {
    allowed
        .iter()
        .map(|a| (edit_distance(a, word), a))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, a)| format!(" (did you mean `{a}`?)"))
        .unwrap_or_default()
}

fn unknown(path: &str, key: &str, allowed: &[&str]) -> FieldError {
    let key = &spelled(key);
    let hint = did_you_mean(key, allowed);
    FieldError::new(
        join(path, key),
        format!(
            "unknown key `{key}`{hint}; allowed here: {}",
            allowed.join(", ")
        ),
    )
}

/// Levenshtein distance, for suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
