//! Byte offsets to 1-based line/column positions, and the caret snippet of an error.
//!
//! pest reports byte offsets; users count characters. Columns here are counted in characters
//! (a tab is one column), over the whole text, so positions stay right in multi-statement
//! scripts and on lines with non-ASCII text.

use crate::ast::Pos;

/// Where each line of a text starts, for turning byte offsets into [`Pos`].
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the first character of each line.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The position of a byte offset (clamped to the text, rounded down to a char boundary).
    pub fn pos(&self, offset: usize) -> Pos {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let col = self.text[start..offset].chars().count() + 1;
        Pos { line, col }
    }

    /// The source line at `pos` and a caret line under its column.
    ///
    /// Tabs before the column are copied into the caret line so the caret lines up in a
    /// terminal; control characters are shown as `\u{fffd}` so an error never writes raw control
    /// bytes to the user's terminal.
    pub fn snippet(&self, pos: Pos) -> String {
        let start = self.starts[pos.line - 1];
        let end = self
            .starts
            .get(pos.line)
            .map_or(self.text.len(), |next| next - 1);
        let line = self.text[start..end].trim_end_matches('\r');
        let shown: String = line
            .chars()
            .map(|c| {
                if c.is_control() && c != '\t' {
                    '\u{fffd}'
                } else {
                    c
                }
            })
            .collect();
        let pad: String = line
            .chars()
            .take(pos.col - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        // The column may lie one past the end of the line (a missing token at the end).
        let missing = (pos.col - 1).saturating_sub(line.chars().count());
        format!("{shown}\n{pad}{}^", " ".repeat(missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let text = "ab\n\tcé d\r\nx";
        let idx = LineIndex::new(text);
        assert_eq!(idx.pos(0), Pos { line: 1, col: 1 });
        assert_eq!(idx.pos(2), Pos { line: 1, col: 3 });
        assert_eq!(idx.pos(3), Pos { line: 2, col: 1 });
        // `é` is two bytes but one column.
        assert_eq!(idx.pos(text.find(" d").unwrap()), Pos { line: 2, col: 4 });
        assert_eq!(idx.pos(text.len()), Pos { line: 3, col: 2 });
        // Inside a multi-byte character: rounded down, no panic.
        assert_eq!(idx.pos(6), Pos { line: 2, col: 3 });
    }

    #[test]
    fn snippet_has_a_caret_under_the_column() {
        let idx = LineIndex::new("x\n\tRUN ON g;\r\n");
        assert_eq!(idx.snippet(Pos { line: 2, col: 6 }), "\tRUN ON g;\n\t    ^");
        assert_eq!(
            idx.snippet(Pos { line: 2, col: 11 }),
            "\tRUN ON g;\n\t         ^"
        );
        assert_eq!(idx.snippet(Pos { line: 3, col: 1 }), "\n^");
    }
}
