//! Lock manager (wound-wait), timestamp oracle and group commit
