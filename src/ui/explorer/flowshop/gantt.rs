//! Gantt chart of a permutation flow-shop schedule: one row per machine, one coloured bar per
//! job, times from [`completion_times`] (the recurrence behind the crate's makespan).

use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Response, Sense, Stroke, StrokeKind, Ui};

use crate::error::Result;
use crate::kernels::flowshop::{completion_times, Instance};

/// One job on one machine, in time units of the instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GanttBar {
    /// Job (0-based).
    pub job: usize,
    /// Machine (0-based): the row.
    pub machine: usize,
    /// When the machine starts the job.
    pub start: u32,
    /// When the machine finishes it.
    pub end: u32,
}

/// A schedule laid out for drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct Gantt {
    /// Jobs of the instance.
    pub jobs: usize,
    /// Machines of the instance (rows).
    pub machines: usize,
    /// The job order the bars come from.
    pub order: Vec<usize>,
    /// Every job on every machine, by position in `order`, then machine.
    pub bars: Vec<GanttBar>,
    /// Latest end of any bar: the schedule's makespan.
    pub makespan: u32,
    /// Height of one machine row in points.
    pub row_height: f32,
}

impl Gantt {
    /// The schedule of `order` on `instance`; errors unless `order` is a permutation of its jobs.
    pub fn new(instance: &Instance, order: &[usize]) -> Result<Gantt> {
        let m = instance.machines;
        let times = completion_times(instance, order)?;
        let bars: Vec<GanttBar> = order
            .iter()
            .zip(times.chunks_exact(m))
            .flat_map(|(&job, ends)| {
                ends.iter().enumerate().map(move |(machine, &end)| GanttBar { job, machine, start: end - instance.time(machine, job), end })
            })
            .collect();
        let makespan = bars.iter().map(|b| b.end).max().unwrap_or(0);
        Ok(Gantt { jobs: instance.jobs, machines: m, order: order.to_vec(), bars, makespan, row_height: 16.0 })
    }

    /// Machine labels on the left, bars to the right on a time axis from 0 to the makespan;
    /// hover a bar for its job, machine, start and end.
    pub fn ui(&self, ui: &mut Ui) -> Response {
        let font = FontId::proportional(11.0);
        let label_width = 34.0;
        let axis_height = 16.0;
        let row_height = self.row_height;
        let height = self.machines.max(1) as f32 * row_height + axis_height;
        let (rect, response) = ui.allocate_exact_size(vec2(ui.available_width().max(label_width + 80.0), height), Sense::hover());
        response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Figure,
                true,
                format!("Gantt chart: {} jobs on {} machines, makespan {}", self.jobs, self.machines, self.makespan),
            )
        });
        if !ui.is_rect_visible(rect) {
            return response;
        }
        let painter = ui.painter_at(rect);
        let (text, weak) = (ui.visuals().text_color(), ui.visuals().weak_text_color());
        let area = Rect::from_min_max(pos2(rect.left() + label_width, rect.top()), pos2(rect.right() - 6.0, rect.bottom() - axis_height));
        let x_of = |t: u32| area.left() + t as f32 / self.makespan.max(1) as f32 * area.width();
        for machine in 0..self.machines {
            let y = rect.top() + (machine as f32 + 0.5) * row_height;
            painter.text(pos2(rect.left(), y), Align2::LEFT_CENTER, format!("M{machine}"), font.clone(), text);
        }
        let pointer = response.hover_pos();
        let mut hovered = None;
        for bar in &self.bars {
            let top = rect.top() + bar.machine as f32 * row_height + 1.0;
            let shape =
                Rect::from_min_max(pos2(x_of(bar.start), top), pos2(x_of(bar.end).max(x_of(bar.start) + 1.0), top + row_height - 2.0));
            painter.rect_filled(shape, 1.0, job_color(bar.job, self.jobs));
            painter.rect_stroke(shape, 1.0, Stroke::new(0.5, Color32::from_black_alpha(120)), StrokeKind::Inside);
            if shape.width() > 16.0 {
                painter.text(shape.center(), Align2::CENTER_CENTER, bar.job.to_string(), FontId::proportional(9.0), Color32::BLACK);
            }
            if pointer.is_some_and(|p| shape.contains(p)) {
                hovered = Some(*bar);
                painter.rect_stroke(shape, 1.0, Stroke::new(1.5, ui.visuals().strong_text_color()), StrokeKind::Outside);
            }
        }
        painter.line_segment([pos2(area.left(), area.bottom()), pos2(area.right(), area.bottom())], Stroke::new(1.0, weak));
        let axis_y = rect.bottom() - axis_height / 2.0;
        for (f, align) in
            [(0.0, Align2::LEFT_CENTER), (0.25, Align2::CENTER_CENTER), (0.5, Align2::CENTER_CENTER), (0.75, Align2::CENTER_CENTER)]
        {
            let t = (f * self.makespan as f64).round() as u32;
            painter.text(pos2(x_of(t), axis_y), align, t.to_string(), FontId::proportional(10.0), weak);
        }
        painter.text(
            pos2(area.right(), axis_y),
            Align2::RIGHT_CENTER,
            format!("makespan {}", self.makespan),
            FontId::proportional(10.0),
            text,
        );
        match hovered {
            Some(b) => response.on_hover_text_at_pointer(format!(
                "job {} on machine {}\nstart {}, end {} ({} units)",
                b.job,
                b.machine,
                b.start,
                b.end,
                b.end - b.start
            )),
            None => response,
        }
    }
}

/// A colour per job, hues spread by the golden angle so neighbouring numbers differ.
pub fn job_color(job: usize, jobs: usize) -> Color32 {
    let hue = (job as f32 * 0.618_034).fract();
    let value = if jobs > 12 && job % 2 == 1 { 0.78 } else { 0.92 };
    egui::ecolor::Hsva::new(hue, 0.55, value, 1.0).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_follow_the_recurrence_of_the_makespan() {
        // 2 machines, jobs 0 (3, 2) and 1 (1, 4): order 1, 0 finishes at max(1+4, 4)+2 = 7
        let instance = Instance::new("two", 2, 2, 1, vec![3, 1, 2, 4], 0, 0).unwrap();
        let gantt = Gantt::new(&instance, &[1, 0]).unwrap();
        let spans: Vec<(usize, usize, u32, u32)> = gantt.bars.iter().map(|b| (b.job, b.machine, b.start, b.end)).collect();
        assert_eq!(spans, [(1, 0, 0, 1), (1, 1, 1, 5), (0, 0, 1, 4), (0, 1, 5, 7)]);
        assert_eq!(gantt.makespan, crate::kernels::flowshop::makespan(&instance, &[1, 0]).unwrap());
        assert!(Gantt::new(&instance, &[1, 1]).is_err());
    }
}
