//! Unit tests of parser details that scenario files show less directly:
//! spans, source text of expressions, and precedence.

use super::*;
