#![warn(missing_docs)]
//! The compiled ingest core of logparse: a log's bytes into typed Arrow tables and Parquet files,
//! from the grammar it is given as data (`logparse/patterns/*.toml`, sent as JSON by
//! `logparse.engine.spec`).
//!
//! The spine: [`read`] cuts the input into blocks of lines; [`line`] reads each line (envelope,
//! rule, fields) and [`block`] fills one table per kind; [`ingest`] runs blocks on threads and,
//! in line order, resolves `time` ([`time`]), finishes the tables ([`derive`]) and hands them to
//! their sinks ([`write`]: Parquet or memory).

pub mod block;
pub(crate) mod columns;
pub mod compiled;
pub(crate) mod container;
pub(crate) mod derive;
pub(crate) mod envelope;
pub mod error;
pub(crate) mod firstbyte;
pub mod ingest;
#[cfg(feature = "python")]
pub(crate) mod jsonl;
pub mod line;
pub(crate) mod needles;
pub mod read;
pub(crate) mod regexes;
pub(crate) mod rules;
pub(crate) mod spec;
pub(crate) mod stamps;
pub(crate) mod stats;
pub(crate) mod text;
pub mod time;
pub mod values;
pub mod write;

#[cfg(feature = "python")]
mod py;
