//! Cutting user-supplied text that an error message echoes, so that a 1 MB key, name or path
//! gives an error of a few lines that still says what was at fault and how long it was.

use std::borrow::Cow;

/// The longest run of non-blank characters an error message shows whole.
pub const LONGEST_WORD: usize = 200;

/// Characters kept from the start and the end of a run that is cut.
const KEPT_HEAD: usize = 60;
const KEPT_TAIL: usize = 20;

/// `message` with each run of non-blank characters longer than [`LONGEST_WORD`] cut to its
/// first and last characters around `…`, followed by `(N characters)`. Short messages are
/// returned as they are, without copying.
pub fn clip_long_words(message: &str) -> Cow<'_, str> {
    let too_long = message
        .split(char::is_whitespace)
        .any(|w| w.len() > LONGEST_WORD && w.chars().count() > LONGEST_WORD);
    if !too_long {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while !rest.is_empty() {
        let blank_end = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..blank_end]);
        rest = &rest[blank_end..];
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push_str(&clip_word(&rest[..word_end]));
        rest = &rest[word_end..];
    }
    Cow::Owned(out)
}

fn clip_word(word: &str) -> Cow<'_, str> {
    let chars = word.chars().count();
    if chars <= LONGEST_WORD {
        return Cow::Borrowed(word);
    }
    let head: String = word.chars().take(KEPT_HEAD).collect();
    let tail: String = word.chars().skip(chars - KEPT_TAIL).collect();
    Cow::Owned(format!("{head}…{tail} ({chars} characters)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_are_untouched() {
        let m = "vertex 'alice' is not a vertex of graph `g`";
        assert!(matches!(clip_long_words(m), Cow::Borrowed(_)));
    }

    #[test]
    fn long_words_are_cut_with_their_length() {
        let key = "y".repeat(1 << 20);
        let m = format!("vertex '{key}' is not a vertex of graph `g`");
        let clipped = clip_long_words(&m);
        assert!(clipped.len() < 200, "{clipped}");
        assert!(clipped.starts_with("vertex 'yyy"));
        assert!(
            clipped.contains("y…yyy")
                && clipped.ends_with("y' (1048578 characters) is not a vertex of graph `g`"),
            "{clipped}"
        );
        // Multi-byte characters are counted, never split.
        let wide = "é".repeat(300);
        assert!(clip_long_words(&wide).ends_with("(300 characters)"));
        // Whitespace between words is kept as it was.
        let two = format!("a\n  {}\tb", "x".repeat(500));
        let c = clip_long_words(&two);
        assert!(
            c.starts_with("a\n  xxx") && c.ends_with("(500 characters)\tb"),
            "{c}"
        );
    }
}
