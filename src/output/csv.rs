//! The CSV tables as bytes: summary.csv and runs.csv from the runs' named
//! metrics, and one file per table a world's runs give (stations.csv, ...).
//! Nothing here touches a file, and nothing here knows a world.

use crate::results::{Cell, Columns, RunOutput, TableSpec};
use crate::stats::mean_ci95;

/// A number as CSV text: shortest round-trip form, empty when undefined.
pub fn num(x: f64) -> String {
    let mut text = String::new();
    push_num(&mut text, x);
    text
}

/// [`num`], appended to `out`: the text of Rust's `Display` for `f64`
/// (shortest round-trip digits, never an exponent), made by `zmij` where
/// the two agree, several times faster. They find the same digits except
/// at an exact tie between two shortest ones (they round it differently),
/// which [`no_tie`] rules out; `zmij` writes large and small numbers with
/// an exponent, and a whole number with ".0". `Display` writes the rest.
fn push_num(out: &mut String, x: f64) {
    use std::fmt::Write;
    if x.is_nan() {
        // Undefined: an empty field.
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
    } else {
        let mut buffer = zmij::Buffer::new();
        let text = buffer.format_finite(x);
        if no_tie(x) && !text.contains('e') {
            out.push_str(text.strip_suffix(".0").unwrap_or(text));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "{x}");
        }
    }
}

/// Whether finite `x` has one closest shortest round-trip decimal: true for
/// a whole number below 2^53 (its own digits), and for `m * 2^e` with `m`
/// odd and `e <= -26`, whose exact decimal `m * 5^-e / 10^-e` has at least
/// 19 significant digits (5^26 has 19). A tie between two shortest
/// decimals of k digits needs an exact value of k + 1 digits, and k is at
/// most 17. (The ends of a number's rounding interval, `(2m ± 1) *
/// 2^(e-1)`, have as many digits, so neither can be a shortest decimal
/// either, and the two writers' views of whether an end belongs to the
/// interval never matter.)
fn no_tie(x: f64) -> bool {
    let bits = x.to_bits();
    let (biased, fraction) = ((bits >> 52) & 0x7ff, bits & ((1 << 52) - 1));
    let (m, e) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, biased as i64 - 1075)
    };
    if m == 0 {
        return true;
    }
    let e = e + i64::from(m.trailing_zeros());
    e <= -26 || (e >= 0 && x.abs() < 9_007_199_254_740_992.0)
}

/// Fields as CSV text, quoted where they need it and joined by commas,
/// without a line end: a row's start, or a text cell. (The writer closes a
/// quoted field at the record's end; a record of one empty field it writes
/// as `""`, which, in a row of several, is just empty.)
fn csv_fields<T: AsRef<[u8]>>(fields: &[T]) -> Vec<u8> {
    if let [one] = fields {
        if one.as_ref().is_empty() {
            return Vec::new();
        }
    }
    let mut text = csv_bytes(fields, &[]);
    text.pop();
    text
}

/// Bytes of a table's text gathered before they are written.
const WRITE_EVERY: usize = 1 << 16;

/// One simulated point: its axis values, the columns of its world, and the
/// runs of its replications.
pub struct PointRuns<'a> {
    pub axes: &'a [(String, String)],
    pub seeds: &'a [u64],
    pub columns: Columns,
    pub runs: &'a [RunOutput],
}

pub(super) fn csv_bytes<T: AsRef<[u8]>>(header: &[T], rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = w.write_record(header);
    for r in rows {
        let _ = w.write_record(r);
    }
    w.into_inner().unwrap_or_default()
}

fn axis_header(points: &[PointRuns]) -> Vec<String> {
    points
        .first()
        .map(|p| p.axes.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default()
}

/// summary.csv: one row per point; the axes, then each metric's mean and its
/// Student-t 95 % half-width `<metric>_ci95` (empty with one replication).
pub fn summary_csv(points: &[PointRuns]) -> Vec<u8> {
    let names = axis_header(points);
    let metrics = points.first().map_or(&[][..], |p| p.columns.metrics);
    let values: Vec<Vec<Vec<f64>>> = points
        .iter()
        .map(|p| p.runs.iter().map(|r| r.metrics.clone()).collect())
        .collect();
    summary_bytes(
        &names,
        metrics,
        points.iter().zip(&values).map(|(p, v)| {
            (
                p.axes.iter().map(|(_, x)| x.clone()).collect(),
                v.as_slice(),
            )
        }),
    )
}

/// summary.csv from each point's axis values and its runs' metric values.
pub(super) fn summary_bytes<'a>(
    axis_names: &[String],
    metrics: &[&str],
    points: impl Iterator<Item = (Vec<String>, &'a [Vec<f64>])>,
) -> Vec<u8> {
    let mut header = axis_names.to_vec();
    header.push("replications".into());
    for c in metrics {
        header.push(c.to_string());
        header.push(format!("{c}_ci95"));
    }
    let rows: Vec<Vec<String>> = points
        .map(|(axes, runs)| {
            let mut row = axes;
            row.push(runs.len().to_string());
            for k in 0..metrics.len() {
                let vals: Vec<f64> = runs.iter().map(|r| r[k]).collect();
                let (m, h) = mean_ci95(&vals);
                row.push(num(m));
                row.push(num(h));
            }
            row
        })
        .collect();
    csv_bytes(&header, &rows)
}

/// runs.csv: one row per point and replication, with the run's seed.
pub fn runs_csv(points: &[PointRuns]) -> Vec<u8> {
    let header = match points.first() {
        Some(p) => runs_header(p.axes, &p.columns),
        None => Vec::new(),
    };
    let mut rows = Vec::new();
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            let mut row: Vec<String> = p.axes.iter().map(|(_, v)| v.clone()).collect();
            row.push(r.to_string());
            row.push(p.seeds[r].to_string());
            row.extend(run.metrics.iter().map(|&v| num(v)));
            rows.push(row);
        }
    }
    csv_bytes(&header, &rows)
}

/// One of the world's tables (`spec`, at position `k` of its tables) as
/// `<name>.csv`: one row per point, replication and table row.
pub fn table_csv(points: &[PointRuns], k: usize) -> Vec<u8> {
    let mut text = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = table_csv_into(&mut text, points, k);
    text
}

/// [`table_csv`], written to `w` as it is made.
pub fn table_csv_into(
    w: &mut dyn std::io::Write,
    points: &[PointRuns],
    k: usize,
) -> std::io::Result<()> {
    let Some(spec) = points.first().and_then(|p| p.columns.tables.get(k)) else {
        return Ok(());
    };
    let header = table_header(points.first().map_or(&[], |p| p.axes), spec);
    w.write_all(&csv_bytes(&header, &[]))?;
    // Row by row, as the rows are read: a crowd's table has a row per
    // station, and holding its rows as strings first took several times the
    // memory of the text itself. The fields that may need quoting (axis
    // values and texts) go through the CSV writer; numbers never do (digits,
    // '.', '-', "inf"), and are written as they are, with no string each.
    let (mut text, mut digits) = (String::new(), itoa::Buffer::new());
    let mut out: Vec<u8> = Vec::with_capacity(WRITE_EVERY + 4096);
    for p in points {
        for (r, run) in p.runs.iter().enumerate() {
            // The axis values and the replication, on every row of the run.
            let mut lead: Vec<&str> = p.axes.iter().map(|(_, v)| v.as_str()).collect();
            let replication = r.to_string();
            lead.push(&replication);
            let lead_fields = lead.len();
            let lead = csv_fields(&lead);
            for cells in run.tables[k].iter() {
                // Every row as wide as the header, as the CSV writer
                // checked when it wrote whole records.
                if lead_fields + cells.len() != header.len() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "{}.csv: a row of {} fields under a header of {}",
                            spec.name,
                            lead_fields + cells.len(),
                            header.len()
                        ),
                    ));
                }
                out.extend_from_slice(&lead);
                for c in cells {
                    out.push(b',');
                    match c {
                        Cell::Count(n) => out.extend_from_slice(digits.format(*n).as_bytes()),
                        Cell::Number(x) => {
                            text.clear();
                            push_num(&mut text, *x);
                            out.extend_from_slice(text.as_bytes());
                        }
                        Cell::Text(t) => out.extend_from_slice(&csv_fields(&[t.as_str()])),
                    }
                }
                out.push(b'\n');
                if out.len() >= WRITE_EVERY {
                    w.write_all(&out)?;
                    out.clear();
                }
            }
        }
    }
    w.write_all(&out)?;
    w.flush()
}

/// stations.csv: one row per point, replication and station.
pub fn stations_csv(points: &[PointRuns]) -> Vec<u8> {
    let k = points
        .first()
        .and_then(|p| p.columns.tables.iter().position(|t| t.name == "stations"));
    k.map(|k| table_csv(points, k)).unwrap_or_default()
}

/// A table's columns for a point with these axes.
pub(super) fn table_header(axes: &[(String, String)], spec: &TableSpec) -> Vec<String> {
    let mut h: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.extend(spec.columns.iter().map(|c| c.to_string()));
    h
}

/// A header row as one line of CSV text, without its line end.
pub(super) fn header_line(names: Vec<String>) -> String {
    let bytes = csv_bytes(&names, &[]);
    String::from_utf8_lossy(&bytes).trim_end().to_string()
}

/// runs.csv's columns for a point with these axes.
pub(super) fn runs_header(axes: &[(String, String)], columns: &Columns) -> Vec<String> {
    let mut h: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
    h.push("replication".into());
    h.push("seed".into());
    h.extend(columns.metrics.iter().map(|c| c.to_string()));
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Columns, Table, TableSpec};
    use rand::{RngExt, SeedableRng};

    /// A number's text is `Display`'s, whatever its size: whole numbers,
    /// the edges where a shortest-digits writer turns to exponents, the
    /// smallest and largest doubles, and many drawn at random, both as bit
    /// patterns (every magnitude) and as the values a run measures.
    #[test]
    fn numbers_are_written_as_display_writes_them() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1e-5,
            9.99e-6,
            1e-4,
            1e15,
            1e16,
            9_007_199_254_740_993.0,
            1e21,
            1e22,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::EPSILON,
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for _ in 0..100_000 {
            values.push(f64::from_bits(rng.random::<u64>()));
            values.push(rng.random_range(0.0..1e4));
            values.push(rng.random_range(0..1_000_000u64) as f64 / 1000.0);
            values.push(rng.random_range(0..1u64 << 53) as f64);
            // Few binary fractional digits, at every magnitude: where two
            // shortest decimals can tie.
            let m = rng.random_range(1..1u64 << 53) as f64;
            values.push(m * 2f64.powi(-rng.random_range(1..60)));
        }
        for x in values.into_iter().filter(|x| x.is_finite()) {
            assert_eq!(num(x), format!("{x}"), "bits {:#x}", x.to_bits());
        }
        assert_eq!(num(f64::NAN), "");
        assert_eq!(num(f64::INFINITY), "inf");
        assert_eq!(num(f64::NEG_INFINITY), "-inf");
    }

    /// A row that is not as wide as the header is refused, as the CSV
    /// writer refused it, instead of written.
    #[test]
    fn a_row_wider_than_the_header_is_refused() {
        static SPEC: [TableSpec; 1] = [TableSpec {
            name: "t",
            columns: &["n"],
        }];
        let columns = Columns {
            metrics: &[],
            headline: &[],
            tables: &SPEC,
        };
        let runs = [RunOutput {
            columns,
            metrics: Vec::new(),
            tables: vec![[vec![Cell::Count(1), Cell::Count(2)]].into_iter().collect()],
            events: 0,
            failure: None,
        }];
        let point = PointRuns {
            axes: &[],
            seeds: &[1],
            columns,
            runs: &runs,
        };
        let err = table_csv_into(&mut Vec::new(), &[point], 0).expect_err("refused");
        assert!(err.to_string().contains("t.csv"), "{err}");
    }

    /// A table's rows are written field by field: counts, numbers (empty
    /// when undefined), texts quoted where CSV needs it, after the axes and
    /// the replication.
    #[test]
    fn a_table_is_written_field_by_field() {
        static SPEC: [TableSpec; 1] = [TableSpec {
            name: "t",
            columns: &["n", "x", "name"],
        }];
        let columns = Columns {
            metrics: &[],
            headline: &[],
            tables: &SPEC,
        };
        let rows = |k: u64| -> Table {
            [
                vec![Cell::Count(k), Cell::Number(0.5), Cell::text("plain")],
                vec![Cell::Count(7), Cell::Number(f64::INFINITY), Cell::text("")],
                vec![
                    Cell::Count(u64::MAX),
                    Cell::Number(f64::NAN),
                    Cell::text("a, \"b\""),
                ],
            ]
            .into_iter()
            .collect()
        };
        let runs: Vec<RunOutput> = (0..2)
            .map(|k| RunOutput {
                columns,
                metrics: Vec::new(),
                tables: vec![rows(k)],
                events: 0,
                failure: None,
            })
            .collect();
        let axes = [
            ("load".to_string(), "0.25".to_string()),
            ("policy".to_string(), "beb, capped".to_string()),
        ];
        let point = PointRuns {
            axes: &axes,
            seeds: &[1, 2],
            columns,
            runs: &runs,
        };
        let text = String::from_utf8(table_csv(&[point], 0)).expect("utf-8");
        assert_eq!(
            text,
            "load,policy,replication,n,x,name\n\
             0.25,\"beb, capped\",0,0,0.5,plain\n\
             0.25,\"beb, capped\",0,7,inf,\n\
             0.25,\"beb, capped\",0,18446744073709551615,,\"a, \"\"b\"\"\"\n\
             0.25,\"beb, capped\",1,1,0.5,plain\n\
             0.25,\"beb, capped\",1,7,inf,\n\
             0.25,\"beb, capped\",1,18446744073709551615,,\"a, \"\"b\"\"\"\n"
        );
    }
}
