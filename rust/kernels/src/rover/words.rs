//! Plain-text hypotheses into ROVER tokens: the words `str.split()` finds, interned into ids in
//! order of first appearance over a whole batch (the unit reader of `scorekit.qe.rover`).

use std::fmt;

use foldhash::HashMap as FastMap;

use super::NULL;
use crate::levenshtein::is_python_whitespace;

/// A batch with more distinct words than token ids (every id below [`NULL`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyWords;

impl fmt::Display for TooManyWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hypotheses hold too many distinct words (2**32 - 1)")
    }
}

impl std::error::Error for TooManyWords {}

/// Word → id in order of first appearance (and the words themselves, when asked for).
#[derive(Debug, Default)]
pub struct WordIds {
    ids: FastMap<Box<str>, u32>,
    words: Option<Vec<Box<str>>>,
}

impl WordIds {
    /// An empty vocabulary; `keep`: remember the word of every id ([`WordIds::into_words`]).
    pub fn new(keep: bool) -> Self {
        WordIds {
            ids: FastMap::default(),
            words: keep.then(Vec::new),
        }
    }

    /// Append the ids of the words of `text` (split as Python's `str.split()` splits) to `out`.
    #[inline]
    pub fn push_text(&mut self, text: &str, out: &mut Vec<u32>) -> Result<(), TooManyWords> {
        for word in text
            .split(|c: char| is_python_whitespace(c as u32))
            .filter(|w| !w.is_empty())
        {
            out.push(self.id(word)?);
        }
        Ok(())
    }

    /// The id of `word`, the next one when it is new.
    #[inline]
    pub fn id(&mut self, word: &str) -> Result<u32, TooManyWords> {
        if let Some(&id) = self.ids.get(word) {
            return Ok(id);
        }
        let id = u32::try_from(self.ids.len())
            .ok()
            .filter(|&id| id != NULL)
            .ok_or(TooManyWords)?;
        self.ids.insert(word.into(), id);
        if let Some(words) = &mut self.words {
            words.push(word.into());
        }
        Ok(id)
    }

    /// The word of every id, when kept.
    pub fn into_words(self) -> Option<Vec<Box<str>>> {
        self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_python_and_number_in_order() {
        let mut words = WordIds::new(true);
        let mut ids = Vec::new();
        words
            .push_text("  the cat\u{a0}sat\tthe\u{2028}mat ", &mut ids)
            .unwrap();
        words.push_text("", &mut ids).unwrap();
        words.push_text("mat\u{1c}cat\u{200b}x", &mut ids).unwrap();
        // U+00A0, U+2028 and U+001C split; U+200B (zero width space) is not whitespace to Python
        assert_eq!(ids, [0, 1, 2, 0, 3, 3, 4]);
        let kept = words.into_words().unwrap();
        assert_eq!(
            kept.iter().map(|w| &**w).collect::<Vec<_>>(),
            ["the", "cat", "sat", "mat", "cat\u{200b}x"]
        );
        assert!(WordIds::new(false).into_words().is_none());
    }
}
