//! PNG drawing: plotters' bitmap backend with text laid out here, glyph by
//! glyph at its exact advance and side bearing, so digits are evenly spaced.

use super::style;
use ab_glyph::{point, Font, PxScale, ScaleFont};
use plotters::prelude::*;
use plotters_backend::{
    text_anchor::{HPos, VPos},
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

/// A bitmap backend whose text is drawn by [`draw_text`] instead of
/// plotters' glyph loop, which drops each glyph's left side bearing and
/// rounds every advance down (so "1" sits apart from its neighbours).
pub struct Png<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> Png<'a> {
    /// A picture of `size` pixels drawn into `pixels` (RGB, 3 bytes a
    /// pixel: see [`pixels`]); [`encode`] makes it a PNG file's bytes.
    pub fn new(pixels: &'a mut [u8], size: (u32, u32)) -> Self {
        style::register();
        Png {
            inner: BitMapBackend::with_buffer(pixels, size),
        }
    }
}

/// A blank buffer for a picture of `size` pixels.
pub fn pixels(size: (u32, u32)) -> Vec<u8> {
    vec![0; size.0 as usize * size.1 as usize * 3]
}

/// The bytes of a PNG file of the picture in `pixels`: made in memory, so
/// that writing them is one checked write (the image crate's own file
/// writer drops its buffer unflushed, losing a full disk's error).
pub fn encode(pixels: &[u8], size: (u32, u32)) -> Result<Vec<u8>, String> {
    use image::ImageEncoder;
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(pixels, size.0, size.1, image::ColorType::Rgb8)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Draws a picture of `size` pixels with `paint` and returns its PNG bytes.
pub fn render(
    size: (u32, u32),
    paint: impl FnOnce(&DrawingArea<Png<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<Vec<u8>, String> {
    let mut buffer = pixels(size);
    {
        let root = Png::new(&mut buffer, size).into_drawing_area();
        paint(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    encode(&buffer, size)
}

/// Where the baseline sits below the anchor's top, centre or bottom, as the
/// SVG backend places it (`dy` of 0.76em, 0.5ex, -0.5ex with an em of
/// size/1.24), so PNG and SVG text line up alike.
fn baseline(size: f32, v: VPos) -> f32 {
    let em = size / 1.24;
    let ex = em * 0.547; // DejaVu Sans: x-height 1120 of 2048 units.
    match v {
        VPos::Top => 0.76 * em,
        VPos::Center => 0.5 * ex,
        VPos::Bottom => -0.5 * ex,
    }
}

impl DrawingBackend for Png<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (iw, ih): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, (iw, ih), src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let size = style.size();
        Ok((
            style::text_width(text, size).ceil() as u32,
            (size / 1.24).round() as u32,
        ))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let colour = style.color();
        if colour.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let size = style.size() as f32;
        let font = style::font();
        let scaled = font.as_scaled(PxScale::from(size));
        let width = style::text_width(text, style.size()) as f32;
        // The pen's start relative to the anchor, in the text's own frame.
        let x0 = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let y0 = baseline(size, style.anchor().v_pos);
        let transform = style.transform();
        let (w, h) = self.get_size();
        let mut caret = x0;
        let mut prev = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                caret += scaled.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(PxScale::from(size), point(caret, y0));
            caret += scaled.h_advance(id);
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    pixels.push((
                        b.min.x as i32 + x as i32,
                        b.min.y as i32 + y as i32,
                        coverage,
                    ));
                }
            });
            for (x, y, coverage) in pixels {
                let (dx, dy) = transform.transform(x, y);
                let (px, py) = (pos.0 + dx, pos.1 + dy);
                if px >= 0 && py >= 0 && (px as u32) < w && (py as u32) < h {
                    self.inner.draw_pixel(
                        (px, py),
                        BackendColor {
                            alpha: colour.alpha * f64::from(coverage.min(1.0)),
                            rgb: colour.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// The bitmap backend's error type.
type BitmapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

/// A sentence for an error from drawing or writing a PNG: the I/O or
/// encoding error it carries ("No such file or directory (os error 2)"),
/// not plotters' debug form of it.
pub fn error_text(e: &DrawingAreaErrorKind<BitmapError>) -> String {
    match e {
        DrawingAreaErrorKind::BackendError(DrawingErrorKind::DrawingError(
            BitmapError::IOError(io),
        )) => io.to_string(),
        DrawingAreaErrorKind::BackendError(DrawingErrorKind::DrawingError(
            BitmapError::ImageError(image),
        )) => image.to_string(),
        other => other.to_string(),
    }
}
