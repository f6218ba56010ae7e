//! Where a chart's parts go, in pixels, measured before anything is drawn:
//! the title and caption, the legend beside or below, the grid of panels
//! and the room their axes' labels take.

use super::axes::{extent, x_axis, y_axis, Frame, XAxis, YAxis};
use super::legend::{legend_box, LegendBox};
use super::text::{fit, wrap};
use crate::output::chart::{Chart, Options};
use crate::output::style::{self, size as font_size, Styles};

/// Columns and rows of a grid of `n` panels.
pub(crate) fn grid(n: usize) -> (usize, usize) {
    let cols = match n {
        0..=3 => n.max(1),
        4 => 2,
        _ => (n as f64).sqrt().ceil() as usize,
    };
    (cols, n.div_ceil(cols))
}

/// A line of text and where it is drawn.
pub(super) struct Placed {
    pub(super) text: String,
    pub(super) at: (f64, f64),
}

/// Where each part of a chart goes.
pub(super) struct Layout {
    /// The scale of text and space: 1 for a chart of 900 by 560 pixels.
    pub(super) s: f64,
    /// The title's lines, each at its top centre.
    pub(super) title: Vec<Placed>,
    /// Each panel's frame, row by row in `cols` columns.
    pub(super) frames: Vec<Frame>,
    pub(super) cols: usize,
    /// The panels' titles (as many as the chart names), each at its centre.
    pub(super) panel_titles: Vec<Placed>,
    pub(super) x: XAxis,
    pub(super) y: YAxis,
    /// The x axis's title at its top centre; the y axis's, drawn upwards,
    /// at its centre.
    pub(super) x_title: Placed,
    pub(super) y_title: Placed,
    /// The legend and its top left corner.
    pub(super) legend: Option<(LegendBox, (f64, f64))>,
    /// The caption's lines, each at its top left corner.
    pub(super) caption: Vec<Placed>,
}

impl Layout {
    /// Measures the chart's texts and the room they leave, at its size.
    pub(super) fn measure(chart: &Chart, styles: &Styles, options: &Options) -> Layout {
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
        // A legend below the plot leaves it at least half the height.
        let axis_room = font_size::AXIS_TITLE * s * 1.7 + 5.0 * s + font_size::TICK * s * 1.35;
        let legend_h =
            (h - top - m - caption_h - axis_room - 8.0 * s - h / 2.0).max(3.0 * s * 22.0);
        let legend = legend_box(chart, styles, s, 0.3 * w, w - 2.0 * m, legend_h);
        // Time runs across the page: a chart over time keeps the full width
        // and has its legend below.
        let beside = legend.as_ref().is_some_and(|l| l.beside);
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
        let ext = extent(chart, options);

        // Heights first (they fix the y ticks, whose labels fix the left
        // edge, which fixes the x ticks, whose rows of labels may change the
        // heights).
        let mut x_rows = 1;
        let mut layout = None;
        for _ in 0..2 {
            let bottom =
                h - m - caption_h - below_h - x_title_h - tick_len - x_rows as f64 * tick_row;
            let panel_h = ((bottom - top - (rows - 1) as f64 * gap_v) / rows as f64
                - panel_title_h)
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
        let panel_titles = chart
            .panels
            .iter()
            .zip(&frames)
            .map(|(t, f)| Placed {
                text: fit(t, panel_size, panel_w),
                at: ((f.left + f.right) / 2.0, f.top - panel_title_h * 0.5),
            })
            .collect();

        // Axis titles: x centred under the plot, y centred beside it.
        let plot_right = left + cols as f64 * panel_w + (cols - 1) as f64 * gap_h;
        let x_title = Placed {
            text: chart.x_label.clone(),
            at: (
                (left + plot_right) / 2.0,
                bottom + tick_len + x_rows as f64 * tick_row + 4.0 * s,
            ),
        };
        let y_title = Placed {
            text: fit(&chart.y_label, axis_size, bottom - top),
            at: (m + axis_size * 0.6, (top + bottom) / 2.0),
        };

        // Legend: beside the plot, top-aligned; or below the axis title.
        let legend = legend.map(|l| {
            let at = if beside {
                (right + 16.0 * s, top)
            } else {
                (
                    m,
                    bottom + tick_len + x_rows as f64 * tick_row + x_title_h + 4.0 * s,
                )
            };
            (l, at)
        });

        let title = title_lines
            .into_iter()
            .enumerate()
            .map(|(i, text)| Placed {
                text,
                at: (w / 2.0, m + i as f64 * title_size * 1.25),
            })
            .collect();
        let caption = caption_lines
            .into_iter()
            .enumerate()
            .map(|(i, text)| Placed {
                text,
                at: (m, h - m - caption_h + i as f64 * caption_size * 1.4),
            })
            .collect();
        Layout {
            s,
            title,
            frames,
            cols,
            panel_titles,
            x,
            y,
            x_title,
            y_title,
            legend,
            caption,
        }
    }
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
