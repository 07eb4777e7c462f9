//! The catalog: tables, keys, interleaving, indexes, sequences; DDL validation
