//! Criterion benches of the core over real-shaped logs: one line parser over a log's lines, and the
//! whole ingest (read, parse, time, finish, Parquet) on one and on two threads.
//!
//! The grammar comes as the JSON spec Python builds (`make core-bench` writes
//! `target/bench/spec-<engine>.json`); the logs are the fixtures, or `LOGPARSE_BENCH_LOG` (with
//! `LOGPARSE_BENCH_ENGINE`) for a larger one, e.g. the corpus `make bench` generates.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::path::{Path, PathBuf};

use _core::block::parse_block;
use _core::compiled::Compiled;
use _core::ingest::{ingest, IngestOptions, NoHooks};
use _core::read::Source;
use _core::time::TimeOptions;
use _core::write::{Layout, ParquetSink, Shape, Sink, PART_ROW_GROUPS, ROW_GROUP_ROWS};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repository root").to_path_buf()
}

fn logs() -> Vec<(String, PathBuf)> {
    if let Ok(log) = std::env::var("LOGPARSE_BENCH_LOG") {
        let engine = std::env::var("LOGPARSE_BENCH_ENGINE").unwrap_or_else(|_| "sglang".into());
        return vec![(engine, PathBuf::from(log))];
    }
    ["vllm", "sglang"].iter().map(|e| (e.to_string(), root().join(format!("fixtures/{e}/gpustack-200k.log")))).collect()
}

fn grammar(engine: &str) -> Compiled {
    let path = root().join(format!("core/target/bench/spec-{engine}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{}: missing; run `make core-bench` (it writes the specs)", path.display()));
    Compiled::from_json(&text).expect("the spec compiles")
}

fn benches(c: &mut Criterion) {
    for (engine, log) in logs() {
        let compiled = grammar(&engine);
        let data = std::fs::read(&log).expect("the log");
        let name = log.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut group = c.benchmark_group(format!("{engine}/{name}"));
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.sample_size(10);
        group.bench_function("parse_block (one thread, no time, no writing)", |b| {
            let lines = data.iter().filter(|c| **c == b'\n').count();
            let block = _core::read::Block { first_line: 1, data: data.clone(), lines, cut: false };
            let mut parser = compiled.take_parser().expect("parser");
            b.iter(|| parse_block(&compiled, &mut parser, &block).expect("parsed"));
        });
        for workers in [1, 2] {
            group.bench_function(format!("ingest to Parquet, {workers} thread(s)"), |b| {
                b.iter_batched(
                    || tempfile::tempdir().expect("a folder"),
                    |dir| {
                        let mut source = Source::open(log.to_str().expect("path"), 4 << 20, 64 << 20).expect("open");
                        let options =
                            IngestOptions { time: TimeOptions { zone: "UTC".into(), ..Default::default() }, workers };
                        let schemas: std::collections::BTreeMap<_, _> =
                            compiled.kinds.iter().cloned().zip(compiled.schemas.iter().cloned()).collect();
                        let shape = Shape {
                            layout: Layout::Flat,
                            row_group_rows: ROW_GROUP_ROWS,
                            part_row_groups: PART_ROW_GROUPS,
                        };
                        let mut make = || -> _core::error::Result<Vec<Box<dyn Sink>>> {
                            Ok(vec![Box::new(ParquetSink::new(dir.path(), shape, schemas.clone()))])
                        };
                        ingest(&compiled, &mut source, &options, &mut make, &mut NoHooks).expect("ingested")
                    },
                    BatchSize::PerIteration,
                );
            });
        }
        group.finish();
    }
}

criterion_group!(core_benches, benches);
criterion_main!(core_benches);
