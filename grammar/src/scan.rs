//! A small tokenizer that sees the text the way the grammar does (whitespace, `--` comments,
//! single-quoted strings), but never fails.
//!
//! The pest grammar is the only judge of what is valid. This scanner exists for the two jobs pest
//! cannot do well: telling the REPL whether an entry is finished ([`crate::statement_complete`])
//! and giving error messages their context — the token the parser stopped at ("found `)`"), the
//! token before it ("after ON") and where an unterminated string started.

/// What kind of token a [`Tok`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokKind {
    /// An identifier or keyword.
    Word,
    /// Something that starts like a number (`12`, `-0.5`, `1e-7`, also malformed `5abc`).
    Number,
    /// A single-quoted string; `terminated` is false when the text ends inside it.
    Str { terminated: bool },
    /// Any other single character, `;` included.
    Punct,
}

/// A token: its kind and byte range in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tok {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
}

impl Tok {
    /// The token's text.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }

    /// True for the statement terminator.
    pub fn is_semi(&self, source: &str) -> bool {
        self.kind == TokKind::Punct && self.text(source) == ";"
    }
}

/// The whitespace the grammar skips (`WHITESPACE` in `frontier.pest`).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits `text` into tokens, skipping whitespace and comments.
pub(crate) fn scan(text: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let kind = if is_space(c) {
            continue;
        } else if c == '-' && next == Some('-') {
            // A comment: up to (not including) the newline.
            while chars.next_if(|&(_, n)| n != '\n').is_some() {}
            continue;
        } else if c == '\'' {
            let mut terminated = false;
            while let Some((_, n)) = chars.next() {
                match n {
                    '\\' => {
                        chars.next();
                    }
                    // `''` inside a string is an escaped quote, not the end.
                    '\'' if chars.next_if(|&(_, q)| q == '\'').is_some() => {}
                    '\'' => {
                        terminated = true;
                        break;
                    }
                    _ => {}
                }
            }
            TokKind::Str { terminated }
        } else if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) {
            let mut prev = c;
            while let Some((_, n)) = chars.next_if(|&(_, n)| {
                is_ident_char(n)
                    || n == '.'
                    || (matches!(n, '+' | '-') && matches!(prev, 'e' | 'E'))
            }) {
                prev = n;
            }
            TokKind::Number
        } else if is_ident_start(c) {
            while chars.next_if(|&(_, n)| is_ident_char(n)).is_some() {}
            TokKind::Word
        } else {
            TokKind::Punct
        };
        let end = chars.peek().map_or(text.len(), |&(i, _)| i);
        toks.push(Tok { kind, start, end });
    }
    toks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokKind, &str)> {
        scan(text).iter().map(|t| (t.kind, t.text(text))).collect()
    }

    #[test]
    fn tokens_and_comments() {
        assert_eq!(
            kinds("RUN pr -- x 'y\n ON g ITER -5 1e-7 ;"),
            vec![
                (TokKind::Word, "RUN"),
                (TokKind::Word, "pr"),
                (TokKind::Word, "ON"),
                (TokKind::Word, "g"),
                (TokKind::Word, "ITER"),
                (TokKind::Number, "-5"),
                (TokKind::Number, "1e-7"),
                (TokKind::Punct, ";"),
            ]
        );
    }

    #[test]
    fn strings() {
        assert_eq!(
            kinds(r"'a\'b' 'it''s' 'open"),
            vec![
                (TokKind::Str { terminated: true }, r"'a\'b'"),
                (TokKind::Str { terminated: true }, "'it''s'"),
                (TokKind::Str { terminated: false }, "'open"),
            ]
        );
        assert_eq!(
            kinds("'a\\"),
            vec![(TokKind::Str { terminated: false }, "'a\\")]
        );
    }

    #[test]
    fn odd_characters() {
        assert_eq!(
            kinds("é\0-"),
            vec![
                (TokKind::Punct, "é"),
                (TokKind::Punct, "\0"),
                (TokKind::Punct, "-")
            ]
        );
    }
}
