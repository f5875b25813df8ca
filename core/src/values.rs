//! Captured text to typed values (mirrors `logparse.parse.values`).

use regex::Regex;
use std::sync::OnceLock;

use crate::text::py_strip;

/// A field's type, as the grammar declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A 64-bit integer.
    Int,
    /// A float.
    Float,
    /// Text.
    Str,
    /// True or false.
    Bool,
    /// A list of floats.
    Floats,
    /// A list of (key, value) texts: a stats line's unknown keys.
    Pairs,
}

impl FieldType {
    /// The type a grammar names (`int`, `float`, `str`, `bool`, `floats`, `pairs`).
    pub fn parse(name: &str) -> Result<FieldType, String> {
        Ok(match name {
            "int" => FieldType::Int,
            "float" => FieldType::Float,
            "str" => FieldType::Str,
            "bool" => FieldType::Bool,
            "floats" => FieldType::Floats,
            "pairs" => FieldType::Pairs,
            other => return Err(format!("unknown field type {other:?}")),
        })
    }
}

/// One typed value of an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value (the column is null).
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// Text.
    Str(String),
    /// True or false.
    Bool(bool),
    /// A list of floats.
    Floats(Vec<f64>),
    /// (key, value) pairs.
    Pairs(Vec<(String, String)>),
}

impl Value {
    /// The value as Python's `str()` prints it (templates), "" for None.
    pub fn py_str(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => py_float_repr(*f),
            Value::Str(s) => s.clone(),
            Value::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            Value::Floats(v) => {
                let items: Vec<String> = v.iter().map(|f| py_float_repr(*f)).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Pairs(p) => format!("{p:?}"),
        }
    }
}

/// A number as the grammar's values print it (sign, decimals, exponent, `nan`, `inf`).
pub fn number_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|nan|inf").expect("number regex"))
}

/// A stats value: its leading number (thousands separators allowed) and what follows.
pub fn leading_number_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?s)\A(-?(?:[0-9][0-9,_]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?nan|-?inf) *(.*)\z")
            .expect("leading number regex")
    })
}

/// A stats value split as `leading_number_re` splits it: (the number, what follows its blanks).
pub fn split_number(value: &str) -> Option<(&str, &str)> {
    let b = value.as_bytes();
    let mut i = 0;
    let numeric = |start: usize| -> Option<usize> {
        let mut j = start;
        if j < b.len() && b[j] == b'-' {
            j += 1;
        }
        if j >= b.len() || !b[j].is_ascii_digit() {
            return None;
        }
        j += 1;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b',' || b[j] == b'_') {
            j += 1;
        }
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            j += 2;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
        }
        if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
            let mut k = j + 1;
            if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                k += 1;
            }
            if k < b.len() && b[k].is_ascii_digit() {
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                j = k;
            }
        }
        Some(j)
    };
    let end = match numeric(0) {
        Some(end) => end,
        None => {
            let sign = usize::from(value.starts_with('-'));
            if value[sign..].starts_with("nan") || value[sign..].starts_with("inf") {
                sign + 3
            } else {
                return None;
            }
        }
    };
    i += end;
    let number = &value[..i];
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    Some((number, &value[i..]))
}

fn duration_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\A(?:([0-9]+):)?([0-9]+):([0-9]+(?:\.[0-9]+)?)\z").expect("duration regex"))
}

/// Python's `float(text)` (text already stripped), or None.
pub fn py_float(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let plain = !b.is_empty()
        && b.iter().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E'))
        && b.iter().any(|c| c.is_ascii_digit());
    if plain {
        return text.parse::<f64>().ok();
    }
    let t = text.trim_matches(crate::text::py_is_space);
    if t.is_empty() || t.contains('_') {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if body.starts_with("inf") && body != "inf" && body != "infinity" {
        return None;
    }
    if body.starts_with("nan") && body != "nan" {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Python's `int(text)` for ASCII digits with an optional sign, as an i64 (None when it overflows).
fn py_int(text: &str) -> Option<i64> {
    let t = text.trim_matches(crate::text::py_is_space);
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok()
}

const TRUE: [&str; 5] = ["true", "yes", "1", "on", "enabled"];
const FALSE: [&str; 6] = ["false", "no", "0", "off", "disabled", "none"];

/// A captured string as its field type (`logparse.parse.values.convert`).
pub fn convert(value: &str, typ: FieldType) -> Value {
    if typ == FieldType::Str {
        return Value::Str(value.to_string());
    }
    let text = value.trim_matches(crate::text::BLANKS);
    let bytes = text.as_bytes();
    let digits = |b: &[u8]| !b.is_empty() && b.iter().all(u8::is_ascii_digit);
    match typ {
        FieldType::Int if digits(bytes) || (bytes.first() == Some(&b'-') && digits(&bytes[1..])) => {
            return text.parse::<i64>().map(Value::Int).unwrap_or(Value::Null);
        }
        FieldType::Float if !bytes.iter().any(|c| matches!(c, b',' | b'_' | b'%')) => {
            return py_float(text).map(Value::Float).unwrap_or(Value::Null);
        }
        _ => {}
    }
    match typ {
        FieldType::Int => {
            let cleaned: String = text.chars().filter(|c| *c != ',' && *c != '_').collect();
            if cleaned.contains('.') {
                match py_float(&cleaned) {
                    Some(f) if f.is_finite() => {
                        let t = f.trunc();
                        if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
                            Value::Int(t as i64)
                        } else {
                            Value::Null
                        }
                    }
                    _ => Value::Null,
                }
            } else {
                py_int(&cleaned).map(Value::Int).unwrap_or(Value::Null)
            }
        }
        FieldType::Float => {
            let cleaned: String = text.chars().filter(|c| *c != ',' && *c != '_').collect();
            let cleaned = cleaned.trim_end_matches('%');
            py_float(cleaned).map(Value::Float).unwrap_or(Value::Null)
        }
        FieldType::Bool => {
            let low = text.to_lowercase();
            if TRUE.contains(&low.as_str()) {
                Value::Bool(true)
            } else if FALSE.contains(&low.as_str()) {
                Value::Bool(false)
            } else {
                Value::Null
            }
        }
        FieldType::Floats => Value::Floats(number_re().find_iter(text).filter_map(|m| py_float(m.as_str())).collect()),
        FieldType::Str | FieldType::Pairs => Value::Null,
    }
}

/// A rule's `derive` function on a captured string (`count`, `duration`), before typing.
pub fn derive(function: &str, text: &str) -> Option<f64> {
    match function {
        "count" => Some(number_re().find_iter(text).count() as f64),
        "duration" => {
            let caps = duration_re().captures(py_strip(text))?;
            let hours: f64 = caps.get(1).map(|m| m.as_str().parse().unwrap_or(0.0)).unwrap_or(0.0);
            let minutes: f64 = caps[2].parse().ok()?;
            let seconds: f64 = caps[3].parse().ok()?;
            Some(hours * 3600.0 + minutes * 60.0 + seconds)
        }
        _ => None,
    }
}

/// A derived number typed as the reference does it: `convert(str(value), type)`.
pub fn derived_value(function: &str, number: f64, typ: FieldType) -> Value {
    let printed = if function == "count" { format!("{}", number as i64) } else { py_float_repr(number) };
    convert(&printed, typ)
}

/// Python's `repr(float)`: the shortest digits that read back, in Python's layout.
pub fn py_float_repr(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // `{:e}` gives the shortest round-trip digits as d.ddddde±x
    let sci = format!("{:e}", value);
    let (mantissa, exponent) = sci.split_once('e').expect("exponent");
    let exp: i32 = exponent.parse().expect("exponent digits");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the point
        let mut out = String::from(sign);
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat((-point) as usize));
            out.push_str(&digits);
        } else if (point as usize) >= digits.len() {
            out.push_str(&digits);
            out.push_str(&"0".repeat(point as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
        out
    } else {
        let mut out = String::from(sign);
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_like_python() {
        assert_eq!(convert("2,687,776", FieldType::Int), Value::Int(2687776));
        assert_eq!(convert("1.9", FieldType::Int), Value::Int(1));
        assert_eq!(convert("1e3", FieldType::Int), Value::Null);
        assert_eq!(convert("16.6%", FieldType::Float), Value::Float(16.6));
        assert_eq!(convert("True", FieldType::Bool), Value::Bool(true));
        assert_eq!(convert("0.9, 0.8", FieldType::Floats), Value::Floats(vec![0.9, 0.8]));
        assert_eq!(convert("99999999999999999999", FieldType::Int), Value::Null);
        assert_eq!(split_number("16.6%"), Some(("16.6", "%")));
        assert_eq!(split_number("8 reqs"), Some(("8", "reqs")));
        assert_eq!(split_number("-nan%"), Some(("-nan", "%")));
        assert_eq!(split_number("1.e5"), Some(("1", ".e5")));
        assert_eq!(split_number("x"), None);
    }

    #[test]
    fn float_repr_is_pythons() {
        assert_eq!(py_float_repr(1.0), "1.0");
        assert_eq!(py_float_repr(0.1), "0.1");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(0.00001), "1e-05");
        assert_eq!(py_float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(py_float_repr(1.5e300), "1.5e+300");
    }
}
