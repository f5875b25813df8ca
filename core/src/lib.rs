//! The compiled ingest core of logparse: a log's bytes into typed Arrow tables and Parquet files,
//! from the grammar it is given as data (`logparse/patterns/*.toml`, sent as JSON by
//! `logparse.engine.spec`).
//!
//! The spine: [`read`] cuts the input into blocks of lines; [`line`] reads each line (envelope,
//! rule, fields) and [`block`] fills one table per kind; [`ingest`] runs blocks on threads and,
//! in line order, resolves `time` ([`time`]), finishes the tables ([`derive`]) and hands them to
//! their sinks ([`write`]: Parquet or memory).

pub mod block;
pub mod columns;
pub mod compiled;
pub mod container;
pub mod derive;
pub mod envelope;
pub mod error;
pub mod firstbyte;
pub mod ingest;
pub mod jsonl;
pub mod line;
pub mod needles;
pub mod read;
pub mod regexes;
pub mod rules;
pub mod spec;
pub mod stamps;
pub mod stats;
pub mod text;
pub mod time;
pub mod values;
pub mod write;

#[cfg(feature = "python")]
mod py;
