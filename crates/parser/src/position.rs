//! Turning byte offsets into what people read: line and column.

/// A 1-based line and column. Columns count characters, not bytes, so a
/// position after `'é'` is where an editor would put the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text`. An offset past the end is
    /// clamped to the end; an offset inside a multi-byte character counts as
    /// that character. Lines end at `\n` (a `\r\n` pair counts once).
    pub fn of(text: &str, offset: usize) -> Position {
        let mut line = 1;
        let mut column = 1;
        for (i, c) in text.char_indices() {
            if i >= offset {
                break;
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else if c != '\r' {
                column += 1;
            }
        }
        Position { line, column }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}
