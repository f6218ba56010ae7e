//! A lesson's chart: the closed form drawn as a line, the simulation drawn
//! over it as points (with their 95 % intervals where there are
//! replications), and the numbers drawn written beside it as CSV.

use crate::output::chart::{Chart, Legend, Look, Point, Scale, Series};
use crate::output::style::Styles;
use std::path::{Path, PathBuf};

/// A chart a lesson draws with `--out`: `name`.png and `name`.csv.
#[derive(Clone, Debug)]
pub struct LessonChart {
    pub name: String,
    pub chart: Chart,
    /// The style of each label: a closed form and the simulation of the
    /// same thing share a colour.
    pub styles: Styles,
}

impl LessonChart {
    /// The series labelled `label`, if the chart draws it.
    pub fn series(&self, label: &str) -> Option<&Series> {
        self.chart.series.iter().find(|s| s.label == label)
    }

    /// The CSV of what the chart draws, as every chart writes it (see
    /// [`crate::output::chart::points_csv`]).
    pub fn csv(&self) -> Vec<u8> {
        crate::output::chart::points_csv(&self.chart, &self.styles)
    }

    /// Writes `name`.png and `name`.csv into `dir`, each whole or not at all.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        let png = dir.join(format!("{}.png", self.name));
        let csv = dir.join(format!("{}.csv", self.name));
        let bytes = crate::output::chart::render_png(&self.chart, &self.styles)
            .map_err(|e| format!("cannot write {}: {e}", png.display()))?;
        crate::output::write_atomic(&png, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", png.display()))?;
        crate::output::write_atomic(&csv, &self.csv())
            .map_err(|e| format!("cannot write {}: {e}", csv.display()))?;
        Ok(vec![png, csv])
    }
}

/// Builds a lesson chart series by series.
pub(super) struct Builder {
    chart: Chart,
    styles: Vec<(String, usize)>,
}

impl Builder {
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Builder {
            chart: Chart {
                title: title.into(),
                x_label: x_label.into(),
                y_label: y_label.into(),
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
                categories: None,
                series: Vec::new(),
                panels: Vec::new(),
                legend: Legend::Entries { title: None },
                caption: String::new(),
                size: (1000, 640),
                shade: None,
                lines_only: false,
            },
            styles: Vec::new(),
        }
    }

    pub fn log_y(mut self) -> Self {
        self.chart.y_scale = Scale::Log;
        self
    }

    pub fn caption(mut self, text: impl Into<String>) -> Self {
        self.chart.caption = text.into();
        self
    }

    /// A closed form: a line through `points`, in style `style`.
    pub fn theory(
        &mut self,
        label: &str,
        style: usize,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) {
        self.closed_form(label, style, points, Look::Theory);
    }

    /// A closed form of a discrete distribution: a bar at each of `points`.
    pub fn theory_bars(
        &mut self,
        label: &str,
        style: usize,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) {
        self.closed_form(label, style, points, Look::TheoryBars);
    }

    /// A closed form's exact points, drawn as `look`.
    fn closed_form(
        &mut self,
        label: &str,
        style: usize,
        points: impl IntoIterator<Item = (f64, f64)>,
        look: Look,
    ) {
        let points = points
            .into_iter()
            .map(|(x, y)| Point {
                x,
                y: Some(y),
                ci: None,
            })
            .collect();
        self.push(label, style, points, look);
    }

    /// Simulated points (x, y, 95 % interval), in style `style`.
    pub fn simulated(
        &mut self,
        label: &str,
        style: usize,
        points: impl IntoIterator<Item = (f64, Option<f64>, Option<(f64, f64)>)>,
    ) {
        let points = points
            .into_iter()
            .map(|(x, y, ci)| Point { x, y, ci })
            .collect();
        self.push(label, style, points, Look::Measured);
    }

    fn push(&mut self, label: &str, style: usize, points: Vec<Point>, look: Look) {
        self.chart.series.push(Series {
            label: label.into(),
            panel: 0,
            points,
            look,
        });
        self.styles.push((label.into(), style));
    }

    pub fn done(self, name: &str) -> LessonChart {
        LessonChart {
            name: name.to_string(),
            chart: self.chart,
            styles: Styles::of_indices(self.styles),
        }
    }
}

/// `n` + 1 evenly spaced values from `lo` to `hi`, for drawing a closed form.
pub(super) fn grid(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..=n).map(move |i| lo + (hi - lo) * i as f64 / n as f64)
}

/// The 95 % Wilson interval of a fraction: `k` successes in `n` trials.
pub(super) fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z = 1.96f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_holds_the_fraction_and_narrows_with_n() {
        let (lo, hi) = wilson(50.0, 100.0);
        assert!(lo < 0.5 && 0.5 < hi);
        // 0.5 ± 1.96 sqrt(0.25 / 100) = 0.5 ± 0.098, nearly.
        assert!((hi - lo - 0.196).abs() < 0.005, "{lo} {hi}");
        let (lo2, hi2) = wilson(500.0, 1000.0);
        assert!(hi2 - lo2 < hi - lo);
        let (lo0, hi0) = wilson(0.0, 100.0);
        assert_eq!(lo0, 0.0);
        assert!(hi0 > 0.0 && hi0 < 0.05);
    }
}
