//! Byte offsets to 1-based line/column positions, and the caret snippet of an error.
//!
//! pest reports byte offsets; users count characters. Columns here are counted in characters
//! (a tab is one column), over the whole text, so positions stay right in multi-statement
//! scripts and on lines with non-ASCII text.

use crate::ast::Pos;

/// Bytes per entry of [`LineIndex::continuations`]: a column costs at most this many bytes of
/// counting, however long its line, so positions stay linear in the text's length.
const STRIDE: usize = 4096;

/// Where each line of a text starts, for turning byte offsets into [`Pos`].
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the first character of each line.
    starts: Vec<usize>,
    /// UTF-8 continuation bytes in `text[..k * STRIDE]`, for every k: a character count is a
    /// byte count less the continuation bytes between the two offsets.
    continuations: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut seen = 0;
        let continuations = std::iter::once(0)
            .chain(text.as_bytes().chunks(STRIDE).map(|chunk| {
                seen += continuation_bytes(chunk);
                seen
            }))
            .collect();
        LineIndex {
            text,
            starts,
            continuations,
        }
    }

    /// UTF-8 continuation bytes in `text[..offset]`.
    fn continuations_before(&self, offset: usize) -> usize {
        let block = offset / STRIDE;
        self.continuations[block]
            + continuation_bytes(&self.text.as_bytes()[block * STRIDE..offset])
    }

    /// The position of a byte offset (clamped to the text, rounded down to a char boundary).
    pub fn pos(&self, offset: usize) -> Pos {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let col = (offset - start)
            - (self.continuations_before(offset) - self.continuations_before(start))
            + 1;
        Pos { line, col }
    }

    /// The source line at `pos` and a caret line under its column.
    ///
    /// Tabs before the column are copied into the caret line so the caret lines up in a
    /// terminal; control characters are shown as `\u{fffd}` so an error never writes raw control
    /// bytes to the user's terminal. A line longer than [`SNIPPET_CHARS`] is cut to a window
    /// around the column, with `…` where it was cut, so a 1 MB statement gives a short error.
    pub fn snippet(&self, pos: Pos) -> String {
        let start = self.starts[pos.line - 1];
        let end = self
            .starts
            .get(pos.line)
            .map_or(self.text.len(), |next| next - 1);
        let line = self.text[start..end].trim_end_matches('\r');
        let col = pos.col - 1;
        let length = line.chars().count();
        let first = if length <= SNIPPET_CHARS {
            0
        } else {
            col.saturating_sub(SNIPPET_CHARS / 2)
                .min(length - SNIPPET_CHARS)
        };
        let mut chars = line.chars().skip(first);
        let window: Vec<char> = chars.by_ref().take(SNIPPET_CHARS).collect();
        let cut_after = chars.next().is_some();
        let visible = |c: char| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        };
        let mut shown = String::new();
        let mut pad = String::new();
        if first > 0 {
            shown.push('…');
            pad.push(' ');
        }
        shown.extend(window.iter().map(|&c| visible(c)));
        if cut_after {
            shown.push('…');
        }
        pad.extend(
            window
                .iter()
                .take(col - first)
                .map(|&c| if c == '\t' { '\t' } else { ' ' }),
        );
        // The column may lie one past the end of the line (a missing token at the end).
        let missing = (col - first).saturating_sub(window.len());
        format!("{shown}\n{pad}{}^", " ".repeat(missing))
    }
}

/// The most characters of a line an error's snippet shows.
pub const SNIPPET_CHARS: usize = 120;

fn continuation_bytes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 == 0x80).count()
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

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let text = format!("{}é{}", "a".repeat(5000), "b".repeat(5000));
        let idx = LineIndex::new(&text);
        let pos = idx.pos(5000);
        assert_eq!(pos, Pos { line: 1, col: 5001 });
        let snippet = idx.snippet(pos);
        let (shown, caret) = snippet.split_once('\n').unwrap();
        assert_eq!(shown.chars().count(), SNIPPET_CHARS + 2);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        // The caret sits under the `é`.
        assert_eq!(shown.chars().nth(caret.len() - 1), Some('é'));
        // Past the multi-byte character, columns still count characters.
        assert_eq!(idx.pos(5002).col, 5002);
        assert_eq!(idx.pos(text.len()).col, 10002);
    }
}
