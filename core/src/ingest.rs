//! The one ingest: a log's blocks parsed on threads, `time` resolved in line order, the finished
//! tables handed to their sinks, and the facts kept on the way.
//!
//! Memory stays bounded whatever the log's size: a few blocks are in flight, tables go to their
//! sinks block by block. When the log itself says the first lines were misdated, the run starts
//! again from the first block (a [`Restart`]).

use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use crate::block::{parse_block, ParsedBlock, PARTIAL};
use crate::compiled::Compiled;
use crate::derive::finish_rows;
use crate::error::{Error, Result};
use crate::line::PARTIAL_RULE;
use crate::read::{Block, ReadStats, Source};
use crate::time::{Restart, TimeFacts, TimeOptions, TimeResolver};
use crate::write::Sink;

/// How often a log may be read again because its dates said so.
pub const MAX_RESTARTS: u32 = 3;

/// What the caller learns between blocks, and how it can stop the run.
pub trait Hooks {
    /// A block is done: `position` bytes of `size` read. An error stops the run.
    fn progress(&mut self, position: u64, size: Option<u64>) -> Result<()>;
}

/// No hooks.
pub struct NoHooks;

impl Hooks for NoHooks {
    fn progress(&mut self, _: u64, _: Option<u64>) -> Result<()> {
        Ok(())
    }
}

/// What reading a log learned (the tables are in the sinks).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Lines per kind.
    pub counts: BTreeMap<String, u64>,
    /// Lines per (kind, rule name; None: no rule).
    pub rule_counts: BTreeMap<(String, Option<String>), u64>,
    /// Lines per (stats rule, key no vocabulary knew).
    pub extra_keys: BTreeMap<(String, String), u64>,
    /// The kinds the sinks wrote.
    pub kinds: Vec<String>,
    /// What reading counted.
    pub stats: ReadStats,
    /// How the times were made.
    pub times: TimeFacts,
    /// How often the log was read again.
    pub restarts: u32,
    /// The earliest and latest `time` (UTC microseconds).
    pub span: Option<(i64, i64)>,
    /// Every rank printed.
    pub ranks: BTreeSet<String>,
    /// Where the time went: seconds per stage, summed over the threads that ran it.
    pub stages: Stages,
}

/// Seconds spent per stage of the pipeline (summed over threads; the last reading only).
#[derive(Debug, Clone, Default)]
pub struct Stages {
    /// Reading the input and cutting it into blocks (the calling thread).
    pub read_s: f64,
    /// Parsing blocks: envelopes, rules, values, columns (the parsing threads).
    pub parse_s: f64,
    /// Resolving `time`, adding the derived columns, handing tables to the sinks (the calling thread).
    pub finish_s: f64,
    /// Closing the sinks (the last row groups, the file footers).
    pub close_s: f64,
    /// The sinks' own threads: encoding and writing Parquet row groups.
    pub write_s: f64,
}

/// Time measured on several threads, added up.
#[derive(Default)]
struct Clock(AtomicU64);

impl Clock {
    fn add(&self, since: Instant) {
        self.0.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    fn seconds(&self) -> f64 {
        self.0.load(Ordering::Relaxed) as f64 / 1e9
    }
}

/// How to read a log.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// How the times are made.
    pub time: TimeOptions,
    /// Parsing threads (1: parse on the calling thread).
    pub workers: usize,
}

/// Counts gathered over one reading.
#[derive(Default)]
struct Tally {
    kinds: FxHashMap<usize, u64>,
    rules: FxHashMap<Option<usize>, u64>,
    extra: FxHashMap<(usize, String), u64>,
    ranks: FxHashSet<String>,
    invalid_utf8_lines: u64,
    nul_lines: u64,
    longest_line: u64,
    span: Option<(i64, i64)>,
    read: Clock,
    parse: Clock,
    finish: Clock,
}

enum Stop {
    Again(Restart),
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// Read `source` with `grammar` into the sinks `make_sinks` gives (new ones after a restart).
pub fn ingest(
    grammar: &Compiled,
    source: &mut Source,
    options: &IngestOptions,
    make_sinks: &mut dyn FnMut() -> Result<Vec<Box<dyn Sink>>>,
    hooks: &mut dyn Hooks,
) -> Result<Outcome> {
    let mut time = options.time.clone();
    for restarts in 0..=MAX_RESTARTS {
        let mut sinks = make_sinks()?;
        let mut resolver = TimeResolver::new(&time)?;
        let run = read_all(grammar, source, options.workers, &mut sinks, &mut resolver, hooks)
            .and_then(|tally| resolver.finish().map(|()| tally).map_err(Stop::Again));
        match run {
            Ok(tally) => {
                let closing = Instant::now();
                let mut kinds = BTreeSet::new();
                for sink in &mut sinks {
                    kinds.extend(sink.close()?);
                }
                source.finish();
                let times = resolver.facts().clone();
                let mut done = outcome(grammar, source, &tally, kinds.into_iter().collect(), times, restarts);
                done.stages = Stages {
                    read_s: tally.read.seconds(),
                    parse_s: tally.parse.seconds(),
                    finish_s: tally.finish.seconds(),
                    close_s: closing.elapsed().as_secs_f64(),
                    write_s: sinks.iter().map(|s| s.busy_seconds()).sum(),
                };
                return Ok(done);
            }
            Err(stop) => {
                for sink in &mut sinks {
                    sink.abort();
                }
                match stop {
                    Stop::Failed(e) => return Err(e),
                    Stop::Again(again) => {
                        if restarts == MAX_RESTARTS {
                            break;
                        }
                        time.known_year = again.year.or(time.known_year);
                        time.known_date = again.date.or(time.known_date);
                        source.restart()?;
                    }
                }
            }
        }
    }
    Err(Error::Input(format!(
        "{}: its dates contradict each other; pass --year",
        crate::text::for_terminal(&source.name)
    )))
}

fn outcome(
    grammar: &Compiled,
    source: &Source,
    tally: &Tally,
    kinds: Vec<String>,
    times: TimeFacts,
    restarts: u32,
) -> Outcome {
    let mut stats = source.stats.clone();
    stats.invalid_utf8_lines += tally.invalid_utf8_lines;
    stats.nul_lines += tally.nul_lines;
    stats.longest_line = stats.longest_line.max(tally.longest_line);
    let counts = tally.kinds.iter().map(|(k, n)| (grammar.kinds[*k].clone(), *n)).collect();
    let rule_counts = tally
        .rules
        .iter()
        .map(|(rule, n)| {
            let key = match rule {
                Some(PARTIAL) => (grammar.kinds[grammar.unparsed].clone(), Some(PARTIAL_RULE.to_string())),
                Some(i) => (grammar.kinds[grammar.rule_kind[*i]].clone(), Some(grammar.rule_names[*i].clone())),
                None => (grammar.kinds[grammar.unparsed].clone(), None),
            };
            (key, *n)
        })
        .collect();
    let extra_keys =
        tally.extra.iter().map(|((rule, key), n)| ((grammar.rule_names[*rule].clone(), key.clone()), *n)).collect();
    Outcome {
        counts,
        rule_counts,
        extra_keys,
        kinds,
        stats,
        times,
        restarts,
        span: tally.span,
        ranks: tally.ranks.iter().cloned().collect(),
        stages: Stages::default(),
    }
}

/// One reading of the source, start to end.
fn read_all(
    grammar: &Compiled,
    source: &mut Source,
    workers: usize,
    sinks: &mut [Box<dyn Sink>],
    resolver: &mut TimeResolver,
    hooks: &mut dyn Hooks,
) -> std::result::Result<Tally, Stop> {
    let mut tally = Tally::default();
    let mut settled = false;
    let mut finish = |parsed: ParsedBlock, source: &mut Source, tally: &mut Tally| -> std::result::Result<(), Stop> {
        let started = Instant::now();
        finish_block(grammar, parsed, sinks, resolver, tally)?;
        tally.finish.add(started);
        if !settled && resolver.settled() {
            settled = true;
            source.stop_spooling();
            for sink in sinks.iter_mut() {
                sink.settle()?;
            }
        }
        hooks.progress(source.position(), source.size)?;
        Ok(())
    };
    if workers <= 1 {
        let mut parser = grammar.take_parser()?;
        let result = (|| {
            loop {
                let started = Instant::now();
                let Some(block) = source.next_block()? else { break };
                tally.read.add(started);
                let started = Instant::now();
                let parsed = parse_block(grammar, &mut parser, &block)?;
                tally.parse.add(started);
                finish(parsed, source, &mut tally)?;
            }
            Ok(())
        })();
        grammar.give_back(parser);
        return result.map(|()| tally);
    }
    let parse_clock = Arc::new(Clock::default());
    std::thread::scope(|scope| {
        let (job_tx, job_rx) = mpsc::sync_channel::<(u64, Block)>(workers);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = mpsc::channel::<(u64, Result<ParsedBlock>)>();
        for n in 0..workers {
            let job_rx = job_rx.clone();
            let done_tx = done_tx.clone();
            let clock = parse_clock.clone();
            std::thread::Builder::new()
                .name(format!("logparse-block-{n}"))
                .spawn_scoped(scope, move || {
                    let mut parser = match grammar.take_parser() {
                        Ok(p) => p,
                        Err(e) => {
                            let _ = done_tx.send((u64::MAX, Err(e)));
                            return;
                        }
                    };
                    loop {
                        let job = job_rx.lock().expect("job queue").recv();
                        let Ok((seq, block)) = job else { break };
                        let started = Instant::now();
                        let parsed = parse_block(grammar, &mut parser, &block);
                        clock.add(started);
                        if done_tx.send((seq, parsed)).is_err() {
                            break;
                        }
                    }
                    grammar.give_back(parser);
                })
                .expect("spawn a parsing thread");
        }
        drop(done_tx);
        let result = (|| -> std::result::Result<(), Stop> {
            let (mut sent, mut next) = (0u64, 0u64);
            let mut ended = false;
            let mut waiting: BTreeMap<u64, ParsedBlock> = BTreeMap::new();
            loop {
                while !ended && sent - next < 2 * workers as u64 {
                    let started = Instant::now();
                    let block = source.next_block()?;
                    tally.read.add(started);
                    match block {
                        Some(block) => {
                            job_tx
                                .send((sent, block))
                                .map_err(|_| Error::Callback("a parsing thread stopped".into()))?;
                            sent += 1;
                        }
                        None => ended = true,
                    }
                }
                if ended && next == sent {
                    return Ok(());
                }
                let (seq, parsed) = done_rx.recv().map_err(|_| Error::Callback("a parsing thread stopped".into()))?;
                waiting.insert(seq, parsed?);
                while let Some(parsed) = waiting.remove(&next) {
                    finish(parsed, source, &mut tally)?;
                    next += 1;
                }
            }
        })();
        drop(job_tx);
        result
    })?;
    tally.parse.0.store(parse_clock.0.load(Ordering::Relaxed), Ordering::Relaxed);
    Ok(tally)
}

/// A parsed block, in line order: `time` resolved, tables finished and handed to the sinks.
fn finish_block(
    grammar: &Compiled,
    parsed: ParsedBlock,
    sinks: &mut [Box<dyn Sink>],
    resolver: &mut TimeResolver,
    tally: &mut Tally,
) -> std::result::Result<(), Stop> {
    let mut times = Vec::with_capacity(parsed.stamps.len());
    for stamp in &parsed.stamps {
        let time = resolver.resolve(stamp.as_ref()).map_err(Stop::Again)?;
        if let Some(t) = time {
            tally.span = Some(match tally.span {
                None => (t, t),
                Some((lo, hi)) => (lo.min(t), hi.max(t)),
            });
        }
        times.push(time);
    }
    for rows in parsed.tables {
        let kind = rows.kind;
        *tally.kinds.entry(kind).or_insert(0) += rows.batch.num_rows() as u64;
        let column: Vec<Option<i64>> = rows.offsets.iter().map(|o| times[*o as usize]).collect();
        let Some((last, rest)) = sinks.split_last_mut() else { continue }; // counting only
        let batch =
            finish_rows(&rows.batch, column, grammar.ts_column[kind], &grammar.derived[kind], &grammar.schemas[kind])?;
        for sink in rest {
            sink.add(&grammar.kinds[kind], batch.clone())?;
        }
        last.add(&grammar.kinds[kind], batch)?;
    }
    for sink in sinks.iter_mut() {
        sink.end_block()?;
    }
    for (rule, n) in parsed.rule_lines {
        *tally.rules.entry(rule).or_insert(0) += n;
    }
    for (key, n) in parsed.extra_keys {
        *tally.extra.entry(key).or_insert(0) += n;
    }
    tally.ranks.extend(parsed.ranks);
    tally.invalid_utf8_lines += parsed.invalid_utf8_lines;
    tally.nul_lines += parsed.nul_lines;
    tally.longest_line = tally.longest_line.max(parsed.longest_line);
    Ok(())
}
