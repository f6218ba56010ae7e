//! Lays a [`Chart`] out and draws it: the title, one plot or a grid of
//! panels on shared axes, series with their marker, dash and whiskers, the
//! legend beside the plot and the caption below it.

mod axes;
mod legend;
mod pen;
mod series;
mod text;

use super::{Chart, ChartError};
use crate::output::png::Png;
use crate::output::style::{self, size as font_size, Styles};
use axes::{draw_panel, extent, x_axis, y_axis, Frame};
use legend::{draw_legend, legend_box};
use pen::{Drawn, Pen};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use series::draw_series;
use std::path::Path;
use text::{fit, wrap};

/// Draws the chart as SVG text.
pub fn render_svg(chart: &Chart, styles: &Styles) -> Result<String, ChartError> {
    style::register();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size).into_drawing_area();
        paint(&root, chart, styles).map_err(ChartError::Draw)?;
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(svg)
}

/// Draws the chart as a PNG file at `path` (which must end in .png): the
/// encoder writes the file itself, so callers pass a temporary path
/// ([`crate::output::write_atomic_with`]) to keep the write atomic.
pub fn render_png(chart: &Chart, styles: &Styles, path: &Path) -> Result<(), ChartError> {
    let root = Png::new(path, chart.size).into_drawing_area();
    paint(&root, chart, styles).map_err(ChartError::Draw)?;
    root.present().map_err(|e| ChartError::Draw(e.to_string()))
}

/// Columns and rows of a grid of `n` panels.
pub(super) fn grid(n: usize) -> (usize, usize) {
    let cols = match n {
        0..=3 => n.max(1),
        4 => 2,
        _ => (n as f64).sqrt().ceil() as usize,
    };
    (cols, n.div_ceil(cols))
}

fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    styles: &Styles,
) -> Drawn {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let pen = Pen { area: root };
    let (w, h) = (chart.size.0 as f64, chart.size.1 as f64);
    let s = (w / 900.0).min(h / 560.0).clamp(0.85, 2.0);
    let m = 14.0 * s;
    let title_size = font_size::TITLE * s;
    let caption_size = font_size::CAPTION * s;
    let axis_size = font_size::AXIS_TITLE * s;
    let tick_size = font_size::TICK * s;
    let panel_size = font_size::PANEL_TITLE * s;

    let title_lines = wrap(&chart.title, title_size, w - 2.0 * m);
    let caption_lines = wrap(&chart.caption, caption_size, w - 2.0 * m);
    let top = m + title_lines.len() as f64 * title_size * 1.25 + 8.0 * s;
    let caption_h = caption_lines.len() as f64 * caption_size * 1.4;
    let legend = legend_box(chart, styles, s, 0.3 * w, w - 2.0 * m);
    // Time runs across the page: a chart over time keeps the full width and
    // has its legend below.
    let beside = legend.as_ref().is_some_and(|l| l.cols == 1) && !chart.lines_only;
    let below_h = match &legend {
        Some(l) if !beside => l.height + 8.0 * s,
        _ => 0.0,
    };
    let right = w
        - m
        - if beside {
            legend.as_ref().map_or(0.0, |l| l.width) + 16.0 * s
        } else {
            0.0
        };
    let x_title_h = axis_size * 1.7;
    let tick_row = tick_size * 1.35;
    let tick_len = 5.0 * s;

    let panels = chart.panels.len().max(1);
    let (cols, rows) = grid(panels);
    let panel_title_h = if chart.panels.is_empty() {
        0.0
    } else {
        panel_size * 1.6
    };
    let gap_v = if chart.panels.is_empty() {
        0.0
    } else {
        10.0 * s
    };
    let gap_h = 18.0 * s;
    let ext = extent(chart);

    // Heights first (they fix the y ticks, whose labels fix the left edge,
    // which fixes the x ticks, whose rows of labels may change the heights).
    let mut x_rows = 1;
    let mut layout = None;
    for _ in 0..2 {
        let bottom = h - m - caption_h - below_h - x_title_h - tick_len - x_rows as f64 * tick_row;
        let panel_h = ((bottom - top - (rows - 1) as f64 * gap_v) / rows as f64 - panel_title_h)
            .max(40.0 * s);
        let y = y_axis(chart, &ext, panel_h, s);
        let y_label_w = y
            .labels
            .iter()
            .map(|l| style::text_width(l, tick_size))
            .fold(0.0, f64::max);
        let left = m + axis_size * 1.7 + y_label_w + tick_len + 4.0 * s;
        let panel_w = ((right - left - (cols - 1) as f64 * gap_h) / cols as f64).max(40.0 * s);
        let x = x_axis(chart, &ext, panel_w, s);
        let again = x.rows != x_rows;
        x_rows = x.rows;
        layout = Some((bottom, panel_h, left, panel_w, y, x));
        if !again {
            break;
        }
    }
    let (bottom, panel_h, left, panel_w, y, x) = layout.expect("laid out at least once");

    // Title.
    for (i, line) in title_lines.iter().enumerate() {
        pen.text(
            line,
            (w / 2.0, m + i as f64 * title_size * 1.25),
            title_size,
            style::INK,
            HPos::Center,
            VPos::Top,
            false,
        )?;
    }

    let frames: Vec<Frame> = (0..panels)
        .map(|p| {
            let (c, r) = (p % cols, p / cols);
            let t = top + r as f64 * (panel_h + panel_title_h + gap_v) + panel_title_h;
            let l = left + c as f64 * (panel_w + gap_h);
            Frame {
                left: l,
                top: t,
                right: l + panel_w,
                bottom: t + panel_h,
            }
        })
        .collect();

    for (p, f) in frames.iter().enumerate() {
        // x labels under the lowest panel of each column; y labels left of
        // the first column.
        let lowest = p + cols >= panels;
        draw_panel(&pen, chart, f, &x, &y, p % cols == 0, lowest, s)?;
        if let Some(t) = chart.panels.get(p) {
            pen.text(
                &fit(t, panel_size, panel_w),
                ((f.left + f.right) / 2.0, f.top - panel_title_h * 0.5),
                panel_size,
                style::INK,
                HPos::Center,
                VPos::Center,
                false,
            )?;
        }
        draw_series(&pen, chart, styles, p, f, &x, &y, s)?;
    }

    // Axis titles: x centred under the plot, y centred beside it.
    let plot_right = left + cols as f64 * panel_w + (cols - 1) as f64 * gap_h;
    pen.text(
        &chart.x_label,
        (
            (left + plot_right) / 2.0,
            bottom + tick_len + x_rows as f64 * tick_row + 4.0 * s,
        ),
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Top,
        false,
    )?;
    pen.text(
        &fit(&chart.y_label, axis_size, bottom - top),
        (m + axis_size * 0.6, (top + bottom) / 2.0),
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Center,
        true,
    )?;

    // Legend: beside the plot, top-aligned; or below the axis title.
    if let Some(l) = &legend {
        let (lx, ly) = if beside {
            (right + 16.0 * s, top)
        } else {
            (
                m,
                bottom + tick_len + x_rows as f64 * tick_row + x_title_h + 4.0 * s,
            )
        };
        draw_legend(&pen, chart, l, (lx, ly), s)?;
    }

    // Caption.
    for (i, line) in caption_lines.iter().enumerate() {
        pen.text(
            line,
            (m, h - m - caption_h + i as f64 * caption_size * 1.4),
            caption_size,
            style::MUTED,
            HPos::Left,
            VPos::Top,
            false,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids() {
        assert_eq!(grid(1), (1, 1));
        assert_eq!(grid(2), (2, 1));
        assert_eq!(grid(4), (2, 2));
        assert_eq!(grid(5), (3, 2));
        assert_eq!(grid(16), (4, 4));
    }
}
