//! The signals of the signal index's buckets: a fixed run of slots per
//! bucket in one array on huge pages, with a spill list for the rare bucket
//! that outgrows its run.

use crate::engine::Time;

/// One signal as the index sees it, in 24 bytes: its end as a length from
/// its start (see [`LONGEST`]), with whether that end is final in the
/// length's top bit.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key {
    pub(super) id: u64,
    pub(super) start: Time,
    len_fixed: u32,
    /// The sender's rank in position order.
    pub(super) rank: u32,
}

/// The longest signal a [`Key`] holds, in ps (2.1 ms: a 1518-byte frame at
/// 10 Mb/s is 1.21 ms on the wire). A run whose signals may be longer does
/// without the index (see `Sim::new`).
pub(super) const LONGEST: Time = (FIXED - 1) as Time;

const FIXED: u32 = 1 << 31;

impl Key {
    /// Signal `id` of the station at `rank`, on [start, end), its end not
    /// final.
    #[inline]
    pub(super) fn new(id: u64, start: Time, end: Time, rank: u32) -> Key {
        Key {
            id,
            start,
            len_fixed: Key::len(start, end),
            rank,
        }
    }

    #[inline]
    fn len(start: Time, end: Time) -> u32 {
        match u32::try_from(end - start) {
            Ok(len) if len < FIXED => len,
            _ => panic!("a signal longer than the bus index holds"),
        }
    }

    #[inline]
    pub(super) fn end(&self) -> Time {
        self.start + (self.len_fixed & !FIXED) as Time
    }

    #[inline]
    pub(super) fn fixed(&self) -> bool {
        self.len_fixed & FIXED != 0
    }

    /// The signal now ends at `end`, for good.
    #[inline]
    pub(super) fn fix(&mut self, end: Time) {
        self.len_fixed = Key::len(self.start, end) | FIXED;
    }
}

/// Stations per leaf of the trees: a leaf's signals are scanned, which keeps
/// the trees shallow and small enough to stay in cache (smaller buckets make
/// deeper trees, whose node updates and cache misses cost more than the
/// shorter scans save: the 10^6 burst runs about 1.2 times as long with
/// leaves of 64, and no faster with 512, where the 10^5 burst slows).
pub(super) const BUCKET: usize = 256;

/// The signals of every bucket of one tree. A bucket's list lives in a
/// fixed run of [`BUCKET`] slots of one array on huge pages, so that its
/// place is computed rather than read from a list header (one memory access
/// less, and prefetches need no header first) and reading it costs no
/// address translation miss (in a million-station crowd the lists span
/// ~100 MB, far beyond what small pages' translation caches cover). A
/// bucket that outgrows its run (stations with two signals in one tree: rare
/// on the wire, the rule among a crowd's buried signals) moves its whole list
/// to a spill vector until it shrinks back. A spill vector grows a run at a
/// time (doubling left a quarter of the room of a crowd's many spilled lists
/// unused).
pub(super) struct Lists {
    slots: Vec<Key>,
    len: Vec<u32>,
    spill: Vec<Vec<Key>>,
}

impl Lists {
    pub(super) fn new(buckets: usize) -> Self {
        Lists {
            slots: crate::mem::huge_filled(buckets * BUCKET, Key::default()),
            len: vec![0; buckets],
            spill: (0..buckets).map(|_| Vec::new()).collect(),
        }
    }

    #[inline]
    pub(super) fn get(&self, b: usize) -> &[Key] {
        let n = self.len[b] as usize;
        if n <= BUCKET {
            &self.slots[b * BUCKET..b * BUCKET + n]
        } else {
            &self.spill[b]
        }
    }

    #[inline]
    pub(super) fn get_mut(&mut self, b: usize) -> &mut [Key] {
        let n = self.len[b] as usize;
        if n <= BUCKET {
            &mut self.slots[b * BUCKET..b * BUCKET + n]
        } else {
            &mut self.spill[b]
        }
    }

    #[inline]
    pub(super) fn push(&mut self, b: usize, k: Key) {
        let n = self.len[b] as usize;
        if n < BUCKET {
            self.slots[b * BUCKET + n] = k;
        } else {
            let spill = &mut self.spill[b];
            if n == BUCKET {
                spill.reserve_exact(2 * BUCKET);
                spill.extend_from_slice(&self.slots[b * BUCKET..(b + 1) * BUCKET]);
            } else if spill.len() == spill.capacity() {
                spill.reserve_exact(BUCKET);
            }
            spill.push(k);
        }
        self.len[b] += 1;
    }

    /// Removes the list's `pos`th signal, putting the last in its place.
    #[inline]
    pub(super) fn swap_remove(&mut self, b: usize, pos: usize) -> Key {
        let n = self.len[b] as usize;
        self.len[b] -= 1;
        if n <= BUCKET {
            let run = &mut self.slots[b * BUCKET..b * BUCKET + n];
            let k = run[pos];
            run[pos] = run[n - 1];
            k
        } else {
            let k = self.spill[b].swap_remove(pos);
            if n - 1 == BUCKET {
                let spill = std::mem::take(&mut self.spill[b]);
                self.slots[b * BUCKET..(b + 1) * BUCKET].copy_from_slice(&spill);
            }
            k
        }
    }

    /// Removes the bucket's signals that `gone` picks, each place filled by
    /// the last signal, as [`Lists::swap_remove`] does, and hands each to
    /// `taken`.
    pub(super) fn remove_if(
        &mut self,
        b: usize,
        gone: impl Fn(&Key) -> bool,
        mut taken: impl FnMut(Key),
    ) {
        let mut pos = 0;
        while let Some(k) = self.get(b)[pos..].iter().position(&gone) {
            pos += k;
            taken(self.swap_remove(b, pos));
        }
    }

    pub(super) fn clear(&mut self) {
        self.len.fill(0);
        for s in &mut self.spill {
            *s = Vec::new();
        }
    }

    /// Starts loading the bucket's length and first signals.
    #[inline]
    pub(super) fn prefetch(&self, b: usize) {
        if let (Some(n), Some(k)) = (self.len.get(b), self.slots.get(b * BUCKET)) {
            crate::mem::prefetch_lines(n);
            crate::mem::prefetch_lines(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Lists, BUCKET, LONGEST};
    use rand::{RngExt, SeedableRng};

    fn key(id: u64) -> Key {
        let mut k = Key::new(id, id * 3, id * 3 + 1, id as u32);
        if id.is_multiple_of(2) {
            k.fix(id * 3 + 2);
        }
        k
    }

    /// A key gives back what it was made with, at the limits of its fields,
    /// and is 24 bytes.
    #[test]
    fn keys_hold_their_signals_at_the_limits() {
        assert_eq!(std::mem::size_of::<Key>(), 24);
        let start = 1 << 60;
        let top = u32::MAX;
        let mut k = Key::new(u64::MAX, start, start + LONGEST, top);
        assert_eq!(
            (k.id, k.start, k.end(), k.rank, k.fixed()),
            (u64::MAX, start, start + LONGEST, top, false)
        );
        k.fix(start + 1);
        assert_eq!((k.end(), k.rank, k.fixed()), (start + 1, top, true));
        k.fix(start + LONGEST);
        assert_eq!((k.end(), k.rank, k.fixed()), (start + LONGEST, top, true));
        let k = Key::new(7, 0, 0, 0);
        assert_eq!((k.end(), k.rank, k.fixed()), (0, 0, false));
    }

    /// A signal too long for a key is refused, never held wrong.
    #[test]
    #[should_panic(expected = "longer than the bus index holds")]
    fn keys_refuse_longer_signals() {
        Key::new(1, 5, 5 + LONGEST + 1, 0);
    }

    /// The slot lists hold what plain vectors hold, in the same order, across
    /// the spill boundary both ways (a bucket grown past [`BUCKET`] signals
    /// and shrunk back, one signal at a time or several at once), with
    /// neighbouring buckets untouched.
    #[test]
    fn lists_match_vectors_across_the_spill() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut lists = Lists::new(3);
        let mut model: Vec<Vec<Key>> = vec![Vec::new(); 3];
        let (mut spilled, mut returned, mut returned_at_once) = (0, 0, 0);
        let mut next = 0;
        // Ten phases, each long enough for a list to drift across BUCKET.
        let phase = 32 * BUCKET;
        for step in 0..10 * phase {
            let b = rng.random_range(0..3);
            // Drift between growing and shrinking so that lists cross BUCKET.
            let grow = if (step / phase).is_multiple_of(2) {
                0.6
            } else {
                0.4
            };
            if model[b].is_empty() || rng.random_bool(grow) {
                let k = key(next);
                next += 1;
                spilled += usize::from(model[b].len() == BUCKET);
                lists.push(b, k);
                model[b].push(k);
            } else if step % 7 == 0 {
                // Several at once: those ending by a time, as removals of
                // old signals take them.
                let last_end = rng.random_range(0..next) * 3 + 1;
                let gone = |k: &Key| k.end() <= last_end;
                let before = model[b].len();
                let mut pos = 0;
                while pos < model[b].len() {
                    if gone(&model[b][pos]) {
                        model[b].swap_remove(pos);
                    } else {
                        pos += 1;
                    }
                }
                returned_at_once += usize::from(before > BUCKET && model[b].len() <= BUCKET);
                lists.remove_if(b, gone, |_| {});
            } else {
                let pos = rng.random_range(0..model[b].len());
                returned += usize::from(model[b].len() == BUCKET + 1);
                let got = lists.swap_remove(b, pos);
                let want = model[b].swap_remove(pos);
                assert_eq!(got.id, want.id);
            }
            for (c, m) in model.iter().enumerate() {
                let ids: Vec<u64> = lists.get(c).iter().map(|k| k.id).collect();
                let want: Vec<u64> = m.iter().map(|k| k.id).collect();
                assert_eq!(ids, want, "bucket {c} after step {step}");
            }
            if step % 97 == 0 {
                if let Some(k) = lists.get_mut(b).first_mut() {
                    k.fix(k.end() + 1);
                    model[b][0] = *k;
                }
            }
        }
        assert!(
            spilled > 10 && returned > 10 && returned_at_once > 10,
            "spilled {spilled}, returned {returned}, {returned_at_once} at once"
        );
        for (c, m) in model.iter().enumerate() {
            let fixed: Vec<(bool, u64)> =
                lists.get(c).iter().map(|k| (k.fixed(), k.end())).collect();
            let want: Vec<(bool, u64)> = m.iter().map(|k| (k.fixed(), k.end())).collect();
            assert_eq!(fixed, want);
        }
        lists.clear();
        assert!((0..3).all(|c| lists.get(c).is_empty()));
    }
}
