//! The drawing's pen: text, lines, dashes, rectangles, polygons and the
//! series' marker shapes, placed in pixels on a plotters drawing area.

use crate::output::style::{self, Dash, Marker};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

pub(super) type Drawn = Result<(), String>;

/// Draws in pixels (fractions allowed, rounded once) on a drawing area.
pub(super) struct Pen<'a, DB: DrawingBackend> {
    pub(super) area: &'a DrawingArea<DB, Shift>,
}

fn px(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

impl<DB: DrawingBackend> Pen<'_, DB> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn text(
        &self,
        t: &str,
        at: (f64, f64),
        size: f64,
        colour: RGBColor,
        h: HPos,
        v: VPos,
        up: bool,
    ) -> Drawn {
        if t.is_empty() {
            return Ok(());
        }
        let mut font = (style::FONT, size)
            .into_font()
            .color(&colour)
            .pos(Pos::new(h, v));
        if up {
            font = font.transform(FontTransform::Rotate270);
        }
        self.area
            .draw(&Text::new(t.to_string(), px(at), font))
            .map_err(|e| e.to_string())
    }

    pub(super) fn line(&self, pts: &[(f64, f64)], colour: RGBColor, width: f64) -> Drawn {
        if pts.len() < 2 {
            return Ok(());
        }
        let style = ShapeStyle {
            color: colour.to_rgba(),
            filled: false,
            stroke_width: width.round().max(1.0) as u32,
        };
        for piece in joinable(pts, style.stroke_width) {
            self.area
                .draw(&PathElement::new(piece, style))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub(super) fn dashed(
        &self,
        pts: &[(f64, f64)],
        dash: Dash,
        colour: RGBColor,
        width: f64,
        s: f64,
    ) -> Drawn {
        let pattern: Vec<f64> = dash.0.iter().map(|d| d * s).collect();
        for piece in dash_pieces(pts, &pattern) {
            self.line(&piece, colour, width)?;
        }
        Ok(())
    }

    pub(super) fn rect(
        &self,
        a: (f64, f64),
        b: (f64, f64),
        colour: RGBColor,
        filled: bool,
    ) -> Drawn {
        let style = if filled {
            colour.filled()
        } else {
            colour.stroke_width(1)
        };
        self.area
            .draw(&Rectangle::new([px(a), px(b)], style))
            .map_err(|e| e.to_string())
    }

    fn polygon(&self, pts: &[(f64, f64)], colour: RGBColor) -> Drawn {
        self.area
            .draw(&Polygon::new(
                pts.iter().map(|&p| px(p)).collect::<Vec<_>>(),
                colour.filled(),
            ))
            .map_err(|e| e.to_string())
    }

    /// A marker of radius `r` at `c`, on a white halo that parts it from the
    /// lines beneath.
    pub(super) fn marker(&self, m: Marker, c: (f64, f64), r: f64, colour: RGBColor) -> Drawn {
        self.shape(m, c, r + 1.5, WHITE)?;
        self.shape(m, c, r, colour)
    }

    /// A marker drawn hollow: its outline in colour, its inside white.
    pub(super) fn hollow_marker(
        &self,
        m: Marker,
        c: (f64, f64),
        r: f64,
        colour: RGBColor,
    ) -> Drawn {
        self.marker(m, c, r * 1.1, colour)?;
        self.shape(m, c, r * 0.5, WHITE)
    }

    fn shape(&self, m: Marker, (x, y): (f64, f64), r: f64, colour: RGBColor) -> Drawn {
        match m {
            Marker::Circle => self
                .area
                .draw(&Circle::new(px((x, y)), r.round() as i32, colour.filled()))
                .map_err(|e| e.to_string()),
            Marker::Square => {
                let a = r * 0.88;
                self.rect((x - a, y - a), (x + a, y + a), colour, true)
            }
            Marker::TriangleUp => self.polygon(
                &[
                    (x, y - 1.25 * r),
                    (x + 1.1 * r, y + 0.8 * r),
                    (x - 1.1 * r, y + 0.8 * r),
                ],
                colour,
            ),
            Marker::TriangleDown => self.polygon(
                &[
                    (x, y + 1.25 * r),
                    (x + 1.1 * r, y - 0.8 * r),
                    (x - 1.1 * r, y - 0.8 * r),
                ],
                colour,
            ),
            Marker::Diamond => self.polygon(
                &[
                    (x, y - 1.3 * r),
                    (x + 1.05 * r, y),
                    (x, y + 1.3 * r),
                    (x - 1.05 * r, y),
                ],
                colour,
            ),
            Marker::Cross => {
                let a = r * 0.95;
                let w = (r * 0.55).max(2.0);
                self.line(&[(x - a, y - a), (x + a, y + a)], colour, w)?;
                self.line(&[(x - a, y + a), (x + a, y - a)], colour, w)
            }
        }
    }
}

/// A polyline in whole pixels, in pieces that every backend joins alike:
/// repeated points dropped (a zero-length segment has no direction), and,
/// for a stroke wider than a pixel, cut where it turns back sharply (more
/// than 135 degrees), where the bitmap backend's mitred join would run far
/// past the points as a spike while SVG viewers cut it short.
fn joinable(pts: &[(f64, f64)], width: u32) -> Vec<Vec<(i32, i32)>> {
    let mut dedup: Vec<(i32, i32)> = Vec::with_capacity(pts.len());
    for &p in pts {
        let q = px(p);
        if dedup.last() != Some(&q) {
            dedup.push(q);
        }
    }
    if dedup.len() < 2 {
        // A line of one pixel's length: a dot.
        return match dedup.first() {
            Some(&p) if pts.len() >= 2 => vec![vec![p, p]],
            _ => Vec::new(),
        };
    }
    if width <= 1 {
        return vec![dedup];
    }
    let mut out = Vec::new();
    let mut cur = vec![dedup[0]];
    for w in dedup.windows(3) {
        let (a, b, c) = (w[0], w[1], w[2]);
        cur.push(b);
        let u = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let v = ((c.0 - b.0) as f64, (c.1 - b.1) as f64);
        let cos = (u.0 * v.0 + u.1 * v.1) / (u.0.hypot(u.1) * v.0.hypot(v.1));
        if cos < -0.7 {
            out.push(std::mem::replace(&mut cur, vec![b]));
        }
    }
    cur.push(dedup[dedup.len() - 1]);
    out.push(cur);
    out
}

/// Cuts a polyline into the pieces a dash pattern (on, off, on, ...
/// lengths) leaves drawn; the pattern runs on across vertices.
fn dash_pieces(pts: &[(f64, f64)], pattern: &[f64]) -> Vec<Vec<(f64, f64)>> {
    if pts.len() < 2 || pattern.is_empty() || pattern.iter().any(|d| *d <= 0.0) {
        return vec![pts.to_vec()];
    }
    let mut out = Vec::new();
    let mut cur = vec![pts[0]];
    let (mut k, mut left, mut on) = (0, pattern[0], true);
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut t = 0.0;
        while len - t > left {
            t += left;
            let p = (a.0 + (b.0 - a.0) * t / len, a.1 + (b.1 - a.1) * t / len);
            if on {
                cur.push(p);
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![p];
            }
            on = !on;
            k = (k + 1) % pattern.len();
            left = pattern[k];
        }
        left -= len - t;
        if on {
            cur.push(b);
        }
    }
    if on && cur.len() >= 2 {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_run_on_across_vertices() {
        let pieces = dash_pieces(&[(0.0, 0.0), (5.0, 0.0), (5.0, 10.0)], &[4.0, 2.0]);
        // On 0-4, off 4-6 (one past the corner), on 6-10, off, on to the end.
        assert_eq!(
            pieces,
            vec![
                vec![(0.0, 0.0), (4.0, 0.0)],
                vec![(5.0, 1.0), (5.0, 5.0)],
                vec![(5.0, 7.0), (5.0, 10.0)],
            ]
        );
        assert_eq!(dash_pieces(&[(0.0, 0.0), (3.0, 0.0)], &[]).len(), 1);
    }

    #[test]
    fn wide_lines_are_cut_where_they_turn_back() {
        // A spike up and straight back down: two pieces, sharing the tip.
        let pts = [(0.0, 10.0), (1.0, 0.0), (2.0, 10.0), (3.0, 10.0)];
        let pieces = joinable(&pts, 2);
        assert_eq!(
            pieces,
            vec![vec![(0, 10), (1, 0)], vec![(1, 0), (2, 10), (3, 10)]]
        );
        // Thin lines stay whole; repeated pixels go.
        assert_eq!(joinable(&pts, 1).len(), 1);
        let rep = [(0.0, 0.0), (0.2, 0.1), (5.0, 0.0)];
        assert_eq!(joinable(&rep, 2), vec![vec![(0, 0), (5, 0)]]);
    }
}
