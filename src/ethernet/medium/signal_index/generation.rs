//! A generation: the signals that started in one stretch of time, with
//! its tree's nodes and its buckets' keys, what a query reads to skip it
//! ([`Reach`]), and how it is filled, emptied and reused.

use super::super::key::Key;
use super::bounds::{dense, Chunk, Node, CHUNK, CHUNKED, EMPTY_NODE};
use crate::engine::Time;

/// Signals per bucket list that a generation given back to the pool keeps
/// room for; a longer list (a crowd's first wave) frees its memory.
const KEEP_ROOM: usize = 16;

/// Signals per bucket from which a generation is dense, and the room its
/// lists give back when it closes (see [`Gen::fit_lists`]).
const DENSE: usize = 16;

/// One generation of signals: those that started in one stretch of time
/// (ids `first_id..ids_end`), with a segment tree's bounds over the
/// stations and per bucket its signals (see [`Bucket`]). Signals never move
/// between generations; a generation goes as a whole once every signal in
/// it is too old to matter to any query.
pub(super) struct Gen {
    pub(super) first_id: u64,
    pub(super) ids_end: u64,
    pub(super) first_start: Time,
    /// Signals whose end is not final yet, and the latest final end.
    pub(super) unfixed: u32,
    pub(super) max_end: Time,
    /// The nodes; only those marked in `written` hold bounds, the others
    /// (stale from an earlier use of the generation) stand for empty
    /// subtrees.
    pub(super) tree: Vec<Node>,
    /// A bit per node: whether it was written since the generation was
    /// last emptied. An add writes its signal's whole path, and with each
    /// node it writes afresh that node's sibling (empty): so the nodes
    /// written are closed upwards and come in pairs of siblings, and both
    /// children of a written node that holds a signal are written. A walk
    /// down from the root stops at empty nodes and a fix climbs through
    /// nodes that hold its signal, so both read written nodes only.
    pub(super) written: Vec<u64>,
    /// Per bucket, its keys (see [`Bucket`]).
    pub(super) buckets: Vec<Bucket>,
    /// Emptied short lists, for the next buckets to spill.
    spare: Vec<Vec<Key>>,
    /// Buckets with signals, for the reset.
    touched: Vec<u32>,
}

/// Keys a bucket holds in its own cache line: a crowd's later waves put one
/// or two signals of a generation in most buckets they reach.
const INLINE: usize = 3;
const _: () = assert!(INLINE < CHUNKED);

/// A bucket's keys in one generation, in id order, on a cache line of its
/// own: up to [`INLINE`] in the bucket itself, so that an add, a fix or a
/// walk reaching the leaf reads one line, not a list's header and then its
/// keys; more in a list, which takes all of them.
#[repr(C, align(64))]
pub(super) struct Bucket {
    pub(super) held: Held,
}
const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

pub(super) enum Held {
    /// The first `len` of `keys`.
    Inline { keys: [Key; INLINE], len: u32 },
    /// The keys of a bucket that holds more than [`INLINE`], and the
    /// chunks of its list once it is dense (see [`Chunk`]), else none.
    Spilled { keys: Vec<Key>, chunks: Vec<Chunk> },
}

impl Held {
    const EMPTY: Held = Held::Inline {
        keys: [Key::NONE; INLINE],
        len: 0,
    };
}

impl Gen {
    /// Signal `id`'s id relative to the generation's first.
    #[inline]
    pub(super) fn rel_id(&self, id: u64) -> u32 {
        (id - self.first_id) as u32
    }

    pub(super) fn new(size: usize, buckets: usize) -> Gen {
        Gen {
            first_id: 0,
            ids_end: 0,
            first_start: 0,
            unfixed: 0,
            max_end: 0,
            tree: crate::mem::huge_filled(2 * size, EMPTY_NODE),
            written: vec![0; (2 * size).div_ceil(64)],
            buckets: (0..buckets).map(|_| Bucket { held: Held::EMPTY }).collect(),
            spare: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Gives back the room its lists grew beyond their keys, once it takes
    /// no more signals: only in a dense generation (a crowd's first waves,
    /// whose lists grew by doubling to up to 256 keys, half of them about
    /// half empty); a sparse one's lists are short, and looking at each
    /// would cost more than it saves.
    pub(super) fn fit_lists(&mut self) {
        let signals = (self.ids_end - self.first_id) as usize;
        if signals < DENSE * self.touched.len() {
            return;
        }
        for &b in &self.touched {
            if let Held::Spilled { keys, chunks } = &mut self.buckets[b as usize].held {
                if keys.capacity() - keys.len() >= DENSE {
                    chunks.shrink_to_fit();
                    keys.shrink_to_fit();
                }
            }
        }
    }

    /// Whether node `n` was written since the generation was emptied.
    #[inline]
    pub(super) fn written(&self, n: usize) -> bool {
        marked(&self.written, n)
    }

    /// The keys of bucket `b`, in id order.
    #[inline]
    pub(super) fn keys(&self, b: usize) -> &[Key] {
        match &self.buckets[b].held {
            Held::Inline { keys, len } => &keys[..*len as usize],
            Held::Spilled { keys, .. } => keys,
        }
    }

    /// The keys of bucket `b`, to fix one.
    #[inline]
    pub(super) fn keys_mut(&mut self, b: usize) -> &mut [Key] {
        match &mut self.buckets[b].held {
            Held::Inline { keys, len } => &mut keys[..*len as usize],
            Held::Spilled { keys, .. } => keys,
        }
    }

    /// The chunks of bucket `b` (none unless its list is dense).
    #[inline]
    pub(super) fn chunks(&self, b: usize) -> &[Chunk] {
        match &self.buckets[b].held {
            Held::Inline { .. } => &[],
            Held::Spilled { chunks, .. } => chunks,
        }
    }

    /// Adds `key` (the newest of the generation) to bucket `b`.
    #[inline]
    pub(super) fn push(&mut self, b: usize, key: Key) {
        let bucket = &mut self.buckets[b];
        if let Held::Inline { keys: inline, len } = &mut bucket.held {
            if *len == 0 {
                self.touched.push(b as u32);
            }
            if (*len as usize) < INLINE {
                inline[*len as usize] = key;
                *len += 1;
                return;
            }
            let mut keys = self.spare.pop().unwrap_or_default();
            keys.extend_from_slice(inline);
            bucket.held = Held::Spilled {
                keys,
                chunks: Vec::new(),
            };
        }
        let Held::Spilled { keys, chunks } = &mut bucket.held else {
            unreachable!("a bucket's keys beyond the line's room are in a list");
        };
        // A dense list grows a chunk at a time, not by doubling: a crowd's
        // second wave fills its buckets to about half, and the room
        // doubling leaves would be held while the wave lasts.
        let was_dense = dense(keys);
        if was_dense && keys.len() == keys.capacity() {
            keys.reserve_exact(CHUNK);
        }
        keys.push(key);
        if was_dense {
            match chunks.last_mut() {
                Some(c) if (keys.len() - 1) % CHUNK != 0 => c.take(&key),
                _ => {
                    chunks.reserve_exact(1);
                    chunks.push(Chunk::of(&[key]));
                }
            }
        } else if dense(keys) {
            chunks.extend(keys.chunks(CHUNK).map(Chunk::of));
        }
    }

    /// Empties the generation: the lists it touched, and its nodes by
    /// their marks alone (a node is written again before it is read).
    pub(super) fn reset(&mut self) {
        for &b in &self.touched {
            let held = &mut self.buckets[b as usize].held;
            match held {
                Held::Inline { len, .. } => *len = 0,
                Held::Spilled { keys, .. } => {
                    let mut keys = std::mem::take(keys);
                    if keys.capacity() <= KEEP_ROOM {
                        keys.clear();
                        self.spare.push(keys);
                    }
                    *held = Held::EMPTY;
                }
            }
        }
        self.written.fill(0);
        self.touched.clear();
        self.unfixed = 0;
        self.max_end = 0;
    }
}

/// Whether node `n` is marked in a generation's marks of written nodes
/// (see [`Gen::written`]; apart from it for a fix, which reads them while
/// it writes the tree).
#[inline]
pub(super) fn marked(written: &[u64], n: usize) -> bool {
    written[n / 64] >> (n % 64) & 1 != 0
}

/// What a query looks at to skip a generation, and to read its keys.
#[derive(Clone, Copy)]
pub(super) struct Reach {
    /// When its signals will all have left every station (`i64::MAX`
    /// while any end is not final).
    pub(super) by: i64,
    /// The latest `by` of this generation and every older one: a query
    /// that skips this one for its `by` stops here when this is as early.
    pub(super) by_upto: i64,
    /// The id after its last signal's.
    pub(super) ids_end: u64,
    /// Its first start, which its keys are relative to.
    pub(super) base: i64,
}
