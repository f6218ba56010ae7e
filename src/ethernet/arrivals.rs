//! A station's traffic: arrival processes turned into frames in its queue.
//! Calls into the MAC (`add_frame`); the MAC never calls back here.

use super::station::Draws;
use super::{Event, Observer, Sim};
use crate::engine::Time;
use crate::traffic::{exponential_ps, pareto_ps, Arrivals};
use rand::RngExt;

impl<O: Observer> Sim<'_, O> {
    pub(super) fn start_traffic(&mut self, i: usize) {
        match *self.group_arrivals(i) {
            Arrivals::Saturated => {
                self.add_frame(0, i);
            }
            Arrivals::Poisson { rate } => {
                let first = self.generators.with(
                    i,
                    Draws::Traffic,
                    &mut self.stations[i].streams_at,
                    |r| exponential_ps(r, 1e12 / rate),
                );
                self.events.push(first, Event::Arrival(i as u32));
            }
            Arrivals::Periodic { interval, phase } => {
                let first = match phase {
                    Some(p) => p,
                    None => self.generators.with(
                        i,
                        Draws::Traffic,
                        &mut self.stations[i].streams_at,
                        |r| r.random_range(0..interval),
                    ),
                };
                self.events.push(first, Event::Arrival(i as u32));
            }
            Arrivals::Burst { at, .. } => self.events.push(at, Event::Arrival(i as u32)),
            Arrivals::OnOff {
                rate,
                mean_on,
                alpha,
                ..
            } => {
                let (on_until, first) = self.generators.with(
                    i,
                    Draws::Traffic,
                    &mut self.stations[i].streams_at,
                    |r| {
                        let on = pareto_ps(r, alpha, mean_on as f64);
                        (on, exponential_ps(r, 1e12 / rate))
                    },
                );
                self.extras.on_until[i] = on_until;
                self.schedule_on_off(i, first);
            }
        }
    }

    /// Schedules the next on-off arrival at `next`, skipping off periods.
    pub(super) fn schedule_on_off(&mut self, i: usize, mut next: Time) {
        if let Arrivals::OnOff {
            rate,
            mean_on,
            mean_off,
            alpha,
        } = *self.group_arrivals(i)
        {
            let s = &mut self.stations[i];
            let on_until = &mut self.extras.on_until[i];
            // Exponential interarrivals are memoryless, so an arrival that
            // falls past the on period restarts at the next on period.
            // An arrival past the duration is never processed, so stop there:
            // with saturated times, `next` could otherwise never fall inside.
            let duration = self.sc.duration;
            while next >= *on_until && next < duration {
                let (on_start, on, gap) =
                    self.generators
                        .with(i, Draws::Traffic, &mut s.streams_at, |r| {
                            let off = pareto_ps(r, alpha, mean_off as f64);
                            let on_start = on_until.saturating_add(off);
                            let on = pareto_ps(r, alpha, mean_on as f64);
                            (on_start, on, exponential_ps(r, 1e12 / rate))
                        });
                *on_until = on_start.saturating_add(on);
                next = on_start.saturating_add(gap);
            }
            self.events.push(next, Event::Arrival(i as u32));
        }
    }

    pub(super) fn arrival(&mut self, t: Time, i: usize) {
        match *self.group_arrivals(i) {
            Arrivals::Saturated => {}
            Arrivals::Poisson { rate } => {
                self.add_frame(t, i);
                let gap = self.generators.with(
                    i,
                    Draws::Traffic,
                    &mut self.stations[i].streams_at,
                    |r| exponential_ps(r, 1e12 / rate),
                );
                self.events
                    .push(t.saturating_add(gap), Event::Arrival(i as u32));
            }
            Arrivals::Periodic { interval, .. } => {
                self.add_frame(t, i);
                self.events
                    .push(t.saturating_add(interval), Event::Arrival(i as u32));
            }
            Arrivals::Burst { frames, .. } => {
                for _ in 0..frames {
                    self.add_frame(t, i);
                }
            }
            Arrivals::OnOff { rate, .. } => {
                self.add_frame(t, i);
                let gap = self.generators.with(
                    i,
                    Draws::Traffic,
                    &mut self.stations[i].streams_at,
                    |r| exponential_ps(r, 1e12 / rate),
                );
                self.schedule_on_off(i, t.saturating_add(gap));
            }
        }
    }
}
