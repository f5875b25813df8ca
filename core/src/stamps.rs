//! Printed timestamps into their parts (mirrors `logparse.parse.stamps`).

use regex::Regex;
use std::collections::BTreeMap;

use crate::spec;

/// An epoch number: an exact instant.
pub const EPOCH_ONLY: u8 = 5;
/// A date with a year and a zone.
pub const WITH_ZONE: u8 = 4;
/// A date with a year, no zone.
pub const WITH_YEAR: u8 = 3;
/// A month and day, no year.
pub const MONTH_DAY: u8 = 2;
/// A time of day only.
pub const TIME_ONLY: u8 = 1;

/// The parts of one printed stamp; `completeness` ranks how much it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StampParts {
    pub completeness: u8,
    pub year: Option<i32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micro: u32,
    pub zone: Option<i32>,
    pub epoch_us: Option<i64>,
}

const PARTS: [&str; 10] = ["Y", "m", "d", "H", "M", "S", "f", "tz", "mon", "epoch"];

#[derive(Clone)]
struct Shape {
    regex: Regex,
    locs: std::cell::RefCell<regex::CaptureLocations>,
    // per part of PARTS, the group indices that give it
    groups: Vec<Vec<usize>>,
}

/// The grammar's stamp shapes, tried in order.
#[derive(Clone)]
pub struct Stamps {
    shapes: Vec<Shape>,
    months: BTreeMap<String, u32>,
    epoch_completeness: u8,
}

fn micros(fraction: Option<&str>) -> u32 {
    let digits: String = fraction.unwrap_or("0").chars().take(6).collect();
    format!("{digits:0<6}").parse().unwrap_or(0)
}

fn zone_minutes(text: Option<&str>) -> Option<i32> {
    let text = text.filter(|t| !t.is_empty())?;
    if text == "Z" || text == "UTC" {
        return Some(0);
    }
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let digits: String = text[1..].chars().filter(|c| *c != ':').collect();
    let hours: i32 = digits.get(..2)?.parse().ok()?;
    let minutes: i32 = digits.get(2..4)?.parse().ok()?;
    Some(sign * (hours * 60 + minutes))
}

fn epoch_micros(text: &str) -> Option<i64> {
    if let Some((whole, frac)) = text.split_once('.') {
        return Some(whole.parse::<i64>().ok()? * 1_000_000 + micros(Some(frac)) as i64);
    }
    let n: i64 = text.parse().ok()?;
    match text.len() {
        10 => Some(n * 1_000_000),
        13 => Some(n * 1_000),
        16 => Some(n),
        19 => Some(n.div_euclid(1000)),
        _ => None,
    }
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

impl Stamps {
    pub fn new(spec: &spec::Spec) -> Result<Stamps, String> {
        let mut shapes = Vec::new();
        for s in &spec.stamps {
            let regex = Regex::new(&s.pattern).map_err(|e| format!("stamp {}: {e}", s.name))?;
            let index: BTreeMap<&str, usize> =
                regex.capture_names().enumerate().filter_map(|(i, n)| n.map(|n| (n, i))).collect();
            let groups = PARTS
                .iter()
                .map(|part| {
                    s.groups
                        .get(*part)
                        .map(|names| names.iter().filter_map(|n| index.get(n.as_str()).copied()).collect())
                        .unwrap_or_default()
                })
                .collect();
            let locs = std::cell::RefCell::new(regex.capture_locations());
            shapes.push(Shape { regex, locs, groups });
        }
        Ok(Stamps { shapes, months: spec.months.clone(), epoch_completeness: spec.epoch_completeness })
    }

    /// The parts of `text` by the first shape that matches it whole, or None.
    pub fn read(&self, text: &str) -> Option<StampParts> {
        for shape in &self.shapes {
            let mut locs = shape.locs.borrow_mut();
            if shape.regex.captures_read(&mut locs, text).is_some() {
                let mut found: [Option<&str>; 10] = [None; 10];
                for (part, groups) in shape.groups.iter().enumerate() {
                    found[part] = groups.iter().rev().find_map(|i| locs.get(*i)).map(|(s, e)| &text[s..e]);
                }
                return self.parts(&found);
            }
        }
        None
    }

    fn parts(&self, found: &[Option<&str>; 10]) -> Option<StampParts> {
        let get = |name: &str| -> Option<&str> { PARTS.iter().position(|p| *p == name).and_then(|i| found[i]) };
        if let Some(epoch) = get("epoch").filter(|e| !e.is_empty()) {
            let us = epoch_micros(epoch)?;
            return Some(StampParts {
                completeness: self.epoch_completeness,
                year: None,
                month: None,
                day: None,
                hour: 0,
                minute: 0,
                second: 0,
                micro: 0,
                zone: Some(0),
                epoch_us: Some(us),
            });
        }
        let num = |name: &str| -> Option<i64> { get(name).filter(|t| !t.is_empty()).and_then(|t| t.parse().ok()) };
        let mut month = num("m").map(|m| m as u32);
        if let Some(mon) = get("mon").filter(|t| !t.is_empty()) {
            let key = mon.to_lowercase();
            month = Some(*self.months.get(key.trim_end_matches('.'))?);
        }
        let year = num("Y").map(|y| y as i32);
        let day = num("d").map(|d| d as u32);
        let (hour, minute, second) = (num("H").unwrap_or(0), num("M").unwrap_or(0), num("S").unwrap_or(0));
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        if let Some(m) = month {
            if !(1..=12).contains(&m) {
                return None;
            }
        }
        if let Some(d) = day {
            let last = days_in_month(year.unwrap_or(2000), month.unwrap_or(1));
            if !(1..=last).contains(&d) {
                return None;
            }
        }
        let zone = zone_minutes(get("tz"));
        let completeness = if year.is_some() {
            if zone.is_some() {
                WITH_ZONE
            } else {
                WITH_YEAR
            }
        } else if month.is_some() {
            MONTH_DAY
        } else {
            TIME_ONLY
        };
        Some(StampParts {
            completeness,
            year,
            month,
            day,
            hour: hour as u32,
            minute: minute as u32,
            second: second as u32,
            micro: micros(get("f")),
            zone,
            epoch_us: None,
        })
    }
}
