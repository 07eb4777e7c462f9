//! like
