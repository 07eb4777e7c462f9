//! Ordered key-value engines (fjall on disk, memory) and MVCC versions
