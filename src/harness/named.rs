//! One name table per enum: the names in JSON (records, saved runs, checkpoints), on the
//! command line and in the explorer's editors all come from the enum's `named!` line. A value
//! may have a short name besides (`dfs` for `depthfirst`): the one the command line offers,
//! which JSON reads as well (serde writes the name).

use std::fmt;
use std::marker::PhantomData;

/// An enum whose values each have one name, listed once by `named!`.
pub trait Named: Sized + Copy + PartialEq + 'static {
    /// Every value, in the order of [`NAMES`](Named::NAMES).
    const VALUES: &'static [Self];
    /// The name of each value of [`VALUES`](Named::VALUES).
    const NAMES: &'static [&'static str];

    /// The short names of the values that have one, `(short name, value)`: read as the
    /// name is (serde writes the name).
    const SHORT_NAMES: &'static [(&'static str, Self)] = &[];

    /// This value's name.
    fn name(self) -> &'static str;

    /// The name the command line offers this value by and messages call it: its short name
    /// where it has one, else its name.
    fn short_name(self) -> &'static str {
        Self::SHORT_NAMES.iter().find(|a| a.1 == self).map_or(self.name(), |a| a.0)
    }

    /// The value called `name` or, failing that, the value whose short name it is, if any.
    fn from_name(name: &str) -> Option<Self> {
        let named = Self::NAMES.iter().position(|n| *n == name).map(|i| Self::VALUES[i]);
        named.or_else(|| Self::SHORT_NAMES.iter().find(|a| a.0 == name).map(|a| a.1))
    }
}

/// Deserializes a [`Named`] value from its name; any other string is refused with the names
/// that are allowed (as serde's derived enums do).
pub fn deserialize<'de, T: Named, D: serde::Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    struct Names<T>(PhantomData<T>);
    impl<T: Named> serde::de::Visitor<'_> for Names<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "one of {}", T::NAMES.join(", "))
        }
        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<T, E> {
            T::from_name(name).ok_or_else(|| E::unknown_variant(name, T::NAMES))
        }
    }
    deserializer.deserialize_str(Names(PhantomData))
}

/// The name table of a fieldless enum: implements [`Named`], `Serialize` (the name) and
/// `Deserialize` (from the name or the short name). A variant left out does not compile. A
/// name after `|` is the value's short name ([`Named::short_name`]).
///
/// ```text
/// named!(Pattern { If => "if", Loop => "loop" });
/// named!(Exploration { DepthFirst => "depthfirst" | "dfs", BreadthFirst => "breadthfirst" | "bfs" });
/// ```
macro_rules! named {
    ($ty:ident { $($variant:ident => $name:literal $(| $short:literal)?),+ $(,)? }) => {
        impl $crate::harness::Named for $ty {
            const VALUES: &'static [Self] = &[$($ty::$variant),+];
            const NAMES: &'static [&'static str] = &[$($name),+];
            const SHORT_NAMES: &'static [(&'static str, Self)] = &[$($(($short, $ty::$variant),)?)+];
            fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::harness::Named::name(*self))
            }
        }
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                $crate::harness::named::deserialize(deserializer)
            }
        }
    };
}
pub(crate) use named;
