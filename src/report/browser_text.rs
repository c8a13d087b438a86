//! Plot text in a browser page. plotters draws a bitmap's text with a font it rasterises itself
//! on native targets; on wasm32 it has no rasteriser and leaves text to the browser. So in a
//! page the bitmap's text is drawn by the browser's canvas (`fillText` on a small offscreen
//! canvas) and blended into the bitmap: the same figure, lettered by the browser's sans-serif.

use plotters::backend::{BitMapBackend, DrawingBackend};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind};
use wasm_bindgen::JsCast;

use crate::error::{Error, Result};

type BitmapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

/// A [`BitMapBackend`] whose text the browser draws.
pub(super) struct BrowserText<'a> {
    bitmap: BitMapBackend<'a>,
    canvas: web_sys::HtmlCanvasElement,
    context: web_sys::CanvasRenderingContext2d,
}

impl<'a> BrowserText<'a> {
    /// `bitmap`, with an offscreen canvas to letter it; Err outside a page with a document.
    pub(super) fn new(bitmap: BitMapBackend<'a>) -> Result<BrowserText<'a>> {
        let failed = |e: wasm_bindgen::JsValue| Error::invalid("plot", format!("the page has no canvas to draw the plot's text: {e:?}"));
        let document = web_sys::window().and_then(|w| w.document()).ok_or_else(|| failed("no document".into()))?;
        let canvas: web_sys::HtmlCanvasElement =
            document.create_element("canvas").map_err(failed)?.dyn_into().map_err(|e| failed(e.into()))?;
        let context = canvas
            .get_context("2d")
            .map_err(failed)?
            .ok_or_else(|| failed("no 2d context".into()))?
            .dyn_into()
            .map_err(|e| failed(e.into()))?;
        Ok(BrowserText { bitmap, canvas, context })
    }

    /// `text` in `font` as the canvas draws it in black: its width, height and coverage
    /// (0..=255, row by row).
    fn rasterise(&self, text: &str, font: &str) -> std::result::Result<(i32, i32, Vec<u8>), wasm_bindgen::JsValue> {
        self.context.set_font(font);
        let metrics = self.context.measure_text(text)?;
        let (ascent, descent) = (metrics.font_bounding_box_ascent(), metrics.font_bounding_box_descent());
        let (width, height) = (metrics.width().ceil().max(1.0) as i32, (ascent + descent).ceil().max(1.0) as i32);
        // resizing clears the canvas and its state
        self.canvas.set_width(width as u32);
        self.canvas.set_height(height as u32);
        self.context.set_font(font);
        self.context.set_fill_style_str("black");
        self.context.fill_text(text, 0.0, ascent)?;
        let rgba = self.context.get_image_data(0.0, 0.0, width as f64, height as f64)?.data();
        Ok((width, height, rgba.0.chunks_exact(4).map(|p| p[3]).collect()))
    }
}

/// A failure of the browser's canvas, as plotters reports a backend's.
fn canvas_error(e: wasm_bindgen::JsValue) -> DrawingErrorKind<BitmapError> {
    DrawingErrorKind::FontError(format!("the browser's canvas could not draw text: {e:?}").into())
}

impl DrawingBackend for BrowserText<'_> {
    type ErrorType = BitmapError;

    fn get_size(&self) -> (u32, u32) {
        self.bitmap.get_size()
    }

    fn ensure_prepared(&mut self) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.ensure_prepared()
    }

    fn present(&mut self) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.present()
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vertices: I,
        style: &S,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.fill_polygon(vertices, style)
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        self.bitmap.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> std::result::Result<(u32, u32), DrawingErrorKind<BitmapError>> {
        let font = format!("{} {}px {}", style.style().as_str(), style.size(), style.family().as_str());
        let (width, height, _) = self.rasterise(text, &font).map_err(canvas_error)?;
        Ok((width as u32, height as u32))
    }

    /// Places the text as plotters' own `draw_text` does (anchor, then rotation), with the
    /// canvas's coverage as each pixel's alpha.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> std::result::Result<(), DrawingErrorKind<BitmapError>> {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let font = format!("{} {}px {}", style.style().as_str(), style.size(), style.family().as_str());
        let (width, height, coverage) = self.rasterise(text, &font).map_err(canvas_error)?;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        for (i, &c) in coverage.iter().enumerate().filter(|(_, c)| **c > 0) {
            let (x, y) = (i as i32 % width, i as i32 / width);
            let (x, y) = transform.transform(x + dx, y + dy);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if (0..w as i32).contains(&x) && (0..h as i32).contains(&y) {
                self.bitmap.draw_pixel((x, y), BackendColor { alpha: color.alpha * c as f64 / 255.0, rgb: color.rgb })?;
            }
        }
        Ok(())
    }
}
