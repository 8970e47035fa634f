//! A small JSON value with its reader and writer (standard library only), enough for the
//! arena's protocol (docs/protocol.md): objects keep their fields in order, a number keeps the
//! text it was read as (so it is written back exactly), strings have every escape decoded
//! (`\uXXXX` and surrogate pairs included). A missing field or element reads as `Null`.

#![allow(dead_code)] // accessors a strategy may use

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number's text as read: `as_i64` / `as_f64` convert it.
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

static NULL: Value = Value::Null;

impl Value {
    /// The field `key` of an object (`Null` if missing or not an object).
    pub fn get(&self, key: &str) -> &Value {
        match self {
            Value::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// Element `i` of an array (`Null` if missing or not an array).
    pub fn at(&self, i: usize) -> &Value {
        match self {
            Value::Array(items) => items.get(i).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Value::String(s) => s,
            _ => "",
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> &[Value] {
        match self {
            Value::Array(items) => items,
            _ => &[],
        }
    }

    /// A string value.
    pub fn str(s: &str) -> Value {
        Value::String(s.to_string())
    }

    /// An object from `(name, value)` pairs, in that order.
    pub fn object(fields: Vec<(&str, Value)>) -> Value {
        Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }
}

/// Parse one JSON text; the error says what is wrong and at which byte.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut r = Reader { s: text.as_bytes(), p: 0 };
    let v = r.value(0)?;
    r.ws();
    if r.p != r.s.len() {
        return Err(r.fail("text after the value"));
    }
    Ok(v)
}

struct Reader<'a> {
    s: &'a [u8],
    p: usize,
}

impl<'a> Reader<'a> {
    fn fail(&self, what: &str) -> String {
        format!("JSON: {} at byte {}", what, self.p)
    }

    fn peek(&self) -> u8 {
        self.s.get(self.p).copied().unwrap_or(0)
    }

    fn ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.p += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() != c {
            return Err(self.fail("unexpected character"));
        }
        self.p += 1;
        Ok(())
    }

    fn word(&mut self, w: &str, v: Value) -> Result<Value, String> {
        for c in w.bytes() {
            self.expect(c)?;
        }
        Ok(v)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > 256 {
            return Err(self.fail("nesting too deep"));
        }
        self.ws();
        match self.peek() {
            b'{' => {
                self.p += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.peek() == b'}' {
                    self.p += 1;
                    return Ok(Value::Object(fields));
                }
                loop {
                    self.ws();
                    if self.peek() != b'"' {
                        return Err(self.fail("expected a field name"));
                    }
                    let key = self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    let v = self.value(depth + 1)?;
                    fields.push((key, v));
                    self.ws();
                    if self.peek() == b',' {
                        self.p += 1;
                        continue;
                    }
                    self.expect(b'}')?;
                    return Ok(Value::Object(fields));
                }
            }
            b'[' => {
                self.p += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == b']' {
                    self.p += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    if self.peek() == b',' {
                        self.p += 1;
                        continue;
                    }
                    self.expect(b']')?;
                    return Ok(Value::Array(items));
                }
            }
            b'"' => Ok(Value::String(self.string()?)),
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Null),
            _ => self.number(),
        }
    }

    fn digits(&mut self) -> Result<(), String> {
        if !self.peek().is_ascii_digit() {
            return Err(self.fail("expected a digit"));
        }
        while self.peek().is_ascii_digit() {
            self.p += 1;
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.p;
        if self.peek() == b'-' {
            self.p += 1;
        }
        if self.peek() == b'0' {
            self.p += 1;
        } else if self.peek().is_ascii_digit() {
            self.digits()?;
        } else {
            return Err(self.fail("expected a value"));
        }
        if self.peek() == b'.' {
            self.p += 1;
            self.digits()?;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.p += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.p += 1;
            }
            self.digits()?;
        }
        Ok(Value::Number(String::from_utf8_lossy(&self.s[start..self.p]).into_owned()))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut u = 0u32;
        for _ in 0..4 {
            let d = (self.peek() as char).to_digit(16).ok_or_else(|| self.fail("bad \\u escape"))?;
            self.p += 1;
            u = u * 16 + d;
        }
        Ok(u)
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek();
            if self.p >= self.s.len() {
                return Err(self.fail("unterminated string"));
            }
            self.p += 1;
            match c {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                0..=0x1f => return Err(self.fail("control character in a string")),
                b'\\' => {
                    let e = self.peek();
                    self.p += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.p..].starts_with(b"\\u") {
                                let back = self.p;
                                self.p += 2;
                                let low = self.hex4()?;
                                if (0xDC00..0xE000).contains(&low) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                                } else {
                                    self.p = back; // not a pair: the next escape is read on its own
                                }
                            }
                            char::from_u32(cp).unwrap_or('\u{FFFD}') // a lone surrogate has no UTF-8
                        }
                        _ => return Err(self.fail("bad escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{}", c)?,
        }
    }
    f.write_str("\"")
}

/// Compact JSON on one line (newlines in strings are escaped): `value.to_string()`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => f.write_str(if *b { "true" } else { "false" }),
            Value::Number(text) => f.write_str(text),
            Value::String(s) => write_str(f, s),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}", v)?;
                }
                f.write_str("]")
            }
            Value::Object(fields) => {
                f.write_str("{")?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_str(f, k)?;
                    write!(f, ":{}", v)?;
                }
                f.write_str("}")
            }
        }
    }
}
