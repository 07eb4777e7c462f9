//! The key space cut into splits: split map, routing and per-split cost accounting
