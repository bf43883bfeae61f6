//! Compact storage for state kept in large numbers (connections, resting flows): `Opt<T>`, an
//! `Option` of a packet number, limit or time in 8 bytes instead of 16 with the type's maximum
//! value standing for `None`, and [`encode_into`], the postcard encoding of resting state.
//!
//! A connection holds a dozen such options; at 16 bytes each they were ~100 B of every
//! endpoint. The maximum is never a real value: packet numbers, flow-control limits and error
//! codes are varints below 2^62 (RFC 9000 §16), and a time of `SimTime::MAX` (213 days) cannot
//! be reached (`SimTime + SimDuration` panics on overflow). Setting it is a debug assertion.

use crate::SimTime;
use serde::{Deserialize, Serialize};

/// A type with a value that can stand for "none".
pub trait Niche: Copy + Eq {
    const NONE: Self;
}

impl Niche for u64 {
    const NONE: u64 = u64::MAX;
}

impl Niche for SimTime {
    const NONE: SimTime = SimTime::MAX;
}

/// `Option<T>` stored as a `T` (see the module docs). Serialized as an `Option<T>`: in the
/// encoded state of an idle connection a `None` takes 1 byte, not the 10 of a varint maximum.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Opt<T: Niche>(T);

impl<T: Niche + Serialize> Serialize for Opt<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de, T: Niche + Deserialize<'de>> Deserialize<'de> for Opt<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Option::<T>::deserialize(d)?;
        if v == Some(T::NONE) {
            return Err(serde::de::Error::custom("Opt: Some of the value reserved for None"));
        }
        Ok(v.into())
    }
}

impl<T: Niche> Opt<T> {
    pub const NONE: Self = Opt(T::NONE);

    #[inline]
    pub fn some(v: T) -> Self {
        debug_assert!(v != T::NONE, "the value reserved for None");
        Opt(v)
    }

    #[inline]
    pub fn get(self) -> Option<T> {
        (self.0 != T::NONE).then_some(self.0)
    }

    #[inline]
    pub fn is_some(self) -> bool {
        self.0 != T::NONE
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == T::NONE
    }

    #[inline]
    pub fn take(&mut self) -> Option<T> {
        std::mem::take(self).get()
    }
}

impl<T: Niche> Default for Opt<T> {
    fn default() -> Self {
        Self::NONE
    }
}

impl<T: Niche> From<Option<T>> for Opt<T> {
    #[inline]
    fn from(o: Option<T>) -> Self {
        o.map_or(Self::NONE, Self::some)
    }
}

impl<T: Niche + std::fmt::Debug> std::fmt::Debug for Opt<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Appends the postcard encoding of `v` to `out`, pushing into the `Vec` directly.
pub fn encode_into<T: Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) {
    struct Push<'a>(&'a mut Vec<u8>);
    impl postcard::ser_flavors::Flavor for Push<'_> {
        type Output = ();
        #[inline(always)]
        fn try_push(&mut self, b: u8) -> postcard::Result<()> {
            self.0.push(b);
            Ok(())
        }
        #[inline(always)]
        fn try_extend(&mut self, b: &[u8]) -> postcard::Result<()> {
            self.0.extend_from_slice(b);
            Ok(())
        }
        fn finalize(self) -> postcard::Result<()> {
            Ok(())
        }
    }
    // Pushing into a Vec cannot fail, and every field has an encoding (serde derives).
    postcard::serialize_with_flavor(v, Push(out)).expect("postcard encoding into a Vec");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(std::mem::size_of::<Opt<u64>>(), 8);
        assert_eq!(Opt::<u64>::default().get(), None);
        assert_eq!(Opt::from(Some(0u64)).get(), Some(0));
        assert_eq!(Opt::from(Some(SimTime::ZERO)).get(), Some(SimTime::ZERO));
        assert!(Opt::<SimTime>::from(None).is_none());
    }
}
