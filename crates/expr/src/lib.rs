//! GoogleSQL expression typing and evaluation
