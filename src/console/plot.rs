//! Plots drawn on the server as SVG with `plotters` (its SVG backend alone: no bitmap, font
//! or image features), embedded in the page: nothing to download, nothing run in the browser,
//! printable. Each plot is an image with a text alternative (`role="img"`, a title and a
//! description); the figures it shows are also in the page's tables.

use chrono::{DateTime, Utc};
use plotters::prelude::*;

use crate::rtp::Series;

const WIDTH: u32 = 760;
const HEIGHT: u32 = 340;
const INK: RGBColor = RGBColor(26, 26, 26);
const LINE: RGBColor = RGBColor(18, 50, 92);
const BAND: RGBColor = RGBColor(120, 120, 120);
const REFERENCE: RGBColor = RGBColor(138, 16, 16);

/// Gives the SVG a role, a title and a description for assistive technology.
fn accessible(svg: String, title: &str, desc: &str) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let Some(end) = svg.find('>') else {
        return svg;
    };
    let (open, rest) = svg.split_at(end);
    format!(
        "{open} role=\"img\" aria-label=\"{}\"><title>{}</title><desc>{}</desc>{}",
        esc(title),
        esc(title),
        esc(desc),
        &rest[1..]
    )
}

fn style(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&INK)
}

/// The running return of a simulated bet type after each segment, with its 95 % interval and
/// the 100 % line where it is in view.
pub fn convergence(series: &Series, label: &str) -> Option<String> {
    let pts = &series.points;
    let last = pts.last()?;
    let x_max = last.rounds as f64;
    let (mut lo, mut hi) = pts.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.ci95[0]), hi.max(p.ci95[1]))
    });
    lo *= 100.0;
    hi *= 100.0;
    let pad = ((hi - lo) * 0.08).max(0.05);
    let (y0, y1) = (lo - pad, hi + pad);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(42)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_max * 1.02, y0..y1)
            .ok()?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .axis_style(INK)
            .label_style(style(13))
            .axis_desc_style(style(14))
            .x_desc("rounds played")
            .y_desc("return to player (%)")
            .x_label_formatter(&|x| super::layout::count(x.max(0.0) as u64))
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .ok()?;
        let at = |f: fn(&crate::rtp::Point) -> f64| -> Vec<(f64, f64)> {
            pts.iter()
                .map(|p| (p.rounds as f64, f(p) * 100.0))
                .collect()
        };
        chart
            .draw_series(LineSeries::new(at(|p| p.ci95[0]), BAND.stroke_width(1)))
            .ok()?;
        chart
            .draw_series(LineSeries::new(at(|p| p.ci95[1]), BAND.stroke_width(1)))
            .ok()?;
        chart
            .draw_series(LineSeries::new(at(|p| p.rtp), LINE.stroke_width(3)))
            .ok()?;
        chart
            .draw_series(
                at(|p| p.rtp)
                    .into_iter()
                    .map(|c| Circle::new(c, 3, LINE.filled())),
            )
            .ok()?;
        if (y0..=y1).contains(&100.0) {
            chart
                .draw_series(LineSeries::new(
                    [(0.0, 100.0), (x_max * 1.02, 100.0)],
                    REFERENCE.stroke_width(1),
                ))
                .ok()?;
        }
        root.present().ok()?;
    }
    let desc = format!(
        "{label}: after {} rounds {:.3} % (95 % interval {:.3}–{:.3} %); thick line: the \
         running return, thin grey lines: its 95 % interval{}.",
        super::layout::count(last.rounds),
        last.rtp * 100.0,
        last.ci95[0] * 100.0,
        last.ci95[1] * 100.0,
        if (y0..=y1).contains(&100.0) {
            ", red line: 100 %"
        } else {
            ""
        }
    );
    Some(accessible(
        svg,
        &format!("Convergence of the return of {label}"),
        &desc,
    ))
}

/// The log's size over time.
pub fn growth(points: &[(DateTime<Utc>, u64)]) -> Option<String> {
    let (first, last) = (points.first()?, points.last()?);
    let t0 = first.0;
    let span = (last.0 - t0).num_milliseconds().max(1) as f64 / 1000.0;
    let y_max = last.1.max(1) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(42)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..span * 1.02, 0f64..y_max * 1.05)
            .ok()?;
        let label_time = move |s: &f64| {
            let t = t0 + chrono::Duration::milliseconds((*s * 1000.0) as i64);
            if span > 2.0 * 86_400.0 {
                t.format("%Y-%m-%d").to_string()
            } else {
                t.format("%H:%M:%S").to_string()
            }
        };
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .axis_style(INK)
            .label_style(style(13))
            .axis_desc_style(style(14))
            .x_desc("time (UTC)")
            .y_desc("entries in the log")
            .x_labels(6)
            .x_label_formatter(&label_time)
            .y_label_formatter(&|y| super::layout::count(y.max(0.0) as u64))
            .draw()
            .ok()?;
        let line: Vec<(f64, f64)> = points
            .iter()
            .map(|(t, n)| ((*t - t0).num_milliseconds() as f64 / 1000.0, *n as f64))
            .collect();
        chart
            .draw_series(LineSeries::new(line, LINE.stroke_width(3)))
            .ok()?;
        root.present().ok()?;
    }
    let desc = format!(
        "From {} at {} to {} entries at {}.",
        super::layout::count(first.1),
        first.0.format("%Y-%m-%d %H:%M:%S UTC"),
        super::layout::count(last.1),
        last.0.format("%Y-%m-%d %H:%M:%S UTC")
    );
    Some(accessible(svg, "Growth of the audit log", &desc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtp::Point;

    #[test]
    fn plots_are_svg_with_a_text_alternative_and_no_inline_style() {
        let s = Series {
            bet: "main".into(),
            points: (1..=20)
                .map(|i| Point {
                    rounds: i * 1000,
                    rtp: 0.99 + 0.001 * (i as f64).sin(),
                    ci95: [0.98, 1.01],
                })
                .collect(),
        };
        let svg = convergence(&s, "Základní sázka").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        assert!(svg.contains("role=\"img\""));
        assert!(svg.contains("<title>Convergence of the return of Základní sázka</title>"));
        // The console's Content-Security-Policy allows no inline styles.
        assert!(!svg.contains("style="), "inline style in {svg}");
        let t0 = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let g = growth(&[(t0, 1), (t0 + chrono::Duration::seconds(90), 5000)]).unwrap();
        assert!(g.contains("<desc>From 1 at 2026-01-01 00:00:00 UTC to 5 000 entries"));
        assert!(!g.contains("style="));
    }
}
