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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, offset: usize) -> (usize, usize) {
        let p = Position::of(text, offset);
        (p.line, p.column)
    }

    #[test]
    fn lines_and_columns_are_one_based() {
        assert_eq!(at("abc", 0), (1, 1));
        assert_eq!(at("abc", 2), (1, 3));
        assert_eq!(at("ab\ncd", 3), (2, 1));
        assert_eq!(at("ab\ncd", 4), (2, 2));
        assert_eq!(at("ab\r\ncd", 4), (2, 1));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // 'é' is two bytes; the 'x' after it is the third character.
        assert_eq!(at("'é'x", 4), (1, 4));
        assert_eq!(Position::of("日本x", 6).to_string(), "1:3");
    }

    #[test]
    fn offsets_past_the_end_are_clamped() {
        assert_eq!(at("ab\nc", 100), (2, 2));
        assert_eq!(at("", 5), (1, 1));
    }
}
