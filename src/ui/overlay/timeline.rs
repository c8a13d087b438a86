//! A timeline of a CPU-GPU pipeline: horizontal bars per lane (a host worker, the GPU queue),
//! from a plain list of spans.

use super::series_color;
use crate::harness::format_seconds;
use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Response, Sense, Stroke, StrokeKind, Ui};

/// One bar: `label` ran on `lane` from `start_s` to `end_s` (seconds on any common clock).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Row the bar goes in (e.g. "GPU", "remap worker 0").
    pub lane: String,
    /// Text on the bar; bars whose labels start alike share a colour.
    pub label: String,
    /// Start, in seconds.
    pub start_s: f64,
    /// End, in seconds.
    pub end_s: f64,
}

impl Span {
    /// A bar labelled `label` on `lane` from `start_s` to `end_s`.
    pub fn new(lane: impl Into<String>, label: impl Into<String>, start_s: f64, end_s: f64) -> Span {
        Span { lane: lane.into(), label: label.into(), start_s, end_s }
    }
}

impl From<(String, String, f64, f64)> for Span {
    fn from((lane, label, start_s, end_s): (String, String, f64, f64)) -> Span {
        Span { lane, label, start_s, end_s }
    }
}

impl From<(&str, &str, f64, f64)> for Span {
    fn from((lane, label, start_s, end_s): (&str, &str, f64, f64)) -> Span {
        Span::new(lane, label, start_s, end_s)
    }
}

/// Spans grouped by lane (lanes in order of first appearance), with the time range.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// The bars, in the order given.
    pub spans: Vec<Span>,
    /// Lane names, in order of first appearance.
    pub lanes: Vec<String>,
    /// Lane index of each span.
    lane_of: Vec<usize>,
    /// Earliest start of any span, seconds.
    pub start_s: f64,
    /// Latest end of any span, seconds.
    pub end_s: f64,
    /// Height of one lane in points.
    pub lane_height: f32,
}

/// A stable colour per label "kind": the text before the first digit or space, so that
/// "remap 3" and "remap 4" share a colour and "kernel 3" gets another.
fn label_color(label: &str) -> Color32 {
    let kind: String = label.chars().take_while(|c| !c.is_ascii_digit() && *c != ' ').collect();
    let mut h: u32 = 2166136261;
    for b in kind.bytes() {
        h = (h ^ b as u32).wrapping_mul(16777619);
    }
    series_color(h as usize)
}

impl Timeline {
    /// Groups `spans`; spans with `end_s < start_s` are drawn as instants at `start_s`.
    pub fn new<S: Into<Span>>(spans: impl IntoIterator<Item = S>) -> Timeline {
        let spans: Vec<Span> = spans.into_iter().map(Into::into).collect();
        let mut lanes: Vec<String> = Vec::new();
        let mut lane_of = Vec::with_capacity(spans.len());
        let (mut start_s, mut end_s) = (f64::INFINITY, f64::NEG_INFINITY);
        for s in &spans {
            let i = match lanes.iter().position(|l| *l == s.lane) {
                Some(i) => i,
                None => {
                    lanes.push(s.lane.clone());
                    lanes.len() - 1
                }
            };
            lane_of.push(i);
            if s.start_s.is_finite() {
                start_s = start_s.min(s.start_s);
                end_s = end_s.max(s.start_s.max(s.end_s));
            }
        }
        if !start_s.is_finite() {
            (start_s, end_s) = (0.0, 0.0);
        }
        Timeline { spans, lanes, lane_of, start_s, end_s, lane_height: 20.0 }
    }

    /// Seconds covered, at least a microsecond so the scale never divides by zero.
    pub fn duration_s(&self) -> f64 {
        (self.end_s - self.start_s).max(1e-6)
    }

    /// Lane labels on the left, bars to the right, a time axis below; hover a bar for its
    /// label and times.
    pub fn ui(&self, ui: &mut Ui) -> Response {
        let font = FontId::proportional(12.0);
        let text_color = ui.visuals().text_color();
        let label_width = self
            .lanes
            .iter()
            .map(|l| ui.ctx().fonts_mut(|f| f.layout_no_wrap(l.clone(), font.clone(), text_color).size().x))
            .fold(40.0f32, f32::max)
            + 8.0;
        let axis_height = 16.0;
        let height = self.lanes.len().max(1) as f32 * self.lane_height + axis_height;
        let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width().max(label_width + 40.0), height), Sense::hover());
        response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Figure,
                true,
                format!("timeline: {} spans on {} lanes", self.spans.len(), self.lanes.len()),
            )
        });
        if !ui.is_rect_visible(rect) {
            return response;
        }
        let painter = ui.painter_at(rect);
        let bars = Rect::from_min_max(pos2(rect.left() + label_width, rect.top()), pos2(rect.right() - 4.0, rect.bottom() - axis_height));
        let x_of = |t: f64| bars.left() + ((t - self.start_s) / self.duration_s()) as f32 * bars.width();
        for (i, lane) in self.lanes.iter().enumerate() {
            let y = rect.top() + (i as f32 + 0.5) * self.lane_height;
            painter.text(pos2(rect.left(), y), Align2::LEFT_CENTER, lane, font.clone(), text_color);
            if i % 2 == 1 {
                let band = Rect::from_x_y_ranges(bars.x_range(), (y - self.lane_height / 2.0)..=(y + self.lane_height / 2.0));
                painter.rect_filled(band, 0.0, ui.visuals().faint_bg_color);
            }
        }
        let mut hovered: Option<&Span> = None;
        let pointer = response.hover_pos();
        for (s, &lane) in self.spans.iter().zip(&self.lane_of) {
            let top = rect.top() + lane as f32 * self.lane_height + 2.0;
            let x0 = x_of(s.start_s);
            let x1 = x_of(s.end_s.max(s.start_s)).max(x0 + 1.0);
            let bar = Rect::from_min_max(pos2(x0, top), pos2(x1, top + self.lane_height - 4.0));
            painter.rect_filled(bar, 2.0, label_color(&s.label));
            if bar.width() > 40.0 {
                painter.text(bar.left_center() + vec2(3.0, 0.0), Align2::LEFT_CENTER, &s.label, FontId::proportional(10.0), Color32::WHITE);
            }
            if pointer.is_some_and(|p| bar.expand2(vec2(1.0, 0.0)).contains(p)) {
                hovered = Some(s);
                painter.rect_stroke(bar, 2.0, Stroke::new(1.5, ui.visuals().strong_text_color()), StrokeKind::Outside);
            }
        }
        // time axis: 0, middle and end, relative to the first span
        let axis_y = rect.bottom() - axis_height / 2.0;
        painter.line_segment(
            [pos2(bars.left(), bars.bottom()), pos2(bars.right(), bars.bottom())],
            Stroke::new(1.0, ui.visuals().weak_text_color()),
        );
        for (f, align) in [(0.0, Align2::LEFT_CENTER), (0.5, Align2::CENTER_CENTER), (1.0, Align2::RIGHT_CENTER)] {
            let t = self.duration_s() * f;
            painter.text(
                pos2(bars.left() + bars.width() * f as f32, axis_y),
                align,
                format_seconds(t),
                FontId::proportional(10.0),
                ui.visuals().weak_text_color(),
            );
        }
        match hovered {
            Some(s) => response.on_hover_text_at_pointer(format!(
                "{} on {}\n{} -> {} ({})",
                s.label,
                s.lane,
                format_seconds(s.start_s - self.start_s),
                format_seconds(s.end_s - self.start_s),
                format_seconds(s.end_s - s.start_s)
            )),
            None => response,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_in_order_of_first_appearance_and_range() {
        let t = Timeline::new([("gpu", "kernel 0", 0.5, 1.0), ("worker 0", "remap 1", 0.2, 0.6), ("gpu", "kernel 1", 1.0, 1.4)]);
        assert_eq!(t.lanes, vec!["gpu", "worker 0"]);
        assert_eq!((t.start_s, t.end_s), (0.2, 1.4));
        assert_eq!(t.lane_of, vec![0, 1, 0]);
    }

    #[test]
    fn empty_timeline_has_a_positive_duration() {
        let t = Timeline::new(Vec::<Span>::new());
        assert!(t.duration_s() > 0.0);
    }

    #[test]
    fn labels_of_one_kind_share_a_colour() {
        assert_eq!(label_color("remap 3"), label_color("remap 14"));
    }
}
