//! State kept per packet number space, with the Initial and Handshake entries in one box that
//! is freed once both spaces are discarded (RFC 9001 §4.9).
//!
//! A connection spends nearly all its life in the application-data space; keeping the two
//! handshake spaces' ACK and recovery state inline cost ~500 B per connection for nothing after
//! the first round trips, which adds up with many mostly idle connections.

use super::packet::SpaceId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerSpace<T> {
    /// Initial and Handshake; `None` once both are discarded.
    early: Option<Box<[T; 2]>>,
    data: T,
}

impl<T: Default> Default for PerSpace<T> {
    fn default() -> Self {
        PerSpace::new(T::default)
    }
}

impl<T> PerSpace<T> {
    pub fn new(mut mk: impl FnMut() -> T) -> Self {
        PerSpace { early: Some(Box::new([mk(), mk()])), data: mk() }
    }

    /// The state of `space`, `None` for a freed early space.
    #[inline]
    pub fn get(&self, space: SpaceId) -> Option<&T> {
        match space {
            SpaceId::Data => Some(&self.data),
            _ => self.early.as_ref().map(|e| &e[space.index()]),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, space: SpaceId) -> Option<&mut T> {
        match space {
            SpaceId::Data => Some(&mut self.data),
            _ => self.early.as_mut().map(|e| &mut e[space.index()]),
        }
    }

    #[inline]
    pub fn data(&self) -> &T {
        &self.data
    }

    #[inline]
    pub fn data_mut(&mut self) -> &mut T {
        &mut self.data
    }

    /// The spaces still held, in the order Initial, Handshake, Data.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.early.iter().flat_map(|e| e.iter()).chain(std::iter::once(&self.data))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.early.iter_mut().flat_map(|e| e.iter_mut()).chain(std::iter::once(&mut self.data))
    }

    /// The Initial and Handshake state is still held.
    #[inline]
    pub fn has_early(&self) -> bool {
        self.early.is_some()
    }

    /// Frees the Initial and Handshake state.
    pub fn free_early(&mut self) {
        self.early = None;
    }
}

impl<T> std::ops::Index<SpaceId> for PerSpace<T> {
    type Output = T;
    /// Panics for a freed early space: callers check that the space is not discarded first.
    #[inline]
    fn index(&self, space: SpaceId) -> &T {
        self.get(space).expect("state of a discarded packet number space")
    }
}

impl<T> std::ops::IndexMut<SpaceId> for PerSpace<T> {
    #[inline]
    fn index_mut(&mut self, space: SpaceId) -> &mut T {
        self.get_mut(space).expect("state of a discarded packet number space")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_spaces_are_freed_and_data_stays() {
        let mut s = PerSpace::new(|| 0u32);
        s[SpaceId::Initial] = 1;
        s[SpaceId::Handshake] = 2;
        s[SpaceId::Data] = 3;
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        s.free_early();
        assert_eq!(s.get(SpaceId::Initial), None);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![3]);
        assert_eq!(s[SpaceId::Data], 3);
    }
}
