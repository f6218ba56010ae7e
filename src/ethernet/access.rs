//! Channel-access modes other than 1-persistent CSMA/CD (non-persistent,
//! p-persistent, slotted ALOHA): where they branch off before deferral.

use super::station::Mac;
use super::{Observer, Sim};
use crate::engine::Time;
use crate::ethernet::Access;

impl<O: Observer> Sim<'_, O> {
    /// Handles `contend` for modes that do not simply defer; returns whether
    /// it did.
    pub(super) fn contend_by_mode(&mut self, now: Time, i: usize) -> bool {
        match self.access {
            Access::Aloha | Access::SlottedAloha => {
                // No carrier sense: send at once, after the station's own gap;
                // slotted, at the next slot boundary. Slotted stations keep no
                // gap: slots keep them apart, and a gap would push a retry
                // drawn for the very next slot (r = 0) into the one after, the
                // same slot as r = 1, so that pairs could never separate.
                let at = if self.access == Access::SlottedAloha {
                    let slot = self.sc.medium.slot_ps;
                    now.div_ceil(slot).saturating_mul(slot)
                } else {
                    self.stations[i]
                        .own_end()
                        .map_or(now, |e| now.max(e + self.ifg))
                };
                if at <= now {
                    self.start_tx(now, i);
                } else {
                    // No carrier can restart it: `restart_before` 0.
                    self.schedule_start(now, i, at, 0);
                }
                true
            }
            Access::CsmaCdNonPersistent if self.carrier_at(i, now) => {
                self.sense_later(now, i);
                true
            }
            _ => false,
        }
    }

    /// p-persistent: a station whose slot wait or backoff ends at `now` samples
    /// the carrier just before its slot begins, so a signal reaching it at that
    /// very instant (sent in the same slot elsewhere) is not sensed and the two
    /// collide, as in Metcalfe and Boggs's slotted model.
    pub(super) fn slot_sample_time(&self, now: Time, i: usize, from: Time) -> Time {
        match self.access {
            Access::CsmaCdPPersistent { .. }
                if from == now && self.stations[i].mac == Mac::Backoff =>
            {
                now.saturating_sub(1)
            }
            _ => from,
        }
    }
}
