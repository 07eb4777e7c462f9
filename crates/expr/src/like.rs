//! `LIKE` pattern matching.
//!
//! `%` matches any sequence (including none), `_` exactly one character
//! (one byte for `BYTES`), and a backslash makes the next character literal.
//! Matching works on a slice of units (chars or bytes) with the classic
//! greedy-with-backtrack algorithm: remember the last `%` and retry from one
//! unit further when a later literal fails, which is linear for patterns
//! with one `%` and never exponential.

use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<T> {
    Any,
    One,
    Lit(T),
}

fn tokenize<T: Copy + PartialEq + From<u8>>(pattern: &[T]) -> Result<Vec<Token<T>>> {
    let (percent, underscore, backslash) = (T::from(b'%'), T::from(b'_'), T::from(b'\\'));
    let mut tokens = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        let c = pattern[i];
        if c == backslash {
            let next = pattern
                .get(i + 1)
                .ok_or_else(|| Error::out_of_range("LIKE pattern ends with a backslash"))?;
            tokens.push(Token::Lit(*next));
            i += 2;
            continue;
        }
        tokens.push(if c == percent {
            Token::Any
        } else if c == underscore {
            Token::One
        } else {
            Token::Lit(c)
        });
        i += 1;
    }
    Ok(tokens)
}

/// Whether `text` matches `pattern`.
pub(crate) fn like<T: Copy + PartialEq + From<u8>>(text: &[T], pattern: &[T]) -> Result<bool> {
    let tokens = tokenize(pattern)?;
    let (mut t, mut p) = (0usize, 0usize);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::Any) => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(Token::One) => {
                p += 1;
                t += 1;
            }
            Some(Token::Lit(c)) if *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match backtrack {
                Some((bp, bt)) => {
                    p = bp + 1;
                    t = bt + 1;
                    backtrack = Some((bp, bt + 1));
                }
                None => return Ok(false),
            },
        }
    }
    Ok(tokens[p..].iter().all(|tok| *tok == Token::Any))
}

/// `LIKE` on strings, by character.
pub(crate) fn like_str(text: &str, pattern: &str) -> Result<bool> {
    let text: Vec<char> = text.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    like(&text, &pattern)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        for (text, pattern, expected) in [
            ("abc", "abc", true),
            ("abc", "a%", true),
            ("abc", "%c", true),
            ("abc", "%b%", true),
            ("abc", "a_c", true),
            ("abc", "a_", false),
            ("", "%", true),
            ("", "_", false),
            ("a%c", "a\\%c", true),
            ("abc", "a\\%c", false),
            ("aXbXc", "%X%X%", true),
            ("mississippi", "%iss%ppi", true),
            ("mississippi", "%iss%ppx", false),
            ("日本語", "日_語", true),
        ] {
            assert_eq!(
                like_str(text, pattern).unwrap(),
                expected,
                "{text} LIKE {pattern}"
            );
        }
        assert!(like_str("a", "a\\").is_err());
        assert!(like(b"a\xffc".as_slice(), b"a_c".as_slice()).unwrap());
    }
}
