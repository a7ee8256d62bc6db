//! Levenshtein family: bit-parallel distance, alignment breakdown, word tokenisation and the
//! schwa-forgiving (free insertion at joins) distance.
