//! `time` for every line, from the stamp parts the lines give, in line order.
//!
//! Each line's `time` comes from its most complete stamp; `time` is a UTC instant (microseconds):
//!
//! * an epoch number or a stamp with a zone is exact;
//! * a stamp with a date but no zone is local time in the resolver's zone (`--tz`), stated in the
//!   facts;
//! * a stamp without a year (vLLM's `MM-DD`, syslog's `Mon DD`) takes the year of the last full date
//!   printed before it; a stamp without a date (old SGLang's `HH:MM:SS`) takes that date;
//! * before any full date: `--year`, else the file's modification time, which dates the *last* line
//!   (a log is written up to its mtime), so a run across New Year's Eve or midnight gets the right
//!   year and day. Such dates are inferred, and the facts say from what;
//! * inside a stretch of year-less stamps a step back of more than half a year is a new year; of
//!   date-less stamps, a step back of more than 12 hours is a new day.
//!
//! The log is read as a stream: a full date met late, or an mtime that says the year (date)
//! guessed at the start was wrong, gives a [`Restart`] and the log is read again with what is now
//! known.

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};

use crate::error::Error;
use crate::stamps::{StampParts, EPOCH_ONLY, MONTH_DAY, TIME_ONLY, WITH_YEAR, WITH_ZONE};

const SECOND_US: i64 = 1_000_000;
const HOUR_US: i64 = 3_600 * SECOND_US;
const DAY_US: i64 = 24 * HOUR_US;
const HALF_YEAR_US: i64 = 183 * DAY_US;
const HALF_DAY_US: i64 = 12 * HOUR_US;
/// A last line stamped up to a day after the mtime is not a wrong year.
const SLACK_US: i64 = DAY_US;
/// A date-less last line more than half a day after the mtime (read in the stamps' zone) belongs to
/// the day before: the mtime is written after the last line, and half a day covers a wrong zone.
const DATE_SLACK_US: i64 = HALF_DAY_US;

/// A civil date (proleptic Gregorian), as days are counted here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    /// The year, 1..=9999.
    pub year: i32,
    /// The month, 1..=12.
    pub month: u32,
    /// The day of the month.
    pub day: u32,
}

impl Date {
    /// The date `days` after 1970-01-01.
    pub fn from_days(days: i64) -> Date {
        // Howard Hinnant's civil_from_days
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }

    /// Days since 1970-01-01.
    pub fn days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// ISO text (`2025-04-20`).
    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap(year) => 29,
        _ => 28,
    }
}

/// Microseconds since the epoch of a civil date and time, or None when it is no valid date (as
/// Python's `datetime` refuses it: 02-29 of a year without one, second 60).
fn civil_micros(year: i32, month: u32, day: u32, parts: &StampParts) -> Option<i64> {
    let valid = (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && parts.hour < 24
        && parts.minute < 60
        && parts.second < 60
        && parts.micro < 1_000_000;
    valid.then(|| days_from_civil(year, month, day) * DAY_US + of_day(parts))
}

fn of_day(parts: &StampParts) -> i64 {
    ((i64::from(parts.hour) * 60 + i64::from(parts.minute)) * 60 + i64::from(parts.second)) * SECOND_US
        + i64::from(parts.micro)
}

/// Where the dates of stamps that print none were taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guess {
    /// `--year`
    Year,
    /// the file's modification time
    Mtime,
    /// today (no mtime: standard input)
    Now,
}

impl Guess {
    fn source(guess: Option<Guess>) -> &'static str {
        match guess {
            Some(Guess::Mtime) => "the file's modification time",
            Some(Guess::Year) => "--year",
            Some(Guess::Now) => "today (stdin has no mtime)",
            None => "the log's full dates",
        }
    }
}

/// Lines were dated with a year or date the log itself later contradicts: read it again knowing
/// `year` / `date`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    /// The year the first year-less stamps have.
    pub year: Option<i32>,
    /// The date the first date-less stamps have.
    pub date: Option<Date>,
    /// Why.
    pub why: String,
}

/// How a log's times were made: for the headline, the JSON and the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeFacts {
    /// The zone naive stamps are read in.
    pub zone: String,
    /// Naive stamps were read as `zone` (nothing on the line said).
    pub zone_assumed: bool,
    /// Lines whose time came from a stamp with a zone or an epoch.
    pub exact: u64,
    /// Lines with a date and no zone.
    pub naive: u64,
    /// Lines that print no year.
    pub year_inferred: u64,
    /// Lines that print no date.
    pub date_inferred: u64,
    /// Where inferred dates came from ("the log's full dates", "--year", ...).
    pub inferred_from: Option<&'static str>,
    /// The modification time used, ISO 8601.
    pub anchor: Option<String>,
    /// Year or day rollovers met.
    pub rollovers: u64,
}

/// What a resolver is told before the first line.
#[derive(Debug, Clone, Default)]
pub struct TimeOptions {
    /// `--year`.
    pub year: Option<i32>,
    /// The file's modification time, UTC microseconds.
    pub mtime_us: Option<i64>,
    /// The zone of naive stamps (an IANA name).
    pub zone: String,
    /// Today in `zone` (for a log without mtime).
    pub today: Option<Date>,
    /// The year known from a restart.
    pub known_year: Option<i32>,
    /// The date known from a restart.
    pub known_date: Option<Date>,
}

/// Turns each line's stamp parts into `time`, carrying state across blocks.
pub struct TimeResolver {
    facts: TimeFacts,
    mtime_us: Option<i64>,
    zone: Option<TimeZone>, // None: UTC, no conversion
    local: Option<i64>,     // the mtime as local civil microseconds
    known_year: Option<i32>,
    known_date: Option<Date>,
    year: i32,
    date: Date,
    full_seen: bool,
    guessed: Option<Guess>,
    guess_used: bool,
    last_md: Option<i64>,
    last_to: Option<i64>,
    last_value: Option<i64>,
    offsets: OffsetCache,
}

impl TimeResolver {
    /// A resolver for one reading of a log. Errs when the zone is not known.
    pub fn new(options: &TimeOptions) -> Result<TimeResolver, Error> {
        let zone = if options.zone == "UTC" {
            None
        } else {
            Some(TimeZone::get(&options.zone).map_err(|_| {
                Error::Input(format!(
                    "unknown time zone {:?} (give an IANA name such as Europe/Berlin, or UTC)",
                    options.zone
                ))
            })?)
        };
        let local = options.mtime_us.map(|us| match &zone {
            None => us,
            Some(tz) => us + i64::from(offset_at(tz, us)) * SECOND_US,
        });
        let (year, guessed) = match (options.known_year, options.year, local) {
            (Some(y), _, _) => (y, None),
            (None, Some(y), _) => (y, Some(Guess::Year)),
            (None, None, Some(l)) => (Date::from_days(l.div_euclid(DAY_US)).year, Some(Guess::Mtime)),
            (None, None, None) => (options.today.map(|d| d.year).unwrap_or(1970), Some(Guess::Now)),
        };
        let date = match (options.known_date, local) {
            (Some(d), _) => d,
            (None, Some(l)) => Date::from_days(l.div_euclid(DAY_US)),
            (None, None) => options.today.unwrap_or(Date { year: 1970, month: 1, day: 1 }),
        };
        Ok(TimeResolver {
            facts: TimeFacts { zone: options.zone.clone(), ..TimeFacts::default() },
            mtime_us: options.mtime_us,
            zone,
            local,
            known_year: options.known_year,
            known_date: options.known_date,
            year,
            date,
            full_seen: false,
            guessed,
            guess_used: false,
            last_md: None,
            last_to: None,
            last_value: None,
            offsets: OffsetCache::default(),
        })
    }

    /// What was learned so far.
    pub fn facts(&self) -> &TimeFacts {
        &self.facts
    }

    /// No [`Restart`] can come any more: a full date was read.
    pub fn settled(&self) -> bool {
        self.full_seen
    }

    /// The `time` of one line (UTC microseconds; None where no stamp reads).
    pub fn resolve(&mut self, parts: Option<&StampParts>) -> Result<Option<i64>, Restart> {
        let Some(p) = parts else { return Ok(None) };
        match p.completeness {
            EPOCH_ONLY => {
                self.facts.exact += 1;
                Ok(p.epoch_us)
            }
            WITH_ZONE | WITH_YEAR => {
                let (Some(year), Some(month), Some(day)) = (p.year, p.month, p.day) else { return Ok(None) };
                let Some(value) = civil_micros(year, month, day, p) else { return Ok(None) };
                self.see_full(year, Date { year, month, day })?;
                if p.completeness == WITH_ZONE {
                    self.facts.exact += 1;
                    Ok(Some(value - i64::from(p.zone.unwrap_or(0)) * 60 * SECOND_US))
                } else {
                    self.facts.naive += 1;
                    Ok(self.as_utc(Some(value)))
                }
            }
            MONTH_DAY => {
                let value = self.month_day(p);
                Ok(self.as_utc(value))
            }
            TIME_ONLY => {
                let value = self.time_only(p);
                Ok(self.as_utc(Some(value)))
            }
            _ => Ok(None),
        }
    }

    fn see_full(&mut self, year: i32, date: Date) -> Result<(), Restart> {
        if !self.full_seen && self.guess_used && (year != self.year || date != self.date) {
            return Err(Restart {
                year: Some(year),
                date: Some(date),
                why: format!("the log's first full date ({}) says the earlier lines were misdated", date.iso()),
            });
        }
        self.full_seen = true;
        self.guessed = None;
        self.year = year;
        self.date = date;
        self.last_md = None;
        self.last_to = None;
        Ok(())
    }

    fn month_day(&mut self, p: &StampParts) -> Option<i64> {
        let (month, day) = (p.month.unwrap_or(0), p.day.unwrap_or(0));
        let base = civil_micros(2000, month, day, p)?;
        if matches!(self.last_md, Some(last) if base < last - HALF_YEAR_US) {
            self.year += 1;
            self.facts.rollovers += 1;
        }
        self.last_md = Some(base);
        self.note_guess();
        self.facts.year_inferred += 1;
        let value = civil_micros(self.year, month, day, p);
        self.last_value = value;
        value
    }

    fn time_only(&mut self, p: &StampParts) -> i64 {
        let of_day = of_day(p);
        if matches!(self.last_to, Some(last) if of_day < last - HALF_DAY_US) {
            self.date = Date::from_days(self.date.days() + 1);
            self.facts.rollovers += 1;
        }
        self.last_to = Some(of_day);
        self.note_guess();
        self.facts.date_inferred += 1;
        let value = self.date.days() * DAY_US + of_day;
        self.last_value = Some(value);
        value
    }

    fn note_guess(&mut self) {
        if self.guessed.is_some() {
            self.guess_used = true;
        }
        if self.facts.inferred_from.is_none() {
            self.facts.inferred_from = Some(Guess::source(self.guessed));
            if self.guessed == Some(Guess::Mtime) {
                self.facts.anchor = self.mtime_us.map(iso_utc);
            }
        }
    }

    /// A naive (local civil) time as a UTC instant: the earlier of two in a fold, None in a gap.
    fn as_utc(&mut self, local: Option<i64>) -> Option<i64> {
        let local = local?;
        self.facts.zone_assumed = true;
        match &self.zone {
            None => Some(local),
            Some(tz) => self.offsets.as_utc(tz, local),
        }
    }

    /// At the end of the log: an mtime dates the last line; a [`Restart`] when the guess must move.
    pub fn finish(&self) -> Result<(), Restart> {
        let (Some(Guess::Mtime), true, Some(last), Some(local)) =
            (self.guessed, self.guess_used, self.last_value, self.local)
        else {
            return Ok(());
        };
        let slack = if self.facts.year_inferred > 0 { SLACK_US } else { DATE_SLACK_US };
        if last <= local + slack {
            return Ok(());
        }
        let local_date = Date::from_days(local.div_euclid(DAY_US));
        if self.facts.year_inferred > 0 {
            let last_date = Date::from_days(last.div_euclid(DAY_US));
            // the last line's month, day and time against the mtime's, in the mtime's year
            let later_in_year = (last_date.month, last_date.day, last.rem_euclid(DAY_US))
                > (local_date.month, local_date.day, local.rem_euclid(DAY_US));
            let years_over = last_date.year - local_date.year + i32::from(later_in_year);
            let start_year = self.known_year.unwrap_or(local_date.year);
            return Err(Restart {
                year: Some(start_year - years_over.max(1)),
                date: None,
                why: "the file's modification time dates the last line a year earlier".into(),
            });
        }
        let days_over = (last - local).div_euclid(DAY_US) + 1;
        let start = self.known_date.unwrap_or(local_date);
        Err(Restart {
            year: None,
            date: Some(Date::from_days(start.days() - days_over)),
            why: "the file's modification time dates the last line a day earlier".into(),
        })
    }
}

/// `2026-07-28T17:06:32.000137+00:00`, as Python's `datetime.isoformat` writes a UTC instant.
pub fn iso_utc(us: i64) -> String {
    let date = Date::from_days(us.div_euclid(DAY_US));
    let t = us.rem_euclid(DAY_US);
    let (h, m, s, f) = (t / HOUR_US, t / 60_000_000 % 60, t / SECOND_US % 60, t % SECOND_US);
    let frac = if f == 0 { String::new() } else { format!(".{f:06}") };
    format!("{}T{h:02}:{m:02}:{s:02}{frac}+00:00", date.iso())
}

/// The UTC offset (seconds) of `tz` at the UTC instant `us`.
fn offset_at(tz: &TimeZone, us: i64) -> i32 {
    jiff::Timestamp::from_microsecond(us).map(|t| tz.to_offset(t).seconds()).unwrap_or(0)
}

/// Local-to-UTC conversions, cached per local hour (zone transitions fall on whole hours in the
/// zones that have them at all; an hour that holds a fold or a gap is converted line by line).
#[derive(Default)]
struct OffsetCache {
    hour: Option<i64>,
    offset: Option<i64>, // None: the hour holds a transition
}

impl OffsetCache {
    fn as_utc(&mut self, tz: &TimeZone, local: i64) -> Option<i64> {
        let hour = local.div_euclid(HOUR_US);
        if self.hour != Some(hour) {
            let start = exact_offset(tz, hour * HOUR_US);
            let end = exact_offset(tz, (hour + 1) * HOUR_US - 1);
            self.hour = Some(hour);
            self.offset = match (start, end) {
                (Some(a), Some(b)) if a == b => Some(a),
                _ => None,
            };
        }
        match self.offset {
            Some(offset) => Some(local - offset),
            None => exact_offset(tz, local).map(|offset| local - offset),
        }
    }
}

/// The offset (microseconds) that makes local civil time `local` an instant: the earlier instant in
/// a fold, None in a gap (what polars' `ambiguous="earliest", non_existent="null"` give).
fn exact_offset(tz: &TimeZone, local: i64) -> Option<i64> {
    let date = Date::from_days(local.div_euclid(DAY_US));
    let t = local.rem_euclid(DAY_US);
    let civil = DateTime::new(
        date.year as i16,
        date.month as i8,
        date.day as i8,
        (t / HOUR_US) as i8,
        (t / 60_000_000 % 60) as i8,
        (t / SECOND_US % 60) as i8,
        ((t % SECOND_US) * 1_000) as i32,
    )
    .ok()?;
    let offset = match tz.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset,
        AmbiguousOffset::Fold { before, .. } => before,
        AmbiguousOffset::Gap { .. } => return None,
    };
    Some(i64::from(offset.seconds()) * SECOND_US)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(completeness: u8, ymd: (Option<i32>, Option<u32>, Option<u32>), hms: (u32, u32, u32)) -> StampParts {
        StampParts {
            completeness,
            year: ymd.0,
            month: ymd.1,
            day: ymd.2,
            hour: hms.0,
            minute: hms.1,
            second: hms.2,
            micro: 0,
            zone: if completeness == WITH_ZONE { Some(0) } else { None },
            epoch_us: None,
        }
    }

    fn utc(y: i32, m: u32, d: u32, h: i64) -> i64 {
        days_from_civil(y, m, d) * DAY_US + h * HOUR_US
    }

    fn options(mtime: Option<i64>) -> TimeOptions {
        TimeOptions { zone: "UTC".into(), mtime_us: mtime, ..TimeOptions::default() }
    }

    #[test]
    fn civil_days_round_trip() {
        for days in [-719_468, -1, 0, 1, 10_957, 20_000, 2_932_896] {
            assert_eq!(Date::from_days(days).days(), days);
        }
        assert_eq!(Date::from_days(0), Date { year: 1970, month: 1, day: 1 });
        assert_eq!(Date::from_days(11_016), Date { year: 2000, month: 2, day: 29 });
    }

    #[test]
    fn a_year_less_run_across_new_year_is_dated_by_the_mtime() {
        let mtime = utc(2026, 1, 1, 12);
        let mut r = TimeResolver::new(&options(Some(mtime))).unwrap();
        let dec = stamp(MONTH_DAY, (None, Some(12), Some(31)), (23, 0, 0));
        let jan = stamp(MONTH_DAY, (None, Some(1), Some(1)), (1, 0, 0));
        // the first guess is the mtime's year (2026): the end says the run started in 2025
        assert_eq!(r.resolve(Some(&dec)).unwrap(), Some(utc(2026, 12, 31, 23)));
        assert_eq!(r.resolve(Some(&jan)).unwrap(), Some(utc(2027, 1, 1, 1)));
        let again = r.finish().unwrap_err();
        assert_eq!(again.year, Some(2025));
        let mut r = TimeResolver::new(&TimeOptions { known_year: again.year, ..options(Some(mtime)) }).unwrap();
        assert_eq!(r.resolve(Some(&dec)).unwrap(), Some(utc(2025, 12, 31, 23)));
        assert_eq!(r.resolve(Some(&jan)).unwrap(), Some(utc(2026, 1, 1, 1)));
        assert!(r.finish().is_ok());
        assert_eq!(r.facts().rollovers, 1);
    }

    #[test]
    fn a_late_full_date_restarts_a_guess() {
        let mut r = TimeResolver::new(&options(Some(utc(2026, 3, 1, 0)))).unwrap();
        let md = stamp(MONTH_DAY, (None, Some(4), Some(20)), (10, 0, 0));
        let full = stamp(WITH_YEAR, (Some(2025), Some(4), Some(20)), (10, 0, 1));
        r.resolve(Some(&md)).unwrap();
        let again = r.resolve(Some(&full)).unwrap_err();
        assert_eq!((again.year, again.date), (Some(2025), Some(Date { year: 2025, month: 4, day: 20 })));
    }

    #[test]
    fn a_full_date_first_settles_the_year() {
        let mut r = TimeResolver::new(&options(Some(utc(2030, 1, 1, 0)))).unwrap();
        let full = stamp(WITH_ZONE, (Some(2025), Some(4), Some(20)), (10, 0, 0));
        let md = stamp(MONTH_DAY, (None, Some(4), Some(20)), (10, 0, 1));
        assert_eq!(r.resolve(Some(&full)).unwrap(), Some(utc(2025, 4, 20, 10)));
        assert!(r.settled());
        assert_eq!(r.resolve(Some(&md)).unwrap(), Some(utc(2025, 4, 20, 10) + SECOND_US));
        assert_eq!(r.facts().inferred_from, Some("the log's full dates"));
    }

    #[test]
    fn naive_stamps_are_read_in_the_zone_the_earlier_in_a_fold_none_in_a_gap() {
        let mut r = TimeResolver::new(&TimeOptions {
            zone: "Europe/Berlin".into(),
            year: Some(2025),
            ..TimeOptions::default()
        })
        .unwrap();
        let at = |h: u32, m: u32, d: u32| stamp(WITH_YEAR, (Some(2025), Some(m), Some(d)), (h, 30, 0));
        assert_eq!(r.resolve(Some(&at(12, 7, 1))).unwrap(), Some(utc(2025, 7, 1, 10) + 30 * 60 * SECOND_US));
        assert_eq!(r.resolve(Some(&at(2, 3, 30))).unwrap(), None); // spring forward: no 02:30
        assert_eq!(r.resolve(Some(&at(2, 10, 26))).unwrap(), Some(utc(2025, 10, 26, 0) + 30 * 60 * SECOND_US));
        assert!(TimeResolver::new(&TimeOptions { zone: "Mars/Olympus".into(), ..TimeOptions::default() }).is_err());
    }

    #[test]
    fn iso_of_an_instant() {
        assert_eq!(iso_utc(utc(2026, 7, 28, 17)), "2026-07-28T17:00:00+00:00");
        assert_eq!(iso_utc(utc(2026, 7, 28, 17) + 137), "2026-07-28T17:00:00.000137+00:00");
    }
}
