//! Drawing the teaching pictures with plotters: the textbook space-time
//! diagram (position along the bus across, time downward) and the per-station
//! timeline (one row of states per station). PNG or SVG by the file's
//! extension; each file is written whole or not at all.

use super::picture::{Picture, State};
use crate::engine::Time;
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
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
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
    let n = pic.shown.len() as u32;
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
            crate::output::write_atomic(path, text.as_bytes()).map_err(|e| DrawError::Write {
                path: shown.clone(),
                message: e.to_string(),
            })
        }
        "png" => {
            // Drawn in memory, then written whole or not at all.
            let bytes = crate::output::png::render(size, |root| {
                picture.paint(root).map_err(|e| e.to_string())
            })
            .map_err(fail)?;
            crate::output::write_atomic(path, &bytes).map_err(|e| DrawError::Write {
                path: shown.clone(),
                message: e.to_string(),
            })
        }
        _ => Err(DrawError::Format { path: shown }),
    }
}

/// A label's box in pixels: its top-left corner, width and height.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelBox {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl LabelBox {
    /// Whether the two boxes share any pixel.
    pub fn intersects(&self, o: &LabelBox) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }

    fn inside(&self, area: &LabelBox) -> bool {
        self.x >= area.x
            && self.y >= area.y
            && self.x + self.w <= area.x + area.w
            && self.y + self.h <= area.y + area.h
    }
}

/// Places labels in order of importance: each at the box it asks for, or
/// moved up or down by one of its heights, inside `area` and clear of
/// every label placed before it. A label with no such place is left out
/// (None) rather than drawn far from what it names or over another label.
pub fn place_labels(wanted: &[LabelBox], area: LabelBox) -> Vec<Option<LabelBox>> {
    let mut placed: Vec<LabelBox> = Vec::new();
    wanted
        .iter()
        .map(|b| {
            let step = b.h + 1;
            let spot = [0, 1, -1]
                .iter()
                .map(|k| LabelBox {
                    y: b.y + k * step,
                    ..*b
                })
                .find(|c| c.inside(&area) && !placed.iter().any(|p| p.intersects(c)));
            if let Some(c) = spot {
                placed.push(c);
            }
            spot
        })
        .collect()
}

/// Text labels placed after everything else, each on a white box, by
/// [`place_labels`]: those that cannot be placed near their point are left
/// out and counted.
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

    /// Draws the labels that fit inside `bounds`; returns how many did not.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        bounds: LabelBox,
    ) -> Result<usize, Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let font = (FONT, 14).into_font();
        let mut wanted = Vec::with_capacity(self.items.len());
        for (x, y, h, v, text, _) in &self.items {
            let (w, ht) = area.estimate_text_size(text, &font.clone().into())?;
            let (w, ht) = (w as i32 + 6, ht as i32 + 4);
            let x0 = match h {
                HPos::Left => *x,
                HPos::Right => x - w,
                HPos::Center => x - w / 2,
            };
            let y0 = match v {
                VPos::Top => *y,
                VPos::Bottom => y - ht,
                VPos::Center => y - ht / 2,
            };
            wanted.push(LabelBox {
                x: x0,
                y: y0,
                w,
                h: ht,
            });
        }
        let placed = place_labels(&wanted, bounds);
        for (b, (.., text, colour)) in placed.iter().zip(&self.items) {
            let Some(b) = b else { continue };
            area.draw(&Rectangle::new(
                [(b.x, b.y), (b.x + b.w, b.y + b.h)],
                WHITE.mix(0.85).filled(),
            ))?;
            area.draw(&Text::new(
                text.clone(),
                (b.x + 3, b.y + 2),
                font.clone().color(colour),
            ))?;
        }
        Ok(placed.iter().filter(|b| b.is_none()).count())
    }
}

/// The unit a time axis counts in: µs for short windows, ms or s where µs
/// would need more than four digits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeUnit {
    pub name: &'static str,
    /// Microseconds per unit.
    pub us: f64,
}

impl TimeUnit {
    /// The unit for an axis that reaches `until_us`.
    pub fn for_axis(until_us: f64) -> TimeUnit {
        [("µs", 1.0), ("ms", 1e3), ("s", 1e6)]
            .iter()
            .map(|&(name, us)| TimeUnit { name, us })
            .find(|u| until_us / u.us < 1e4)
            .unwrap_or(TimeUnit { name: "s", us: 1e6 })
    }

    /// A tick's text: `v_us` in this unit, without trailing zeros.
    pub fn label(&self, v_us: f64) -> String {
        trim(v_us / self.us)
    }
}

/// A picture's title: the scenario's name, the window and, when it ends
/// before the run does, how much of the run that is.
pub fn title(name: &str, from: Time, until: Time, run: Time) -> String {
    let unit = TimeUnit::for_axis(us(until));
    let t = |v: Time| format!("{} {}", unit.label(us(v)), unit.name);
    let window = if from == 0 {
        format!("first {}", t(until))
    } else {
        format!("{} to {}", t(from), t(until))
    };
    if until < run {
        format!("{name}: {window} of a {} run", crate::units::show_ps(run))
    } else {
        format!("{name}: {window}")
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

/// Cuts a polygon in (x, t) to t >= `limit`.
fn clip_above(poly: &[(f64, f64)], limit: f64) -> Vec<(f64, f64)> {
    let flipped: Vec<(f64, f64)> = poly.iter().map(|&(x, t)| (x, -t)).collect();
    clip_below(&flipped, -limit)
        .into_iter()
        .map(|(x, t)| (x, -t))
        .collect()
}

/// The two halves (towards 0 and towards L) of the band a signal sent from
/// `x` during [t0, t1) (µs) sweeps through space-time, clipped to the
/// window [from, until].
fn band(
    pic: &Picture,
    x: f64,
    t0: f64,
    t1: f64,
    (from, until): (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let l = pic.bus_length_m;
    let left = pic.delay_ps(x) / 1e6;
    let right = pic.delay_ps(l - x) / 1e6;
    let mut out = Vec::new();
    for (edge, d) in [(0.0, left), (l, right)] {
        if (edge - x).abs() < 1e-9 {
            continue;
        }
        let poly = [(x, t0), (edge, t0 + d), (edge, t1 + d), (x, t1)];
        let c = clip_above(&clip_below(&poly, until), from);
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
    let (from, until) = (us(pic.from), us(pic.until));
    let unit = TimeUnit::for_axis(until);
    // A strip above the window's start holds the station names.
    let head = (until - from) * 0.06;
    let pad = l * 0.04;
    let mut chart = ChartBuilder::on(&main)
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(-pad..l + pad, -until..-from + head)?;
    let y_desc = format!("time ({}), increasing downward", unit.name);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .x_desc("position on the bus (m)")
        .y_desc(y_desc)
        .x_label_formatter(&|x| {
            if *x < -1e-9 || *x > l + 1e-9 {
                String::new()
            } else {
                format!("{x:.0}")
            }
        })
        .y_label_formatter(&|y| {
            if *y > -from + 1e-9 {
                String::new()
            } else {
                unit.label(-y)
            }
        })
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;
    let flip = |pts: &[(f64, f64)]| pts.iter().map(|&(x, t)| (x, -t)).collect::<Vec<_>>();
    let window = (from, until);
    let clamp = |t: f64| t.clamp(from, until);

    // The bus ends.
    for edge in [0.0, l] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(edge, -from), (edge, -until)],
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
            for poly in band(pic, x, us(t0), us(t1), window) {
                chart.draw_series(std::iter::once(Polygon::new(flip(&poly), fill.filled())))?;
            }
        }
        if let Some(js) = tx.jam_start {
            for poly in band(pic, x, us(js), us(tx.end), window) {
                chart.draw_series(std::iter::once(Polygon::new(
                    flip(&poly),
                    JAM.mix(0.8).filled(),
                )))?;
            }
        }
        // The sender's own stretch of wire, drawn solid.
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, -clamp(us(tx.start))), (x, -clamp(us(tx.end)))],
            c.stroke_width(5),
        )))?;
    }
    // Station lines and names; crowded names drop their position, and
    // alternate between two rows.
    let name_y = chart.backend_coord(&(0.0, -from + head * 0.5)).1;
    let xs: Vec<i32> = pic
        .shown
        .iter()
        .map(|&i| chart.backend_coord(&(pic.positions[i as usize], 0.0)).0)
        .collect();
    let gap = xs
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .min()
        .unwrap_or(i32::MAX);
    let name_font = (FONT, 16).into_font();
    let full = |i: u32| format!("{} ({:.0} m)", station_name(i), pic.positions[i as usize]);
    let widest = pic
        .shown
        .iter()
        .map(|&i| root.estimate_text_size(&full(i), &name_font.clone().into()))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .map(|(w, _)| w as i32)
        .max()
        .unwrap_or(0);
    let crowded = gap < widest + 8;
    let names: Vec<String> = pic
        .shown
        .iter()
        .map(|&i| if crowded { station_name(i) } else { full(i) })
        .collect();
    // Names in the strip above the window, in up to two rows; a name that
    // finds no free place there is left out, and counted.
    let strip_top = chart.backend_coord(&(0.0, -from + head)).1;
    let strip_bottom = chart.backend_coord(&(0.0, -from)).1;
    let mut wanted = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let (w, h) = root.estimate_text_size(name, &name_font.clone().into())?;
        let (w, h) = (w as i32 + 4, h as i32 + 2);
        let y = if crowded {
            strip_top + 1
        } else {
            name_y - h / 2
        };
        wanted.push(LabelBox {
            x: xs[k] - w / 2,
            y,
            w,
            h,
        });
    }
    let strip = LabelBox {
        x: 0,
        y: strip_top,
        w: root.dim_in_pixel().0 as i32,
        h: strip_bottom - strip_top,
    };
    let placed_names = place_labels(&wanted, strip);
    let mut dropped = placed_names.iter().filter(|b| b.is_none()).count();
    for (k, &i) in pic.shown.iter().enumerate() {
        let x = pic.positions[i as usize];
        let c = station_colour(i);
        chart.draw_series(DashedLineSeries::new(
            vec![(x, -from), (x, -until)],
            6,
            4,
            c.mix(0.8).stroke_width(1),
        ))?;
        if let Some(b) = placed_names[k] {
            root.draw(&Text::new(
                names[k].clone(),
                (b.x + 2, b.y + 1),
                name_font.clone().color(&c),
            ))?;
        }
    }
    let mut labels = Labels::new();
    let side_of = |x: f64| if x > l / 2.0 { -1.0 } else { 1.0 };
    let anchor_of = |x: f64| {
        if side_of(x) > 0.0 {
            HPos::Left
        } else {
            HPos::Right
        }
    };
    // Collision detections.
    for &(s, t, late) in &pic.detections {
        let x = pic.positions[s as usize];
        chart.draw_series(std::iter::once(Cross::new(
            (x, -us(t)),
            7,
            JAM.stroke_width(3),
        )))?;
        let what = if late { "late collision" } else { "detects" };
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor_of(x),
            VPos::Bottom,
            format!("{} {what} at {} µs", station_name(s), trim(us(t))),
            JAM,
        );
    }
    // Backoff bars beside their station, towards the middle of the bus.
    for b in &pic.backoffs {
        let x = pic.positions[b.station as usize];
        let xb = x + side_of(x) * l * 0.025;
        if us(b.start) >= until {
            continue;
        }
        let (t0, t1) = (clamp(us(b.start)), clamp(us(b.end)));
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(xb, -t0), (xb, -t1)],
            BACKOFF.stroke_width(4),
        )))?;
        for (t, end) in [(t0, us(b.start)), (t1, us(b.end))] {
            // A tick where the wait starts or ends, not where the window cuts it.
            if (t - end).abs() < 1e-9 {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(xb - l * 0.008, -t), (xb + l * 0.008, -t)],
                    BACKOFF.stroke_width(2),
                )))?;
            }
        }
        let label = match b.r {
            Some(0) => format!("backoff n={}, r=0: no wait", b.n),
            Some(r) => format!("backoff n={}, r={r}", b.n),
            // Time-based policies draw no r: say how long the wait is.
            None => format!("backoff n={}: {} µs", b.n, trim(us(b.end - b.start))),
        };
        let at = chart.backend_coord(&(xb + side_of(x) * l * 0.012, -t0));
        labels.add(at, anchor_of(x), VPos::Top, label, BACKOFF_TEXT);
    }
    // Frames received.
    for &(dst, t, from_station, intact) in &pic.deliveries {
        let x = pic.positions[dst as usize];
        let c = if intact { DELIVERED } else { JAM };
        chart.draw_series(std::iter::once(Circle::new(
            (x, -us(t)),
            6,
            c.stroke_width(3),
        )))?;
        let what = if intact { "receives" } else { "gets garbled" };
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor_of(x),
            VPos::Top,
            format!(
                "{} {what} {}'s frame at {} µs",
                station_name(dst),
                station_name(from_station),
                trim(us(t))
            ),
            c,
        );
    }
    for &(s, t, attempts) in &pic.discards {
        let x = pic.positions[s as usize];
        let at = chart.backend_coord(&(x + side_of(x) * l * 0.012, -us(t)));
        labels.add(
            at,
            anchor_of(x),
            VPos::Top,
            format!("{} discards after {attempts} collisions", station_name(s)),
            JAM,
        );
    }
    // Detections first: they are the lesson; other labels make way. Labels
    // stay inside the plot, below the names.
    let top_left = chart.backend_coord(&(-pad, -from));
    let bottom_right = chart.backend_coord(&(l + pad, -until));
    let bounds = LabelBox {
        x: top_left.0,
        y: top_left.1,
        w: bottom_right.0 - top_left.0,
        h: bottom_right.1 - top_left.1 + 8,
    };
    dropped += labels.draw(root, bounds)?;
    legend_diagram(&side, pic, dropped)?;
    Ok(())
}

fn legend_diagram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pic: &Picture,
    dropped: usize,
) -> Drawn
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
    for &i in pic.shown.iter().take(STATION_COLOURS.len()) {
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
    y += 10;
    for text in left_out(pic, dropped) {
        area.draw(&Text::new(
            text,
            (10, y),
            (FONT, 14).into_font().color(&JAM),
        ))?;
        y += 20;
    }
    Ok(())
}

/// What the picture leaves out, and how to see it, in short lines: the
/// stations not drawn, and the labels that found no place.
fn left_out(pic: &Picture, dropped: usize) -> Vec<String> {
    let mut out = Vec::new();
    if pic.partial() {
        out.push(format!(
            "Shows {} of {} stations:",
            pic.shown.len(),
            pic.positions.len()
        ));
        out.push(station_list(&pic.shown));
        out.push("others' signals not drawn;".into());
        out.push("csmacd diagram --stations".into());
        out.push("chooses which.".into());
    }
    if dropped > 0 {
        let labels = if dropped == 1 { "label" } else { "labels" };
        out.push(format!("{dropped} {labels} left out where"));
        out.push("they would overlap: narrow".into());
        out.push("--from/--until for all.".into());
    }
    out
}

/// Station numbers as runs: "S0-S7", "S0, S5, S9".
pub fn station_list(stations: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < stations.len() {
        let mut j = k;
        while j + 1 < stations.len() && stations[j + 1] == stations[j] + 1 {
            j += 1;
        }
        parts.push(if j > k + 1 {
            format!(
                "{}-{}",
                station_name(stations[k]),
                station_name(stations[j])
            )
        } else if j == k + 1 {
            format!(
                "{}, {}",
                station_name(stations[k]),
                station_name(stations[j])
            )
        } else {
            station_name(stations[k])
        });
        k = j + 1;
    }
    parts.join(", ")
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
    let n = pic.shown.len() as u32;
    let (from, until) = (us(pic.from), us(pic.until));
    let span = until - from;
    let unit = TimeUnit::for_axis(until);
    let mut chart = ChartBuilder::on(&main)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(130)
        .build_cartesian_2d(from..until, 0.0..n.max(1) as f64)?;
    let x_desc = format!("time ({})", unit.name);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.1))
        .x_desc(x_desc)
        .x_label_formatter(&|x| unit.label(*x))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;
    // The first station shown on top, as in the trace.
    let rows: std::collections::HashMap<u32, f64> = pic
        .shown
        .iter()
        .enumerate()
        .map(|(k, &s)| (s, (n - 1 - k as u32) as f64))
        .collect();
    let row = |s: u32| rows[&s];
    for span_ in &pic.states {
        let y = row(span_.station);
        chart.draw_series(std::iter::once(Rectangle::new(
            [
                (us(span_.start).max(from), y + 0.15),
                (us(span_.end).min(until), y + 0.85),
            ],
            state_colour(span_.state).filled(),
        )))?;
    }
    for b in &pic.backoffs {
        let width = (b.end - b.start) as f64 / 1e6;
        if us(b.start) >= until {
            continue;
        }
        let start = us(b.start).max(from);
        // A wait of r = 0 (or one too short to see) still happened: mark it
        // with a thin bar, or a student reads "no backoff after this collision".
        if width < span * 0.004 {
            let y = row(b.station);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(start, y + 0.1), (start + span * 0.004, y + 0.9)],
                BACKOFF.filled(),
            )))?;
        }
        if us(b.end).min(until) - start < span * 0.07 {
            continue;
        }
        let r = match b.r {
            Some(r) => format!(", r={r}"),
            None => format!(": {} µs", trim(width)),
        };
        chart.draw_series(std::iter::once(Text::new(
            format!("n={}{r}", b.n),
            (start + span * 0.004, row(b.station) + 0.5),
            (FONT, 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
    }
    let area = chart.plotting_area();
    for &s in &pic.shown {
        let (px, py) = area.map_coordinate(&(from, row(s) + 0.5));
        root.draw(&Text::new(
            format!("{} ({:.0} m)", station_name(s), pic.positions[s as usize]),
            (px - 10, py),
            (FONT, 15)
                .into_font()
                .color(&station_colour(s))
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
    }
    let mut x = 20;
    let font = (FONT, 15).into_font();
    let thin = pic
        .backoffs
        .iter()
        .any(|b| ((b.end - b.start) as f64 / 1e6) < span * 0.004 && us(b.start) < until);
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
