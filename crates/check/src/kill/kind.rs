//! What a cycle does before the kill: four kinds, taken in turn.

/// What a cycle does before the kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleKind {
    /// Small commits through every commit path.
    Commits,
    /// Commits while an index backfills; the kill lands in the backfill.
    Ddl,
    /// Big commits that rewrite earlier rows, with fast load splitting.
    Splits,
    /// The split cycles' workload on a server collecting garbage every
    /// 200 ms with a one-second retention ([`GC_FLAGS`](super::GC_FLAGS)).
    Gc,
}

impl CycleKind {
    /// The kind of cycle `i`: the four kinds in turn.
    pub fn of(i: usize) -> CycleKind {
        match i % 4 {
            0 => CycleKind::Commits,
            1 => CycleKind::Ddl,
            2 => CycleKind::Splits,
            _ => CycleKind::Gc,
        }
    }

    /// Whether its clients make big commits at scattered keys that rewrite
    /// earlier rows (leaving old versions behind).
    pub(super) fn rewrites(self) -> bool {
        matches!(self, CycleKind::Splits | CycleKind::Gc)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            CycleKind::Commits => "commits",
            CycleKind::Ddl => "ddl",
            CycleKind::Splits => "splits",
            CycleKind::Gc => "gc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_rotate() {
        let kinds: Vec<_> = (0..5).map(CycleKind::of).collect();
        assert_eq!(
            kinds,
            [
                CycleKind::Commits,
                CycleKind::Ddl,
                CycleKind::Splits,
                CycleKind::Gc,
                CycleKind::Commits
            ]
        );
    }
}
