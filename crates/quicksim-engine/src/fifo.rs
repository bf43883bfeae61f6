//! `Fifo<T>`: a first-in first-out ring buffer for the per-packet queues (the event queue's
//! lanes, DropTail), in place of `std::collections::VecDeque`.
//!
//! It does what `VecDeque` does for a FIFO (append at the back, take from the front, look at
//! both ends) and nothing more. The reason for it: in the release build (fat LTO) LLVM left
//! `VecDeque::push_back` a call at every call site, ~27 instructions of which the copy of the
//! element through memory and the call's own work are most; here the append is inlined with
//! its rare growth kept out of line (`grow`), so the element is written once, where it lands.
//! The slots are `Option<T>` because the workspace forbids `unsafe` (a `MaybeUninit` ring
//! would need it): 8 more bytes a slot for an element without a niche, in queues that are
//! short.

/// A FIFO queue in a ring buffer whose capacity is a power of two (or zero).
pub struct Fifo<T> {
    /// The ring; its length is the capacity. Slots outside [head, head + len) hold `None`.
    buf: Vec<Option<T>>,
    /// Index of the front element in `buf`.
    head: usize,
    len: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Fifo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Fifo<T> {
    /// An empty queue; it allocates on its first `push_back`.
    pub const fn new() -> Self {
        Fifo { buf: Vec::new(), head: 0, len: 0 }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index `k` places after the front (`k <= len`, the capacity not zero).
    #[inline(always)]
    fn slot(&self, k: usize) -> usize {
        (self.head + k) & (self.buf.len() - 1)
    }

    /// Append `v` at the back.
    #[inline(always)]
    pub fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = self.slot(self.len);
        self.buf[i] = Some(v);
        self.len += 1;
    }

    /// Take the front element.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head].take();
        self.head = self.slot(1);
        self.len -= 1;
        v
    }

    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.buf[self.head].as_ref()
    }

    #[inline(always)]
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.buf[self.slot(self.len - 1)].as_ref()
    }

    /// The elements from front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).filter_map(move |k| self.buf[self.slot(k)].as_ref())
    }

    /// Double the capacity (4 at first), the elements moved to the front of the new ring.
    /// Out of line and cold: it runs a few times per queue in a whole run.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        for k in 0..self.len {
            let i = self.slot(k);
            buf.push(self.buf[i].take());
        }
        buf.resize_with(cap, || None);
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn wraps_around_and_grows_in_order() {
        let mut q = Fifo::new();
        assert!(q.is_empty() && q.front().is_none() && q.back().is_none() && q.pop_front().is_none());
        // Fill to the first capacity (4), move the head, then grow while wrapped.
        for i in 0..4 {
            q.push_back(i);
        }
        assert_eq!((q.pop_front(), q.pop_front()), (Some(0), Some(1)));
        for i in 4..7 {
            q.push_back(i); // 4 and 5 wrap to slots 0 and 1; 6 grows the ring to 8
        }
        assert_eq!((q.front(), q.back(), q.len()), (Some(&2), Some(&6), 5));
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4, 5, 6]);
        assert_eq!(format!("{q:?}"), "[2, 3, 4, 5, 6]");
        let drained: Vec<_> = std::iter::from_fn(|| q.pop_front()).collect();
        assert_eq!(drained, vec![2, 3, 4, 5, 6]);
        assert!(q.is_empty());
    }

    #[test]
    fn drops_what_it_holds_once() {
        let item = std::rc::Rc::new(());
        let mut q = Fifo::new();
        for _ in 0..10 {
            q.push_back(item.clone());
        }
        drop(q.pop_front());
        assert_eq!(std::rc::Rc::strong_count(&item), 10);
        drop(q);
        assert_eq!(std::rc::Rc::strong_count(&item), 1);
    }

    proptest! {
        /// Any sequence of appends and removals leaves the same queue as `VecDeque`'s.
        #[test]
        fn behaves_as_vecdeque(ops in proptest::collection::vec(any::<Option<u16>>(), 0..300)) {
            let (mut q, mut d) = (Fifo::new(), VecDeque::new());
            for op in ops {
                match op {
                    Some(v) => {
                        q.push_back(v);
                        d.push_back(v);
                    }
                    None => prop_assert_eq!(q.pop_front(), d.pop_front()),
                }
                prop_assert_eq!(q.len(), d.len());
                prop_assert_eq!(q.front(), d.front());
                prop_assert_eq!(q.back(), d.back());
            }
            prop_assert!(q.iter().eq(d.iter()));
        }
    }
}
