//! Draws a [`Chart`] as SVG or PNG: measured first (`layout`), then drawn
//! in order: the title, each panel with its axes and series, the axes'
//! titles, the legend and the caption.

mod axes;
mod layout;
mod legend;
mod pen;
mod series;
mod text;

pub(super) use layout::grid;

use super::{Chart, ChartError, Options};
use crate::output::style::{self, size as font_size, Styles};
use axes::draw_panel;
use layout::Layout;
use legend::draw_legend;
use pen::{Drawn, Pen};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use series::draw_series;

/// Draws the chart as SVG text.
pub fn render_svg(chart: &Chart, styles: &Styles) -> Result<String, ChartError> {
    render_svg_with(chart, styles, &Options::default())
}

/// Draws the chart as the bytes of a PNG file.
pub fn render_png(chart: &Chart, styles: &Styles) -> Result<Vec<u8>, ChartError> {
    render_png_with(chart, styles, &Options::default())
}

/// [`render_svg`] with a figure's options (y range, hollow points, dodging).
pub fn render_svg_with(
    chart: &Chart,
    styles: &Styles,
    options: &Options,
) -> Result<String, ChartError> {
    style::register();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size).into_drawing_area();
        paint(&root, chart, styles, options).map_err(ChartError::Draw)?;
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(svg)
}

/// [`render_png`] with a figure's options.
pub fn render_png_with(
    chart: &Chart,
    styles: &Styles,
    options: &Options,
) -> Result<Vec<u8>, ChartError> {
    crate::output::png::render(chart.size, |root| paint(root, chart, styles, options))
        .map_err(ChartError::Draw)
}

/// Draws the chart on `root`, each part where its layout places it.
fn paint<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    styles: &Styles,
    options: &Options,
) -> Drawn {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let pen = Pen { area: root };
    let l = Layout::measure(chart, styles, options);
    let s = l.s;
    let title_size = font_size::TITLE * s;
    let caption_size = font_size::CAPTION * s;
    let axis_size = font_size::AXIS_TITLE * s;
    let panel_size = font_size::PANEL_TITLE * s;

    // Title.
    for line in &l.title {
        pen.text(
            &line.text,
            line.at,
            title_size,
            style::INK,
            HPos::Center,
            VPos::Top,
            false,
        )?;
    }

    let panels = l.frames.len();
    for (p, f) in l.frames.iter().enumerate() {
        // x labels under the lowest panel of each column; y labels left of
        // the first column.
        let lowest = p + l.cols >= panels;
        draw_panel(&pen, chart, f, &l.x, &l.y, p % l.cols == 0, lowest, s)?;
        if let Some(t) = l.panel_titles.get(p) {
            pen.text(
                &t.text,
                t.at,
                panel_size,
                style::INK,
                HPos::Center,
                VPos::Center,
                false,
            )?;
        }
        draw_series(&pen, chart, styles, options, p, f, &l.x, &l.y, s)?;
    }

    // Axis titles.
    pen.text(
        &l.x_title.text,
        l.x_title.at,
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Top,
        false,
    )?;
    pen.text(
        &l.y_title.text,
        l.y_title.at,
        axis_size,
        style::INK,
        HPos::Center,
        VPos::Center,
        true,
    )?;

    if let Some((legend, at)) = &l.legend {
        draw_legend(&pen, chart, legend, *at, s)?;
    }

    // Caption.
    for line in &l.caption {
        pen.text(
            &line.text,
            line.at,
            caption_size,
            style::MUTED,
            HPos::Left,
            VPos::Top,
            false,
        )?;
    }
    Ok(())
}
