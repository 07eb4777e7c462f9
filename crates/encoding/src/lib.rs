//! Order-preserving key codec and row codec
