//! Structured fuzz inputs from raw bytes: every byte string decodes to something (missing bytes
//! read as zero), so libFuzzer's mutations always reach the code under test. [`Writer`] emits the
//! bytes that make [`Reader`] return given choices, for hand-written seeds.

use serde_json::{Map, Number, Value};

/// Reads choices, numbers and strings off the front of a fuzz input.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte (0 once the input is used up).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    /// One of `n` choices (`n` > 0).
    pub fn choose(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// Whether bit `bit` of the next byte is set (one byte per call).
    pub fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.byte();
        }
        u64::from_le_bytes(b)
    }

    /// A length-prefixed byte string: one length byte (255: a two-byte length follows), cut at
    /// what is left of the input.
    pub fn bytes(&mut self) -> &'a [u8] {
        let len = match self.byte() {
            255 => usize::from(self.u16()),
            n => usize::from(n),
        };
        let len = len.min(self.data.len());
        let (s, rest) = self.data.split_at(len);
        self.data = rest;
        s
    }

    /// [`Self::bytes`] as text (invalid UTF-8 replaced).
    pub fn string(&mut self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    /// A string that may be long: a chunk repeated up to `u16` times (at most `max` bytes).
    pub fn long_string(&mut self, max: usize) -> String {
        let chunk = self.string();
        let times = usize::from(self.u16());
        if chunk.is_empty() {
            return chunk;
        }
        let times = times.min(max / chunk.len()).max(1);
        chunk.repeat(times)
    }

    /// A number: small integers, the 64-bit and float extremes, or 8 bytes as an `f64`.
    pub fn number(&mut self) -> Value {
        let n = match self.choose(12) {
            0 => Number::from(self.byte()),
            1 => Number::from(-i64::from(self.byte())),
            2 => Number::from(i64::MAX),
            3 => Number::from(i64::MIN),
            4 => Number::from(u64::MAX),
            5 => Number::from(self.u64()),
            6 => Number::from(self.u64() as i64),
            7 => return Value::from(1e308),
            8 => return Value::from(5e-324),
            9 => return Value::from(f64::from(self.byte()) / 10.0),
            10 => return Value::from(-9_007_199_254_740_993.0_f64),
            _ => match Number::from_f64(f64::from_bits(self.u64())) {
                Some(n) => n,
                None => Number::from(0),
            },
        };
        Value::Number(n)
    }

    /// Any JSON value, nested at most `depth` more levels, with strings up to `max_str` bytes.
    pub fn value(&mut self, depth: usize, max_str: usize) -> Value {
        let kinds = if depth == 0 { 5 } else { 7 };
        match self.choose(kinds) {
            0 => Value::Null,
            1 => Value::Bool(self.flag()),
            2 => self.number(),
            3 => Value::String(self.string()),
            4 => Value::String(self.long_string(max_str)),
            5 => {
                let n = self.choose(5);
                Value::Array((0..n).map(|_| self.value(depth - 1, max_str)).collect())
            }
            _ => {
                let n = self.choose(5);
                let mut m = Map::new();
                for _ in 0..n {
                    let k = self.string();
                    let v = self.value(depth - 1, max_str);
                    m.insert(k, v);
                }
                Value::Object(m)
            }
        }
    }
}

/// Builds inputs for [`Reader`]: each call emits the bytes the matching `Reader` call reads.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Choice `i` (of fewer than 256).
    pub fn pick(mut self, i: usize) -> Self {
        self.0.push(u8::try_from(i).unwrap_or(u8::MAX));
        self
    }

    pub fn u16(mut self, n: u16) -> Self {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }

    pub fn string(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        if b.len() < 255 {
            self.0.push(b.len() as u8);
        } else {
            self.0.push(255);
            self.0
                .extend_from_slice(&u16::try_from(b.len()).unwrap_or(u16::MAX).to_le_bytes());
        }
        self.0.extend_from_slice(b);
        self
    }

    pub fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }

    pub fn finish(self) -> Vec<u8> {
        self.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    pub(crate) fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf()
    }

    /// The files in `dir` (none when it does not exist), sorted.
    pub(crate) fn files_in(dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        out.retain(|p| p.is_file());
        out.sort();
        out
    }

    #[test]
    fn writer_round_trips_through_reader() {
        let long = "x".repeat(300);
        let data = Writer::new()
            .pick(7)
            .u16(513)
            .string("abc")
            .string(&long)
            .string("ab")
            .u16(3)
            .finish();
        let mut r = Reader::new(&data);
        assert_eq!(r.choose(10), 7);
        assert_eq!(r.u16(), 513);
        assert_eq!(r.string(), "abc");
        assert_eq!(r.string(), long);
        assert_eq!(r.long_string(1000), "ababab");
        assert!(r.is_empty());
        assert_eq!(r.byte(), 0, "an exhausted input reads zeros");
    }
}
