//! Drawing the teaching pictures with plotters: the textbook space-time
//! diagram (position along the bus across, time downward) and the per-station
//! timeline (one row of states per station). PNG or SVG by the file's
//! extension; each file is written whole or not at all.

use super::picture::{Picture, State};
use crate::engine::Time;
use crate::output::png::Png;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Why a picture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    #[error("{path}: unknown picture format; name the file .svg or .png")]
    Format { path: String },
    #[error("{path}: cannot draw the picture: {message}")]
    Draw { path: String, message: String },
}

pub use crate::output::style::station_colour;
use crate::output::style::{
    BACKOFF, BACKOFF_TEXT, BURST_GAP, DEFER, DELIVERED, EXTENSION, FONT, IDLE, JAM,
    STATION_COLOURS, TRANSMIT,
};

/// The station's name on pictures and in traces.
pub fn station_name(i: u32) -> String {
    format!("S{i}")
}

fn us(t: Time) -> f64 {
    t as f64 / 1e6
}

/// Writes the space-time diagram to `path` (.svg or .png).
pub fn write_diagram(pic: &Picture, title: &str, path: &Path) -> Result<(), DrawError> {
    render(path, (1200, 900), &Diagram { pic, title })
}

/// Writes the per-station timeline chart to `path` (.svg or .png).
pub fn write_timeline(pic: &Picture, title: &str, path: &Path) -> Result<(), DrawError> {
    let n = pic.positions.len() as u32;
    render(path, (1200, 170 + 60 * n.max(1)), &Timeline { pic, title })
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

/// A picture that can be drawn on any plotters backend.
trait Paint {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn
    where
        DB::ErrorType: 'static;
}

struct Diagram<'a> {
    pic: &'a Picture,
    title: &'a str,
}

impl Paint for Diagram<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn
    where
        DB::ErrorType: 'static,
    {
        diagram(root, self.pic, self.title)
    }
}

struct Timeline<'a> {
    pic: &'a Picture,
    title: &'a str,
}

impl Paint for Timeline<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn
    where
        DB::ErrorType: 'static,
    {
        timeline(root, self.pic, self.title)
    }
}

fn render(path: &Path, size: (u32, u32), picture: &impl Paint) -> Result<(), DrawError> {
    crate::output::style::register();
    let shown = path.display().to_string();
    let fail = |message: String| DrawError::Draw {
        path: shown.clone(),
        message,
    };
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "svg" => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
                picture.paint(&root).map_err(|e| fail(e.to_string()))?;
                root.present().map_err(|e| fail(e.to_string()))?;
            }
            crate::output::write_atomic(path, text.as_bytes()).map_err(|e| fail(e.to_string()))
        }
        "png" => {
            // Drawn beside the target, then renamed over it: whole or not at all.
            crate::output::write_atomic_with(path, |tmp| {
                let root = Png::new(tmp, size).into_drawing_area();
                picture.paint(&root).map_err(|e| e.to_string())?;
                root.present().map_err(|e| e.to_string())
            })
            .map_err(|e| match e {
                crate::output::OutputError::Corrupt { message, .. } => fail(message),
                crate::output::OutputError::Io { error, .. } => fail(error.to_string()),
                e => fail(e.to_string()),
            })
        }
        _ => Err(DrawError::Format { path: shown }),
    }
}

/// Text labels placed after everything else, each on a white box, moved
/// down until it overlaps no label placed before it.
struct Labels {
    items: Vec<(i32, i32, HPos, VPos, String, RGBColor)>,
}

impl Labels {
    fn new() -> Self {
        Labels { items: Vec::new() }
    }

    fn add(&mut self, at: (i32, i32), h: HPos, v: VPos, text: String, colour: RGBColor) {
        self.items.push((at.0, at.1, h, v, text, colour));
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Drawn
    where
        DB::ErrorType: 'static,
    {
        let font = (FONT, 14).into_font();
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        for (x, y, h, v, text, colour) in &self.items {
            let (w, ht) = area.estimate_text_size(text, &font.clone().into())?;
            let (w, ht) = (w as i32 + 6, ht as i32 + 4);
            let x0 = match h {
                HPos::Left => *x,
                HPos::Right => x - w,
                HPos::Center => x - w / 2,
            };
            let mut y0 = match v {
                VPos::Top => *y,
                VPos::Bottom => y - ht,
                VPos::Center => y - ht / 2,
            };
            let overlaps = |y0: i32, p: &(i32, i32, i32, i32)| {
                x0 < p.2 && p.0 < x0 + w && y0 < p.3 && p.1 < y0 + ht
            };
            while let Some(p) = placed.iter().find(|p| overlaps(y0, p)) {
                y0 = p.3 + 1;
            }
            placed.push((x0, y0, x0 + w, y0 + ht));
            area.draw(&Rectangle::new(
                [(x0, y0), (x0 + w, y0 + ht)],
                WHITE.mix(0.85).filled(),
            ))?;
            area.draw(&Text::new(
                text.clone(),
                (x0 + 3, y0 + 2),
                font.clone().color(colour),
            ))?;
        }
        Ok(())
    }
}

/// Cuts a polygon in (x, t) to t <= `limit` (Sutherland-Hodgman, one edge).
fn clip_below(poly: &[(f64, f64)], limit: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(poly.len() + 2);
    for k in 0..poly.len() {
        let a = poly[k];
        let b = poly[(k + 1) % poly.len()];
        let (ain, bin) = (a.1 <= limit, b.1 <= limit);
        if ain {
            out.push(a);
        }
        if ain != bin {
            let f = (limit - a.1) / (b.1 - a.1);
            out.push((a.0 + f * (b.0 - a.0), limit));
        }
    }
    out
}

/// The two halves (towards 0 and towards L) of the band a signal sent from
/// `x` during [t0, t1) (µs) sweeps through space-time, clipped at `until`.
fn band(pic: &Picture, x: f64, t0: f64, t1: f64, until: f64) -> Vec<Vec<(f64, f64)>> {
    let l = pic.bus_length_m;
    let left = pic.delay_ps(x) / 1e6;
    let right = pic.delay_ps(l - x) / 1e6;
    let mut out = Vec::new();
    for (edge, d) in [(0.0, left), (l, right)] {
        if (edge - x).abs() < 1e-9 {
            continue;
        }
        let poly = [(x, t0), (edge, t0 + d), (edge, t1 + d), (x, t1)];
        let c = clip_below(&poly, until);
        if c.len() >= 3 {
            out.push(c);
        }
    }
    out
}

fn diagram<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, pic: &Picture, title: &str) -> Drawn
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (w, _) = root.dim_in_pixel();
    let (main, side) = root.split_horizontally(w - 300);
    let l = pic.bus_length_m.max(1.0);
    let until = us(pic.until);
    // A strip above t = 0 holds the station names.
    let head = until * 0.06;
    let pad = l * 0.04;
    let mut chart = ChartBuilder::on(&main)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-pad..l + pad, -until..head)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .x_desc("position on the bus (m)")
        .y_desc("time (µs), increasing downward")
        .x_label_formatter(&|x| {
            if *x < -1e-9 || *x > l + 1e-9 {
                String::new()
            } else {
                format!("{x:.0}")
            }
        })
        .y_label_formatter(&|y| if *y > 1e-9 { String::new() } else { trim(-y) })
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;
    let flip = |pts: &[(f64, f64)]| pts.iter().map(|&(x, t)| (x, -t)).collect::<Vec<_>>();

    // The bus ends.
    for edge in [0.0, l] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(edge, 0.0), (edge, -until)],
            BLACK.mix(0.5).stroke_width(1),
        )))?;
    }
    // Signals: the frame in the sender's colour, the jam in red; where two
    // bands overlap the colours mix: there the signals are garbled.
    for tx in &pic.transmissions {
        let x = pic.positions[tx.station as usize];
        let c = station_colour(tx.station);
        let frame_end = tx.jam_start.unwrap_or(tx.end);
        // A burst's filled gap, the frame, its carrier extension: each in
        // its own colour (a jam cuts the later parts short).
        let gap_end = tx.gap_until.unwrap_or(tx.start).min(frame_end);
        let data_end = tx.extension_from.unwrap_or(frame_end).min(frame_end);
        for (t0, t1, fill) in [
            (tx.start, gap_end, BURST_GAP.mix(0.6)),
            (gap_end, data_end, c.mix(0.35)),
            (data_end, frame_end, EXTENSION.mix(0.45)),
        ] {
            if t1 <= t0 {
                continue;
            }
            for poly in band(pic, x, us(t0), us(t1), until) {
                chart.draw_series(std::iter::once(Polygon::new(flip(&poly), fill.filled())))?;
            }
        }
        if let Some(js) = tx.jam_start {
            for poly in band(pic, x, us(js), us(tx.end), until) {
                chart.draw_series(std::iter::once(Polygon::new(
                    flip(&poly),
                    JAM.mix(0.8).filled(),
                )))?;
            }
        }
        // The sender's own stretch of wire, drawn solid.
        let end = us(tx.end).min(until);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, -us(tx.start)), (x, -end)],
            c.stroke_width(5),
        )))?;
    }
    // Station lines and names.
    for (i, &x) in pic.positions.iter().enumerate() {
        let c = station_colour(i as u32);
        chart.draw_series(DashedLineSeries::new(
            vec![(x, 0.0), (x, -until)],
            6,
            4,
            c.mix(0.8).stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{} ({x:.0} m)", station_name(i as u32)),
            (x, head * 0.5),
            (FONT, 16)
                .into_font()
                .color(&c)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        )))?;
    }
    let mut labels = Labels::new();
    let side_of = |x: f64| if x > l / 2.0 { -1.0 } else { 1.0 };
    // Collision detections.
    for &(s, t, late) in &pic.detections {
        let x = pic.positions[s as usize];
        chart.draw_series(std::iter::once(Cross::new(
            (x, -us(t)),
            7,
            JAM.stroke_width(3),
        )))?;
        let anchor = if side_of(x) > 0.0 {
            HPos::Left
        } else {
            HPos::Right
        };
        let what = if late { "late collision" } else { "detects" };
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor,
            VPos::Bottom,
            format!("{} {what} at {} µs", station_name(s), trim(us(t))),
            JAM,
        );
    }
    // Backoff bars beside their station, towards the middle of the bus.
    for b in &pic.backoffs {
        let x = pic.positions[b.station as usize];
        let xb = x + side_of(x) * l * 0.025;
        let (t0, t1) = (us(b.start), us(b.end).min(until));
        if us(b.start) >= until {
            continue;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(xb, -t0), (xb, -t1)],
            BACKOFF.stroke_width(4),
        )))?;
        for t in [t0, t1] {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(xb - l * 0.008, -t), (xb + l * 0.008, -t)],
                BACKOFF.stroke_width(2),
            )))?;
        }
        let label = match b.r {
            Some(0) => format!("backoff n={}, r=0: no wait", b.n),
            Some(r) => format!("backoff n={}, r={r}", b.n),
            // Time-based policies draw no r: say how long the wait is.
            None => format!("backoff n={}: {} µs", b.n, trim(us(b.end - b.start))),
        };
        let anchor = if side_of(x) > 0.0 {
            HPos::Left
        } else {
            HPos::Right
        };
        let at = chart.backend_coord(&(xb + side_of(x) * l * 0.012, -t0));
        labels.add(at, anchor, VPos::Top, label, BACKOFF_TEXT);
    }
    // Frames received.
    for &(dst, t, from, intact) in &pic.deliveries {
        let x = pic.positions[dst as usize];
        let c = if intact { DELIVERED } else { JAM };
        chart.draw_series(std::iter::once(Circle::new(
            (x, -us(t)),
            6,
            c.stroke_width(3),
        )))?;
        let anchor = if side_of(x) > 0.0 {
            HPos::Left
        } else {
            HPos::Right
        };
        let what = if intact { "receives" } else { "gets garbled" };
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor,
            VPos::Top,
            format!(
                "{} {what} {}'s frame at {} µs",
                station_name(dst),
                station_name(from),
                trim(us(t))
            ),
            c,
        );
    }
    for &(s, t, attempts) in &pic.discards {
        let x = pic.positions[s as usize];
        let anchor = if side_of(x) > 0.0 {
            HPos::Left
        } else {
            HPos::Right
        };
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor,
            VPos::Top,
            format!("{} discards after {attempts} collisions", station_name(s)),
            JAM,
        );
    }
    // Detections first: they are the lesson; other labels make way.
    labels.draw(root)?;
    legend_diagram(&side, pic)?;
    Ok(())
}

fn legend_diagram<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, pic: &Picture) -> Drawn
where
    DB::ErrorType: 'static,
{
    let font = (FONT, 15).into_font();
    let mut y = 60;
    let line = 26;
    area.draw(&Text::new(
        "How to read it",
        (10, y),
        (FONT, 17).into_font(),
    ))?;
    y += line + 4;
    let shown = pic.positions.len().min(STATION_COLOURS.len());
    for i in 0..shown as u32 {
        area.draw(&Rectangle::new(
            [(10, y), (34, y + 16)],
            station_colour(i).mix(0.35).filled(),
        ))?;
        area.draw(&Text::new(
            format!("{}'s frame on the wire", station_name(i)),
            (42, y),
            font.clone(),
        ))?;
        y += line;
    }
    let extended = pic.transmissions.iter().any(|t| t.extension_from.is_some());
    let bursting = pic.transmissions.iter().any(|t| t.gap_until.is_some());
    for (shown, fill, text) in [
        (extended, EXTENSION.mix(0.45), "carrier extension"),
        (bursting, BURST_GAP.mix(0.6), "burst: filled gap"),
    ] {
        if shown {
            area.draw(&Rectangle::new([(10, y), (34, y + 16)], fill.filled()))?;
            area.draw(&Text::new(text, (42, y), font.clone()))?;
            y += line;
        }
    }
    area.draw(&Rectangle::new(
        [(10, y), (34, y + 16)],
        JAM.mix(0.8).filled(),
    ))?;
    area.draw(&Text::new("jam (32 bits)", (42, y), font.clone()))?;
    y += line;
    area.draw(&Cross::new((22, y + 8), 7, JAM.stroke_width(3)))?;
    area.draw(&Text::new("collision detected", (42, y), font.clone()))?;
    y += line;
    area.draw(&PathElement::new(
        vec![(22, y), (22, y + 18)],
        BACKOFF.stroke_width(4),
    ))?;
    let what = if pic.backoffs.iter().all(|b| b.r.is_some()) {
        "backoff: wait r slots"
    } else {
        "backoff: the wait"
    };
    area.draw(&Text::new(what, (42, y), font.clone()))?;
    y += line - 6;
    area.draw(&Text::new("after collision n", (42, y), font.clone()))?;
    y += line;
    area.draw(&Circle::new((22, y + 8), 6, DELIVERED.stroke_width(3)))?;
    area.draw(&Text::new("frame received", (42, y), font.clone()))?;
    y += line + 10;
    for text in [
        "A band's slope is the",
        "propagation speed: a signal",
        "reaches a station later the",
        "farther away it is.",
        "Where two bands overlap,",
        "the signals collide there.",
        "Solid bar on a station's line:",
        "it is transmitting.",
    ] {
        area.draw(&Text::new(text, (10, y), (FONT, 14).into_font()))?;
        y += 20;
    }
    Ok(())
}

fn state_colour(s: State) -> RGBColor {
    match s {
        State::Idle => IDLE,
        State::Defer => DEFER,
        State::Transmit => TRANSMIT,
        State::Jam => JAM,
        State::Backoff => BACKOFF,
    }
}

fn timeline<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, pic: &Picture, title: &str) -> Drawn
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (_, h) = root.dim_in_pixel();
    let (main, legend) = root.split_vertically(h - 40);
    let n = pic.positions.len() as u32;
    let until = us(pic.until);
    let mut chart = ChartBuilder::on(&main)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(130)
        .build_cartesian_2d(0.0..until, 0.0..n.max(1) as f64)?;
    let positions = pic.positions.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.1))
        .x_desc("time (µs)")
        .x_label_formatter(&|x| trim(*x))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;
    // Station 0 on top, as in the trace.
    let row = |s: u32| (n - 1 - s) as f64;
    for span in &pic.states {
        let y = row(span.station);
        chart.draw_series(std::iter::once(Rectangle::new(
            [
                (us(span.start), y + 0.15),
                (us(span.end).min(until), y + 0.85),
            ],
            state_colour(span.state).filled(),
        )))?;
    }
    for b in &pic.backoffs {
        let width = (b.end - b.start) as f64 / 1e6;
        if us(b.start) >= until {
            continue;
        }
        // A wait of r = 0 (or one too short to see) still happened: mark it
        // with a thin bar, or a student reads "no backoff after this collision".
        if width < until * 0.004 {
            let y = row(b.station);
            chart.draw_series(std::iter::once(Rectangle::new(
                [
                    (us(b.start), y + 0.1),
                    (us(b.start) + until * 0.004, y + 0.9),
                ],
                BACKOFF.filled(),
            )))?;
        }
        if width < until * 0.07 {
            continue;
        }
        let r = match b.r {
            Some(r) => format!(", r={r}"),
            None => format!(": {} µs", trim(width)),
        };
        chart.draw_series(std::iter::once(Text::new(
            format!("n={}{r}", b.n),
            (us(b.start) + until * 0.004, row(b.station) + 0.5),
            (FONT, 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
    }
    let area = chart.plotting_area();
    for (s, x) in positions.iter().enumerate() {
        let (px, py) = area.map_coordinate(&(0.0, row(s as u32) + 0.5));
        root.draw(&Text::new(
            format!("{} ({x:.0} m)", station_name(s as u32)),
            (px - 10, py),
            (FONT, 15)
                .into_font()
                .color(&station_colour(s as u32))
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
    }
    let mut x = 20;
    let font = (FONT, 15).into_font();
    let thin = pic
        .backoffs
        .iter()
        .any(|b| ((b.end - b.start) as f64 / 1e6) < until * 0.004 && us(b.start) < until);
    for s in State::ALL {
        let name = if s == State::Backoff && thin {
            "backoff (thin bar: r = 0, no wait)"
        } else {
            s.name()
        };
        legend.draw(&Rectangle::new(
            [(x, 10), (x + 22, 26)],
            state_colour(s).filled(),
        ))?;
        legend.draw(&Rectangle::new([(x, 10), (x + 22, 26)], BLACK.mix(0.3)))?;
        legend.draw(&Text::new(name, (x + 28, 10), font.clone()))?;
        let (w, _) = legend.estimate_text_size(name, &font.clone().into())?;
        x += 28 + w as i32 + 30;
    }
    Ok(())
}

/// A number of microseconds without trailing zeros: 12.5, 57.6, 100.
fn trim(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_keeps_the_part_before_the_limit() {
        let sq = [(0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (0.0, 2.0)];
        let c = clip_below(&sq, 1.0);
        assert_eq!(c, vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]);
        assert!(clip_below(&sq, -1.0).is_empty());
    }

    #[test]
    fn numbers_are_trimmed() {
        assert_eq!(trim(12.5), "12.5");
        assert_eq!(trim(100.0), "100");
        assert_eq!(trim(-0.0), "0");
    }
}
