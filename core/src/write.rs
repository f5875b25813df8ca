//! Where finished tables go: Parquet files (one per kind, written a row group at a time on a
//! background thread), or memory.
//!
//! Layouts: a log's folder `DIR/<kind>.parquet`; a dataset's run
//! `DIR/kind=<kind>/part-NNNNN.parquet` (a new part every [`PART_ROW_GROUPS`] row groups: a
//! Parquet writer keeps every row group's metadata until its file is closed). Each column's
//! `description` and `unit` are in its field metadata, which DuckDB, polars and pyarrow read past.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::error::{Error, Result};

/// Rows per Parquet row group, unless told otherwise.
pub const ROW_GROUP_ROWS: usize = 100_000;
/// Row groups per file in the dataset layout, unless told otherwise.
pub const PART_ROW_GROUPS: usize = 32;

/// How the Parquet files are cut.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// The folder's layout.
    pub layout: Layout,
    /// Rows per row group.
    pub row_group_rows: usize,
    /// Row groups per file (the dataset layout).
    pub part_row_groups: usize,
}
/// zstd level 1: chosen by measurement (see `reports/bench.md`).
pub const ZSTD_LEVEL: i32 = 1;

/// Where finished tables go, block by block, then `close` (or `abort`: nothing is left behind).
pub trait Sink: Send {
    /// Take a kind's rows of one block.
    fn add(&mut self, kind: &str, batch: RecordBatch) -> Result<()>;
    /// A block is done.
    fn end_block(&mut self) -> Result<()> {
        Ok(())
    }
    /// The dates can no longer change (no restart can come).
    fn settle(&mut self) -> Result<()> {
        Ok(())
    }
    /// Finish every table; the kinds written.
    fn close(&mut self) -> Result<Vec<String>>;
    /// Drop everything written (a restart, an error).
    fn abort(&mut self);
    /// Seconds this sink's own threads spent working (encoding, writing), for the stage profile.
    fn busy_seconds(&self) -> f64 {
        0.0
    }
}

/// How a folder holds its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `DIR/<kind>.parquet`
    Flat,
    /// `DIR/kind=<kind>/part-NNNNN.parquet`
    Hive,
}

/// The name of a table's `index`-th file in the dataset layout.
pub fn part_file(index: usize) -> String {
    format!("part-{index:05}.parquet")
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write { path: path.to_path_buf(), source }
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
            Ok(io) => write_error(path, *io),
            Err(other) => write_error(path, std::io::Error::other(other.to_string())),
        },
        other => write_error(path, std::io::Error::other(other.to_string())),
    }
}

/// One kind's Parquet files.
struct KindWriter {
    folder: PathBuf,
    name: PathBuf, // the flat layout's file name, or the hive layout's kind folder
    shape: Shape,
    schema: SchemaRef,
    paths: Vec<PathBuf>,
    writer: Option<ArrowWriter<BufWriter<File>>>,
    rows_in_group: usize,
    groups_in_file: usize,
}

impl KindWriter {
    fn new(folder: &Path, kind: &str, shape: Shape, schema: SchemaRef) -> KindWriter {
        let name = match shape.layout {
            Layout::Flat => PathBuf::from(format!("{kind}.parquet")),
            Layout::Hive => PathBuf::from(format!("kind={kind}")),
        };
        KindWriter {
            folder: folder.to_path_buf(),
            name,
            shape,
            schema,
            paths: Vec::new(),
            writer: None,
            rows_in_group: 0,
            groups_in_file: 0,
        }
    }

    fn open(&mut self) -> Result<()> {
        let path = match self.shape.layout {
            Layout::Flat => {
                std::fs::create_dir_all(&self.folder).map_err(|e| write_error(&self.folder, e))?;
                self.folder.join(&self.name)
            }
            Layout::Hive => {
                let dir = self.folder.join(&self.name);
                std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
                dir.join(part_file(self.paths.len()))
            }
        };
        let file = File::create(&path).map_err(|e| write_error(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL).expect("zstd level")))
            .set_max_row_group_row_count(Some(self.shape.row_group_rows))
            .build();
        let writer = ArrowWriter::try_new(BufWriter::with_capacity(1 << 20, file), self.schema.clone(), Some(props))
            .map_err(|e| parquet_error(&path, e))?;
        self.paths.push(path);
        self.writer = Some(writer);
        self.groups_in_file = 0;
        Ok(())
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut offset = 0;
        while offset < batch.num_rows() {
            if self.writer.is_none() {
                self.open()?;
            }
            let room = self.shape.row_group_rows - self.rows_in_group;
            let take = room.min(batch.num_rows() - offset);
            let path = self.paths.last().cloned().unwrap_or_default();
            let writer = self.writer.as_mut().expect("open writer");
            writer.write(&batch.slice(offset, take)).map_err(|e| parquet_error(&path, e))?;
            offset += take;
            self.rows_in_group += take;
            if self.rows_in_group == self.shape.row_group_rows {
                writer.flush().map_err(|e| parquet_error(&path, e))?;
                self.rows_in_group = 0;
                self.groups_in_file += 1;
                if self.shape.layout == Layout::Hive && self.groups_in_file >= self.shape.part_row_groups {
                    self.close_file()?;
                }
            }
        }
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some(writer) = self.writer.take() {
            let path = self.paths.last().cloned().unwrap_or_default();
            let inner = writer.into_inner().map_err(|e| parquet_error(&path, e))?;
            let file = inner.into_inner().map_err(|e| write_error(&path, e.into_error()))?;
            file.sync_data().ok();
        }
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        if self.paths.is_empty() {
            self.open()?;
        }
        self.close_file()
    }

    fn abort(&mut self) {
        self.writer = None;
        for path in &self.paths {
            let _ = std::fs::remove_file(path);
        }
        if self.shape.layout == Layout::Hive {
            let _ = std::fs::remove_dir(self.folder.join(&self.name));
        }
        self.paths.clear();
    }
}

enum Message {
    Rows(String, SchemaRef, RecordBatch),
    Close(mpsc::Sender<Result<Vec<String>>>),
    Abort(mpsc::Sender<()>),
}

/// Every kind's Parquet table of one log in a folder; row groups are encoded on a background
/// thread, so writing overlaps with parsing.
pub struct ParquetSink {
    schemas: BTreeMap<String, SchemaRef>,
    to_writer: Option<mpsc::SyncSender<Message>>,
    thread: Option<JoinHandle<()>>,
    failed: std::sync::Arc<std::sync::Mutex<Option<Error>>>,
    busy: std::sync::Arc<std::sync::atomic::AtomicU64>, // nanoseconds the writer thread worked
}

impl ParquetSink {
    /// A sink writing into `folder` cut as `shape`; `schemas` gives each kind's finished schema.
    pub fn new(folder: &Path, shape: Shape, schemas: BTreeMap<String, SchemaRef>) -> ParquetSink {
        let (tx, rx) = mpsc::sync_channel::<Message>(4);
        let failed = std::sync::Arc::new(std::sync::Mutex::new(None));
        let folder = folder.to_path_buf();
        let shared = failed.clone();
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let working = busy.clone();
        let thread = std::thread::Builder::new()
            .name("logparse-parquet".into())
            .spawn(move || {
                let mut writers: BTreeMap<String, KindWriter> = BTreeMap::new();
                let mut error: Option<Error> = None;
                for message in rx {
                    match message {
                        Message::Rows(kind, schema, batch) => {
                            if error.is_some() {
                                continue;
                            }
                            let started = std::time::Instant::now();
                            let writer = writers
                                .entry(kind.clone())
                                .or_insert_with(|| KindWriter::new(&folder, &kind, shape, schema));
                            if let Err(e) = writer.write(&batch) {
                                *shared.lock().expect("writer error") = Some(clone_error(&e));
                                error = Some(e);
                            }
                            let spent = started.elapsed().as_nanos() as u64;
                            working.fetch_add(spent, std::sync::atomic::Ordering::Relaxed);
                        }
                        Message::Close(reply) => {
                            let result = match error.take() {
                                Some(e) => Err(e),
                                None => writers
                                    .values_mut()
                                    .try_for_each(KindWriter::close)
                                    .map(|()| writers.keys().cloned().collect()),
                            };
                            if result.is_err() {
                                writers.values_mut().for_each(KindWriter::abort);
                            }
                            let _ = reply.send(result);
                            return;
                        }
                        Message::Abort(reply) => {
                            writers.values_mut().for_each(KindWriter::abort);
                            let _ = reply.send(());
                            return;
                        }
                    }
                }
                writers.values_mut().for_each(KindWriter::abort);
            })
            .expect("spawn the parquet writer");
        ParquetSink { schemas, to_writer: Some(tx), thread: Some(thread), failed, busy }
    }

    fn stop(&mut self) {
        self.to_writer = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn clone_error(e: &Error) -> Error {
    match e {
        Error::Write { path, source } => Error::Write {
            path: path.clone(),
            source: match source.raw_os_error() {
                Some(code) => std::io::Error::from_raw_os_error(code),
                None => std::io::Error::new(source.kind(), source.to_string()),
            },
        },
        other => Error::Grammar(other.to_string()),
    }
}

impl Sink for ParquetSink {
    fn add(&mut self, kind: &str, batch: RecordBatch) -> Result<()> {
        if let Some(e) = self.failed.lock().expect("writer error").take() {
            return Err(e);
        }
        let schema = self.schemas.get(kind).cloned().unwrap_or_else(|| batch.schema());
        let tx = self.to_writer.as_ref().ok_or(Error::Cancelled)?;
        tx.send(Message::Rows(kind.to_string(), schema, batch))
            .map_err(|_| Error::Callback("the parquet writer stopped".into()))
    }

    fn close(&mut self) -> Result<Vec<String>> {
        let (reply, answer) = mpsc::channel();
        let tx = self.to_writer.take().ok_or(Error::Cancelled)?;
        tx.send(Message::Close(reply)).map_err(|_| Error::Callback("the parquet writer stopped".into()))?;
        let result = answer.recv().unwrap_or_else(|_| Err(Error::Callback("the parquet writer stopped".into())));
        self.stop();
        result
    }

    fn busy_seconds(&self) -> f64 {
        self.busy.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9
    }

    fn abort(&mut self) {
        if let Some(tx) = self.to_writer.take() {
            let (reply, answer) = mpsc::channel();
            if tx.send(Message::Abort(reply)).is_ok() {
                let _ = answer.recv();
            }
        }
        self.stop();
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        if self.to_writer.is_some() {
            self.abort();
        }
    }
}

/// Keeps every batch, per kind, in line order.
#[derive(Default)]
pub struct MemorySink {
    /// The batches per kind.
    pub tables: BTreeMap<String, Vec<RecordBatch>>,
}

impl Sink for MemorySink {
    fn add(&mut self, kind: &str, batch: RecordBatch) -> Result<()> {
        self.tables.entry(kind.to_string()).or_default().push(batch);
        Ok(())
    }

    fn close(&mut self) -> Result<Vec<String>> {
        Ok(self.tables.keys().cloned().collect())
    }

    fn abort(&mut self) {
        self.tables.clear();
    }
}
