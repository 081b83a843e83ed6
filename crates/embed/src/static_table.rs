//! The static first pass: a token-embedding table distilled from the model by
//! `scripts/model/distil.py`, so a text gets a vector without running the model — the normalised
//! sum of its word pieces' rows (their weights are baked into the rows). Microseconds a chunk: the
//! daemon serves these until the model's own vector of the chunk replaces them.
//!
//! File (`static.bin` in the model directory): `PSTV`, then little-endian u32 version, rows and
//! dims, then rows × dims IEEE half floats. Held as one 8-bit row and a scale per token (a
//! quarter of the f32 table: 11.7 MB for the 30,522 word pieces).

use std::path::Path;

use crate::wordpiece::WordPiece;
use anyhow::{Context, Result, ensure};

use crate::{DIM, MAX_TOKENS};

const MAGIC: &[u8; 4] = b"PSTV";
/// The table versions this release reads: 2 is fitted to the model's own vectors (the same space
/// as theirs), 1 was the isolated-token table (not comparable with the model's vectors).
const VERSION: u32 = 2;

/// The distilled table and the tokenizer that indexes it.
pub struct StaticTable {
    tokenizer: WordPiece,
    rows: usize,
    /// `rows × DIM` components, each row scaled to ±127.
    q: Vec<i8>,
    /// Per row: the factor back to the table's values.
    scale: Vec<f32>,
}

impl StaticTable {
    /// Read `table` (`static.bin`) and the tokenizer at `tokenizer`. The error says what is wrong
    /// (missing, another version, truncated, a width other than the model's).
    pub fn load(table: &Path, tokenizer: &Path) -> Result<StaticTable> {
        let bytes = std::fs::read(table)
            .with_context(|| format!("cannot read the static table {}", table.display()))?;
        let tokenizer = WordPiece::from_file(tokenizer)?;
        let (rows, q, scale) = decode(&bytes).with_context(|| {
            format!(
                "static table {} (run scripts/setup-model --force)",
                table.display()
            )
        })?;
        ensure!(
            rows >= tokenizer.vocab_size(),
            "static table {} has {rows} rows for a vocabulary of {} (run scripts/setup-model --force)",
            table.display(),
            tokenizer.vocab_size()
        );
        Ok(StaticTable {
            tokenizer,
            rows,
            q,
            scale,
        })
    }

    /// Heap bytes the table holds (not counting the tokenizer).
    pub fn bytes(&self) -> usize {
        self.q.len() + self.scale.len() * 4
    }

    /// The static vector of `text`: its first word pieces (as many as the model reads) summed row
    /// by row and normalised. All zeros for a text without a word piece.
    pub fn embed(&self, text: &str) -> Result<[f32; DIM]> {
        // The tokenizer stops at the pieces the model would read: a long text costs its start.
        let ids = self.tokenizer.encode(text, false, MAX_TOKENS - 2);
        let mut acc = [0f32; DIM];
        for &id in ids.iter().take(MAX_TOKENS - 2) {
            let id = id as usize;
            if id >= self.rows {
                continue;
            }
            let s = self.scale[id];
            let row = &self.q[id * DIM..(id + 1) * DIM];
            for (a, &x) in acc.iter_mut().zip(row) {
                *a += s * f32::from(x);
            }
        }
        let norm = acc.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            acc.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(acc)
    }
}

/// `(rows, 8-bit rows, scales)` of a table file.

fn decode(bytes: &[u8]) -> Result<(usize, Vec<i8>, Vec<f32>)> {
    ensure!(
        bytes.len() >= 16 && &bytes[..4] == MAGIC,
        "not a static table"
    );
    let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let (version, rows, dims) = (word(4), word(8) as usize, word(12) as usize);
    ensure!(
        version == VERSION,
        "static table version {version}; this release reads version {VERSION}"
    );
    ensure!(dims == DIM, "{dims} dimensions; the model has {DIM}");
    let body = &bytes[16..];
    ensure!(
        body.len() == rows * dims * 2,
        "truncated or padded: {} bytes for {rows} × {dims} half floats",
        body.len()
    );
    let mut q = Vec::with_capacity(rows * DIM);
    let mut scale = Vec::with_capacity(rows);
    let mut row = [0f32; DIM];
    for r in 0..rows {
        for (d, x) in row.iter_mut().enumerate() {
            let at = (r * DIM + d) * 2;
            *x = f16_to_f32(u16::from_le_bytes([body[at], body[at + 1]]));
        }
        let max = row
            .iter()
            .filter(|x| x.is_finite())
            .fold(0f32, |m, x| m.max(x.abs()));
        let s = if max > 0.0 { max / 127.0 } else { 1.0 };
        scale.push(s);
        q.extend(row.iter().map(|x| {
            if x.is_finite() {
                (x / s).round().clamp(-127.0, 127.0) as i8
            } else {
                0
            }
        }));
    }
    Ok((rows, q, scale))
}

/// IEEE 754 binary16 → f32 (subnormals, infinities and NaN included).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_to_f16(x: f32) -> u16 {
        // Enough for the tests' values (normal numbers in range, zero).
        if x == 0.0 {
            return 0;
        }
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
        let frac = ((bits >> 13) & 0x3ff) as u16;
        sign | ((exp as u16) << 10) | frac
    }

    fn file(
        version: u32,
        rows: usize,
        dims: usize,
        value: impl Fn(usize, usize) -> f32,
    ) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for w in [version, rows as u32, dims as u32] {
            b.extend(w.to_le_bytes());
        }
        for r in 0..rows {
            for d in 0..dims {
                b.extend(f32_to_f16(value(r, d)).to_le_bytes());
            }
        }
        b
    }

    #[test]
    fn half_floats_decode() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(f32_to_f16(0.125)), 0.125);
    }

    #[test]
    fn rows_round_trip_within_8_bit_precision() {
        let value = |r: usize, d: usize| ((r * 7 + d) % 23) as f32 / 23.0 - 0.5;
        let (rows, q, scale) = decode(&file(VERSION, 3, DIM, value)).unwrap();
        assert_eq!(rows, 3);
        for r in 0..3 {
            for d in 0..DIM {
                let back = scale[r] * f32::from(q[r * DIM + d]);
                assert!((back - value(r, d)).abs() < 0.01, "{r} {d}: {back}");
            }
        }
    }

    #[test]
    fn damaged_tables_are_refused_with_the_reason() {
        let good = file(VERSION, 2, DIM, |_, _| 0.5);
        let err = |b: &[u8]| decode(b).unwrap_err().to_string();
        assert!(err(&good[..good.len() - 1]).contains("truncated"));
        assert!(err(&file(1, 2, DIM, |_, _| 0.5)).contains("version 1"));
        assert!(err(&file(VERSION, 2, 8, |_, _| 0.5)).contains("8 dimensions"));
        assert!(err(b"PK\x03\x04").contains("not a static table"));
    }
}
