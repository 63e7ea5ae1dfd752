//! Progress on stderr: on a terminal, one bar redrawn in place (done/total, running, failed,
//! cost so far, ETA) with a line per finished task above it; otherwise one plain line per
//! finished task.

use std::io::Write;
use std::time::{Duration, Instant};

use super::results::{Status, TaskResult};

/// The batch's progress.
pub struct Progress {
    total: usize,
    done: usize,
    failed: usize,
    denied: usize,
    running: usize,
    cost: f64,
    started: Instant,
    tty: bool,
}

impl Progress {
    /// `total` tasks to run in this invocation; `tty`: draw a bar.
    pub fn new(total: usize, tty: bool) -> Self {
        Progress {
            total,
            done: 0,
            failed: 0,
            denied: 0,
            running: 0,
            cost: 0.0,
            started: Instant::now(),
            tty,
        }
    }

    /// A task started.
    pub fn started(&mut self) {
        self.running += 1;
        self.draw(None);
    }

    /// A task finished (`ran`: it had started; a bad line never runs).
    pub fn finished(&mut self, r: &TaskResult, ran: bool) {
        if ran {
            self.running = self.running.saturating_sub(1);
        }
        self.done += 1;
        self.cost += r.total_cost_usd;
        if r.status != Status::Success {
            self.failed += 1;
        }
        if r.status == Status::PermissionDenied {
            self.denied += 1;
        }
        let mut line = format!(
            "[{}/{}] {}: {} ({} turns, ${:.4}, {:.1}s)",
            self.done,
            self.total,
            r.key(),
            r.status.as_str(),
            r.num_turns,
            r.total_cost_usd,
            r.duration_ms as f64 / 1000.0
        );
        if let Some(e) = &r.error {
            let short: String = e.chars().take(200).collect();
            line.push_str(&format!(": {}", short.replace('\n', " ")));
        }
        self.draw(Some(&line));
    }

    /// Clear the bar (before the closing summary).
    pub fn clear(&self) {
        if self.tty {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }

    /// The counts line: "N of T tasks done, F not successful (D with denied tool calls), $C".
    pub fn summary(&self) -> String {
        format!(
            "{} of {} tasks done, {} not successful ({} with denied tool calls), ${:.4}, {:.1}s",
            self.done,
            self.total,
            self.failed,
            self.denied,
            self.cost,
            self.started.elapsed().as_secs_f64()
        )
    }

    fn draw(&self, line: Option<&str>) {
        let mut err = std::io::stderr().lock();
        if !self.tty {
            if let Some(l) = line {
                let _ = writeln!(err, "skiff batch: {l}");
            }
            return;
        }
        let _ = write!(err, "\r\x1b[2K");
        if let Some(l) = line {
            let _ = writeln!(err, "{l}");
        }
        let _ = write!(err, "{}", self.bar());
        let _ = err.flush();
    }

    fn bar(&self) -> String {
        const WIDTH: usize = 24;
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let eta = self.eta().map_or_else(|| "-".to_owned(), fmt_duration);
        format!(
            "[{}{}] {}/{} · {} running · {} failed · ${:.4} · ETA {}",
            "#".repeat(filled),
            ".".repeat(WIDTH - filled.min(WIDTH)),
            self.done,
            self.total,
            self.running,
            self.failed,
            self.cost,
            eta
        )
    }

    fn eta(&self) -> Option<Duration> {
        if self.done == 0 {
            return None;
        }
        let per = self.started.elapsed().as_secs_f64() / self.done as f64;
        let left = self.total.saturating_sub(self.done) as f64;
        Some(Duration::from_secs_f64(per * left))
    }
}

/// "1h02m", "3m10s", "12s".
fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_counts_and_eta() {
        let mut p = Progress::new(4, false);
        assert!(p.bar().contains("0/4") && p.bar().contains("ETA -"));
        p.started();
        let mut r = TaskResult::bare(Some("a".into()), 0, 1, Status::Error);
        r.total_cost_usd = 0.5;
        p.finished(&r, true);
        let bar = p.bar();
        assert!(
            bar.contains("1/4 · 0 running · 1 failed · $0.5000"),
            "{bar}"
        );
        assert!(bar.starts_with("[######.................."), "{bar}");
        assert_eq!(fmt_duration(Duration::from_secs(3725)), "1h02m");
        assert_eq!(fmt_duration(Duration::from_secs(190)), "3m10s");
    }
}
