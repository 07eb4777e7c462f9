//! Query parameters: [`Params`], what a statement's `@name`s stand for.
//!
//! A parameter normally has a type and a value. Drivers also send a NULL
//! *without* a type (Spanner's `param_types` has no entry for it); GoogleSQL
//! then types the parameter from where the statement uses it. Rowtree does
//! the equivalent: such a parameter binds as an untyped `NULL` literal, which
//! takes the type its context asks for, so `CASE WHEN @a IS NOT NULL THEN @a
//! ELSE date_col END`, `WHERE col = @a` and `INSERT ... VALUES (@a)` all
//! work. Its value being NULL, nothing is lost by not knowing its type.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Deref, DerefMut};

use rowtree_types::{Type, Value};

/// Query parameters: name (without `@`) to type and value, plus the names
/// of untyped NULLs ([`Params::insert_untyped_null`]).
///
/// It reads and writes like the map of typed parameters it derefs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    typed: BTreeMap<String, (Type, Value)>,
    untyped_nulls: BTreeSet<String>,
}

impl Params {
    /// No parameters.
    pub fn new() -> Params {
        Params::default()
    }

    /// Binds `name` to a NULL whose type comes from where the statement
    /// uses it (a typed parameter of the same name is replaced).
    pub fn insert_untyped_null(&mut self, name: impl Into<String>) {
        let name = name.into();
        self.typed.remove(&name);
        self.untyped_nulls.insert(name);
    }

    /// The names bound by [`Params::insert_untyped_null`] and not typed
    /// since.
    pub fn untyped_nulls(&self) -> impl Iterator<Item = &str> {
        self.untyped_nulls
            .iter()
            .filter(|n| !self.typed.contains_key(*n))
            .map(String::as_str)
    }
}

impl Deref for Params {
    type Target = BTreeMap<String, (Type, Value)>;

    fn deref(&self) -> &Self::Target {
        &self.typed
    }
}

impl DerefMut for Params {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.typed
    }
}

impl<'a> IntoIterator for &'a Params {
    type Item = (&'a String, &'a (Type, Value));
    type IntoIter = std::collections::btree_map::Iter<'a, String, (Type, Value)>;

    /// The typed parameters, by name (untyped NULLs have no type to give).
    fn into_iter(self) -> Self::IntoIter {
        self.typed.iter()
    }
}

impl<const N: usize> From<[(String, (Type, Value)); N]> for Params {
    fn from(typed: [(String, (Type, Value)); N]) -> Params {
        Params {
            typed: BTreeMap::from(typed),
            untyped_nulls: BTreeSet::new(),
        }
    }
}

impl FromIterator<(String, (Type, Value))> for Params {
    fn from_iter<I: IntoIterator<Item = (String, (Type, Value))>>(iter: I) -> Params {
        Params {
            typed: iter.into_iter().collect(),
            untyped_nulls: BTreeSet::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untyped_nulls_give_way_to_typed_parameters() {
        let mut p = Params::new();
        p.insert_untyped_null("a");
        p.insert_untyped_null("b");
        assert!(p.is_empty());
        assert_eq!(p.untyped_nulls().collect::<Vec<_>>(), ["a", "b"]);
        p.insert("a".into(), (Type::Int64, Value::Int64(1)));
        assert_eq!(p.untyped_nulls().collect::<Vec<_>>(), ["b"]);
        p.insert_untyped_null("a");
        assert!(!p.contains_key("a"));
        assert_eq!(p.untyped_nulls().collect::<Vec<_>>(), ["a", "b"]);
    }
}
