//! The embedded chart font (DejaVu Sans, Bitstream Vera licence in
//! assets/DejaVuSans-LICENSE.txt), so that drawing needs no system library.

use plotters::style::FontStyle;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the font as "sans-serif" for plotters, once per process.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded file is a valid TrueType font; a failure here would
        // only mean text is not drawn, never a wrong number.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}
