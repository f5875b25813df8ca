//! The compiled ingest core of logparse: blocks of log lines into typed Arrow columns, exactly as
//! the reference parser (`logparse.parse`) reads them, from the grammar it is given as data.

pub mod block;
pub mod columns;
pub mod container;
pub mod envelope;
pub mod firstbyte;
pub mod line;
pub mod needles;
pub mod regexes;
pub mod rules;
pub mod spec;
pub mod stamps;
pub mod stats;
pub mod text;
pub mod values;

#[cfg(feature = "python")]
mod py;
