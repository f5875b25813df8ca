//! The Python module `logparse._core`: a compiled grammar ([`Core`]) reads a log ([`Reader`]) into
//! Parquet files or Arrow batches in one call, the GIL released while it works.

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyList};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::compiled::Compiled;
use crate::error::Error;
use crate::ingest::{ingest, Hooks, IngestOptions, Outcome};
use crate::jsonl::JsonlSink;
use crate::read::{block_lines, ByteSource, ReadStats, Source};
use crate::time::{Date, TimeFacts, TimeOptions};
use crate::write::{Layout, MemorySink, ParquetSink, Shape, Sink, PART_ROW_GROUPS, ROW_GROUP_ROWS};

/// An Arrow record batch handed to Python through the Arrow PyCapsule interface.
#[pyclass(module = "logparse._core", frozen)]
struct ArrowBatch {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowBatch {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let array = StructArray::from(self.batch.clone());
        let data = array.into_data();
        let schema = FFI_ArrowSchema::try_from(data.data_type()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let ffi_array = FFI_ArrowArray::new(&data);
        let schema_capsule = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array_capsule = PyCapsule::new_with_value(py, ffi_array, c"arrow_array")?;
        Ok((schema_capsule, array_capsule))
    }

    /// Rows in the batch.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// The Python error class of `logparse.errors` named `name`.
fn logparse_error(py: Python<'_>, name: &str, message: String) -> PyErr {
    match py.import("logparse.errors").and_then(|m| m.getattr(name)) {
        Ok(class) => match class.call1((message.clone(),)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        },
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// The Python exception for a core error (a callback's own exception is re-raised as it was).
fn to_py(py: Python<'_>, e: Error, raised: &RefCell<Option<PyErr>>) -> PyErr {
    if let Some(err) = raised.borrow_mut().take() {
        return err;
    }
    match e {
        Error::Grammar(m) => logparse_error(py, "PatternError", m),
        Error::Input(m) => logparse_error(py, "InputError", m),
        Error::Read { path, source } | Error::Write { path, source } => {
            let text = crate::read::os_text(&source);
            match source.raw_os_error() {
                Some(code) => PyOSError::new_err((code, text, path.display().to_string())),
                None => PyOSError::new_err((text, path.display().to_string())),
            }
        }
        Error::Cancelled => logparse_error(py, "LogparseError", "stopped before the end of the log".into()),
        Error::Callback(m) => PyRuntimeError::new_err(m),
    }
}

/// A Python binary stream (anything with `read1(n)` or `read(n)`), read a block at a time. A stream
/// may return more than it was asked for (a `read(n)` that ignores `n`): the rest is kept and given
/// first on the next read, so that no byte is lost.
struct PyStream {
    stream: Py<PyAny>,
    method: &'static str,
    // what a read handed over beyond the bytes asked for (a stream need not keep to `n`)
    left: Vec<u8>,
    at: usize,
}

impl PyStream {
    fn new(stream: Py<PyAny>, method: &'static str) -> PyStream {
        PyStream { stream, method, left: Vec::new(), at: 0 }
    }
}

impl ByteSource for PyStream {
    fn read_into(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at < self.left.len() {
            let n = buf.len().min(self.left.len() - self.at);
            buf[..n].copy_from_slice(&self.left[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        Python::attach(|py| {
            let chunk = self
                .stream
                .call_method1(py, self.method, (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let bytes = chunk.bind(py).cast::<PyBytes>().map_err(|e| std::io::Error::other(e.to_string()))?;
            let data = bytes.as_bytes();
            let n = data.len().min(buf.len());
            buf[..n].copy_from_slice(&data[..n]);
            if data.len() > n {
                self.left = data[n..].to_vec();
                self.at = 0;
            }
            Ok(n)
        })
    }
}

/// A log opened for reading: its head can be read for detection, then [`Core::ingest`] reads it.
#[pyclass(module = "logparse._core")]
struct Reader {
    source: Mutex<Source>,
}

#[pymethods]
impl Reader {
    /// Open `path` (`-`: standard input); `block_bytes` per read, lines cut at `max_line` bytes.
    #[new]
    fn new(py: Python<'_>, path: &str, block_bytes: usize, max_line: usize) -> PyResult<Reader> {
        let raised = RefCell::new(None);
        let source = Source::open(path, block_bytes, max_line).map_err(|e| to_py(py, e, &raised))?;
        Ok(Reader { source: Mutex::new(source) })
    }

    /// Read from a Python binary stream named `name` (`size` bytes, when known). `spool=False`:
    /// the stream is read once and never again (a log followed live: nothing is kept aside, so a
    /// run that would need to read it again fails instead of growing a spool without end).
    #[staticmethod]
    #[pyo3(signature = (stream, name, block_bytes, max_line, size=None, spool=true))]
    fn from_stream(
        stream: Bound<'_, PyAny>,
        name: &str,
        block_bytes: usize,
        max_line: usize,
        size: Option<u64>,
        spool: bool,
    ) -> PyResult<Reader> {
        let method = if stream.hasattr("read1")? { "read1" } else { "read" };
        let input = PyStream::new(stream.unbind(), method);
        let mut source = Source::stream(name, Box::new(input), size, block_bytes, max_line);
        if !spool {
            source.stop_spooling();
        }
        Ok(Reader { source: Mutex::new(source) })
    }

    /// How the input is named in messages.
    #[getter]
    fn name(&self) -> String {
        self.source.lock().expect("reader").name.clone()
    }

    /// The input's size in bytes, when known.
    #[getter]
    fn size(&self) -> Option<u64> {
        self.source.lock().expect("reader").size
    }

    /// The first `wanted` non-blank lines, decoded (kept for the ingest).
    fn head(&self, py: Python<'_>, wanted: usize) -> PyResult<Vec<String>> {
        let raised = RefCell::new(None);
        let mut guard = self.source.lock().expect("reader");
        let source: &mut Source = &mut guard;
        py.detach(|| source.head(wanted)).map_err(|e| to_py(py, e, &raised))
    }

    /// The next block's lines as (number of its first line, texts), None at the end.
    fn next_lines(&self, py: Python<'_>) -> PyResult<Option<(i64, Vec<String>)>> {
        let raised = RefCell::new(None);
        let mut guard = self.source.lock().expect("reader");
        let source: &mut Source = &mut guard;
        let block = py.detach(|| source.next_block()).map_err(|e| to_py(py, e, &raised))?;
        let Some(block) = block else {
            source.finish();
            return Ok(None);
        };
        crate::read::count_lines(&block, &mut source.stats);
        Ok(Some((block.first_line, block_lines(&block))))
    }

    /// What reading counted so far.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        read_stats(py, &self.source.lock().expect("reader").stats)
    }
}

fn read_stats<'py>(py: Python<'py>, s: &ReadStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bytes_read", s.bytes_read)?;
    d.set_item("lines", s.lines)?;
    d.set_item("invalid_utf8_lines", s.invalid_utf8_lines)?;
    d.set_item("nul_lines", s.nul_lines)?;
    d.set_item("longest_line", s.longest_line)?;
    d.set_item("truncated_last_line", s.truncated_last_line)?;
    d.set_item("notes", s.notes.clone())?;
    d.set_item("long_lines", s.long_lines)?;
    d.set_item("long_line_bytes_skipped", s.long_line_bytes_skipped)?;
    Ok(d)
}

fn time_facts<'py>(py: Python<'py>, t: &TimeFacts) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("zone", &t.zone)?;
    d.set_item("zone_assumed", t.zone_assumed)?;
    d.set_item("exact", t.exact)?;
    d.set_item("naive", t.naive)?;
    d.set_item("year_inferred", t.year_inferred)?;
    d.set_item("date_inferred", t.date_inferred)?;
    d.set_item("inferred_from", t.inferred_from)?;
    d.set_item("anchor", &t.anchor)?;
    d.set_item("rollovers", t.rollovers)?;
    Ok(d)
}

/// A Python object with the sink methods (`add(kind, batch)`, `end_block()`, `settle()`,
/// `close()`, `abort()`), called a block at a time.
struct PySink {
    sink: Py<PyAny>,
    raised: std::sync::Arc<Mutex<Option<PyErr>>>,
}

impl PySink {
    fn call(
        &self,
        name: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    ) -> crate::error::Result<Py<PyAny>> {
        Python::attach(|py| {
            let result = args(py).and_then(|a| self.sink.call_method1(py, name, a));
            result.map_err(|e| {
                let text = e.to_string();
                *self.raised.lock().expect("raised") = Some(e);
                Error::Callback(text)
            })
        })
    }
}

impl Sink for PySink {
    fn add(&mut self, kind: &str, batch: RecordBatch) -> crate::error::Result<()> {
        let kind = kind.to_string();
        self.call("add", move |py| {
            let batch = Py::new(py, ArrowBatch { batch })?;
            pyo3::types::PyTuple::new(py, [kind.into_pyobject(py)?.into_any(), batch.into_bound(py).into_any()])
        })
        .map(|_| ())
    }

    fn end_block(&mut self) -> crate::error::Result<()> {
        self.call("end_block", |py| Ok(pyo3::types::PyTuple::empty(py))).map(|_| ())
    }

    fn settle(&mut self) -> crate::error::Result<()> {
        if Python::attach(|py| self.sink.bind(py).hasattr("settle").unwrap_or(false)) {
            self.call("settle", |py| Ok(pyo3::types::PyTuple::empty(py))).map(|_| ())
        } else {
            Ok(())
        }
    }

    fn close(&mut self) -> crate::error::Result<Vec<String>> {
        let out = self.call("close", |py| Ok(pyo3::types::PyTuple::empty(py)))?;
        Python::attach(|py| out.extract::<Vec<String>>(py)).map_err(|e| Error::Callback(e.to_string()))
    }

    fn abort(&mut self) {
        let _ = self.call("abort", |py| Ok(pyo3::types::PyTuple::empty(py)));
    }
}

/// Progress and cancellation through Python callables.
struct PyHooks {
    progress: Option<Py<PyAny>>,
    cancel: Option<Py<PyAny>>,
    raised: std::sync::Arc<Mutex<Option<PyErr>>>,
}

impl Hooks for PyHooks {
    fn progress(&mut self, position: u64, size: Option<u64>) -> crate::error::Result<()> {
        Python::attach(|py| {
            let stopped = |e: PyErr| {
                *self.raised.lock().expect("raised") = Some(e);
                Error::Cancelled
            };
            py.check_signals().map_err(stopped)?;
            if let Some(cancel) = &self.cancel {
                if cancel.call_method0(py, "is_set").and_then(|v| v.extract::<bool>(py)).map_err(stopped)? {
                    return Err(Error::Cancelled);
                }
            }
            if let Some(progress) = &self.progress {
                progress.call1(py, (position, size)).map_err(stopped)?;
            }
            Ok(())
        })
    }
}

/// One engine's compiled grammar.
#[pyclass(module = "logparse._core", frozen)]
struct Core {
    compiled: Compiled,
}

fn get<'py, T: FromPyObjectOwned<'py>>(options: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match options.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract::<T>().map_err(Into::into)?)),
        _ => Ok(None),
    }
}

fn date_of(text: Option<String>) -> PyResult<Option<Date>> {
    let Some(text) = text else { return Ok(None) };
    let parts: Vec<&str> = text.split('-').collect();
    let bad = || PyValueError::new_err(format!("not a date: {text}"));
    let [y, m, d] = parts[..] else { return Err(bad()) };
    Ok(Some(Date {
        year: y.parse().map_err(|_| bad())?,
        month: m.parse().map_err(|_| bad())?,
        day: d.parse().map_err(|_| bad())?,
    }))
}

#[pymethods]
impl Core {
    /// Compile a grammar spec (JSON, `logparse.engine.spec`).
    #[new]
    fn new(py: Python<'_>, spec_json: &str) -> PyResult<Core> {
        let raised = RefCell::new(None);
        let compiled = Compiled::from_json(spec_json).map_err(|e| to_py(py, e, &raised))?;
        Ok(Core { compiled })
    }

    /// Read `reader` to its end into tables, the GIL released.
    ///
    /// `options`: `zone` (IANA name), `year`, `mtime_us`, `today` (ISO date), `workers`,
    /// `row_group_rows`, `part_row_groups`, `known_year` (the year of year-less stamps before the
    /// log's first full date, taken as known: no full date met later makes the log be read again).
    /// `folder` and `layout` (`flat` / `hive`) write Parquet; without a folder the tables are
    /// returned in memory (`tables`: kind -> list of batches). `sink` is a Python object that gets
    /// every batch too (`add`, `end_block`, `settle`, `close`, `abort`); `memory=False` with a sink
    /// keeps nothing. `jsonl` is a text stream that gets every event as a JSON line (one `write` per
    /// block). `progress(position, size)` is called after each block and `cancel.is_set()` stops
    /// the run.
    #[pyo3(signature = (reader, options, *, folder=None, layout="flat", memory=true, sink=None, jsonl=None, progress=None, cancel=None))]
    #[allow(clippy::too_many_arguments)]
    fn ingest<'py>(
        &self,
        py: Python<'py>,
        reader: &Reader,
        options: &Bound<'py, PyDict>,
        folder: Option<PathBuf>,
        layout: &str,
        memory: bool,
        sink: Option<Py<PyAny>>,
        jsonl: Option<Py<PyAny>>,
        progress: Option<Py<PyAny>>,
        cancel: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let time = TimeOptions {
            year: get(options, "year")?,
            mtime_us: get(options, "mtime_us")?,
            zone: get::<String>(options, "zone")?.unwrap_or_else(|| "UTC".into()),
            today: date_of(get(options, "today")?)?,
            known_year: get(options, "known_year")?,
            known_date: None,
        };
        let workers: usize = get(options, "workers")?.unwrap_or(1);
        let layout = match layout {
            "flat" => Layout::Flat,
            "hive" => Layout::Hive,
            other => return Err(PyValueError::new_err(format!("unknown layout {other:?}"))),
        };
        let shape = Shape {
            layout,
            row_group_rows: get(options, "row_group_rows")?.unwrap_or(ROW_GROUP_ROWS).max(1),
            part_row_groups: get(options, "part_row_groups")?.unwrap_or(PART_ROW_GROUPS).max(1),
        };
        let raised = std::sync::Arc::new(Mutex::new(None));
        let schemas: BTreeMap<String, _> =
            self.compiled.kinds.iter().cloned().zip(self.compiled.schemas.iter().cloned()).collect();
        let memory_tables: Shared<Tables> = Default::default();
        let mut hooks = PyHooks { progress, cancel, raised: raised.clone() };
        let options = IngestOptions { time, workers };
        let mut guard = reader.source.lock().expect("reader");
        let source: &mut Source = &mut guard;
        let result: crate::error::Result<Outcome> = py.detach(|| {
            let keep = memory_tables.clone();
            let mut make = || -> crate::error::Result<Vec<Box<dyn Sink>>> {
                let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
                if let Some(s) = &sink {
                    let s = Python::attach(|py| s.clone_ref(py));
                    sinks.push(Box::new(PySink { sink: s, raised: raised.clone() }));
                }
                if let Some(stream) = &jsonl {
                    let stream = Python::attach(|py| stream.clone_ref(py));
                    let raised = raised.clone();
                    let write = move |text: &str| -> crate::error::Result<()> {
                        Python::attach(|py| stream.call_method1(py, "write", (text,)).map(|_| ())).map_err(|e| {
                            let shown = e.to_string();
                            *raised.lock().expect("raised") = Some(e);
                            Error::Callback(shown)
                        })
                    };
                    sinks.push(Box::new(JsonlSink::new(Box::new(write))));
                }
                match &folder {
                    Some(folder) => sinks.push(Box::new(ParquetSink::new(folder, shape, schemas.clone()))),
                    None if memory => sinks.push(Box::new(Keeper { inner: MemorySink::default(), out: keep.clone() })),
                    None => {}
                }
                Ok(sinks)
            };
            ingest(&self.compiled, source, &options, &mut make, &mut hooks)
        });
        let pending = raised.lock().expect("raised").take();
        let outcome = result.map_err(|e| to_py(py, e, &RefCell::new(pending)))?;
        let d = PyDict::new(py);
        d.set_item("counts", outcome.counts.clone())?;
        let rules = PyList::empty(py);
        for ((kind, rule), n) in &outcome.rule_counts {
            rules.append((kind, rule, n))?;
        }
        d.set_item("rule_counts", rules)?;
        let extra = PyList::empty(py);
        for ((rule, key), n) in &outcome.extra_keys {
            extra.append((rule, key, n))?;
        }
        d.set_item("extra_keys", extra)?;
        d.set_item("kinds", outcome.kinds.clone())?;
        d.set_item("stats", read_stats(py, &outcome.stats)?)?;
        d.set_item("times", time_facts(py, &outcome.times)?)?;
        d.set_item("restarts", outcome.restarts)?;
        d.set_item("span", outcome.span)?;
        d.set_item("ranks", outcome.ranks.iter().cloned().collect::<Vec<_>>())?;
        let stages = PyDict::new(py);
        stages.set_item("read", outcome.stages.read_s)?;
        stages.set_item("parse", outcome.stages.parse_s)?;
        stages.set_item("finish", outcome.stages.finish_s)?;
        stages.set_item("close", outcome.stages.close_s)?;
        stages.set_item("write", outcome.stages.write_s)?;
        d.set_item("stages", stages)?;
        if let Some(tables) = memory_tables.lock().expect("tables").take() {
            let t = PyDict::new(py);
            for (kind, batches) in tables {
                let list = PyList::empty(py);
                for batch in batches {
                    list.append(Py::new(py, ArrowBatch { batch })?)?;
                }
                t.set_item(kind, list)?;
            }
            d.set_item("tables", t)?;
        }
        Ok(d)
    }

    /// One event per line, as the ingest reads them (CRI partial lines join their successor): a
    /// dict of the kind, the rule, the common columns, the fields (`raw` for `unparsed`), `_time`
    /// (the stamp parts, or None) and `_frame` (the envelope: `body`, `text`, `outer`, `partial`,
    /// `notes`: each layer's `source`, `ts`, `level`, `rank`, `pid`, `task`). `alone`: every line
    /// is read by itself (sample lines: a CRI partial line joins nothing).
    #[pyo3(signature = (lines, *, alone=false))]
    fn parse_lines<'py>(&self, py: Python<'py>, lines: Vec<String>, alone: bool) -> PyResult<Bound<'py, PyList>> {
        let raised = RefCell::new(None);
        let mut parser = self.compiled.take_parser().map_err(|e| to_py(py, e, &raised))?;
        parser.reset();
        let out = PyList::empty(py);
        for line in &lines {
            if alone {
                parser.reset();
            }
            let frame = parser.frame(line);
            let frame_dict = frame_dict(py, &parser, &frame)?;
            let event = parser.parse(line);
            let d = PyDict::new(py);
            let (kind, rule) = match event.rule {
                Some(i) => (
                    self.compiled.kinds[self.compiled.rule_kind[i]].as_str(),
                    Some(self.compiled.rule_names[i].as_str()),
                ),
                None if event.partial => ("unparsed", Some(crate::line::PARTIAL_RULE)),
                None => ("unparsed", None),
            };
            d.set_item("kind", kind)?;
            d.set_item("rule", rule)?;
            let r = &event.reading;
            d.set_item("ts", &r.ts)?;
            d.set_item("outer_ts", &r.outer_ts)?;
            d.set_item("engine", &self.compiled.engine)?;
            d.set_item("rank", &r.rank)?;
            d.set_item("pid", r.pid)?;
            d.set_item("level", &r.level)?;
            d.set_item("task", &r.task)?;
            d.set_item("prefix", &event.prefix)?;
            match event.rule {
                None => d.set_item("raw", line)?,
                Some(i) => {
                    let layout = &self.compiled.layouts[self.compiled.rule_kind[i]];
                    for (col, value) in &event.fields.0 {
                        d.set_item(&layout.names[*col], value_to_py(py, value)?)?;
                    }
                }
            }
            d.set_item("_time", stamp_dict(py, r.stamp.as_ref())?)?;
            d.set_item("_frame", frame_dict)?;
            out.append(d)?;
        }
        self.compiled.give_back(parser);
        Ok(out)
    }

    /// The names of every rule that reads `body` whole at `level` (regular rules, then fallback).
    #[pyo3(signature = (body, level=None))]
    fn rules_reading(&self, py: Python<'_>, body: &str, level: Option<&str>) -> PyResult<Vec<String>> {
        let raised = RefCell::new(None);
        let parser = self.compiled.take_parser().map_err(|e| to_py(py, e, &raised))?;
        let found =
            parser.rules_reading(body, level).into_iter().map(|i| self.compiled.rule_names[i].clone()).collect();
        self.compiled.give_back(parser);
        Ok(found)
    }

    /// The parts of a printed stamp (`completeness`, `year`, ..., `epoch_us`), or None.
    fn read_stamp<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let raised = RefCell::new(None);
        let parser = self.compiled.take_parser().map_err(|e| to_py(py, e, &raised))?;
        let parts = parser.read_stamp(text);
        self.compiled.give_back(parser);
        stamp_dict(py, parts.as_ref())
    }

    /// The finished schema of each kind, as empty batches (kind -> batch).
    fn schemas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (kind, schema) in self.compiled.kinds.iter().zip(&self.compiled.schemas) {
            d.set_item(kind, Py::new(py, ArrowBatch { batch: RecordBatch::new_empty(schema.clone()) })?)?;
        }
        Ok(d)
    }
}

fn value_to_py<'py>(py: Python<'py>, value: &crate::values::Value) -> PyResult<Bound<'py, PyAny>> {
    use crate::values::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(t) => t.into_pyobject(py)?.into_any(),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Floats(v) => PyList::new(py, v)?.into_any(),
        Value::Pairs(p) => PyList::new(py, p.iter().map(|(k, v)| (k, v)))?.into_any(),
    })
}

fn stamp_dict<'py>(py: Python<'py>, parts: Option<&crate::stamps::StampParts>) -> PyResult<Bound<'py, PyAny>> {
    let Some(p) = parts else { return Ok(py.None().into_bound(py)) };
    let d = PyDict::new(py);
    d.set_item("completeness", p.completeness)?;
    d.set_item("year", p.year)?;
    d.set_item("month", p.month)?;
    d.set_item("day", p.day)?;
    d.set_item("hour", p.hour)?;
    d.set_item("minute", p.minute)?;
    d.set_item("second", p.second)?;
    d.set_item("micro", p.micro)?;
    d.set_item("zone", p.zone)?;
    d.set_item("epoch_us", p.epoch_us)?;
    Ok(d.into_any())
}

fn frame_dict<'py>(
    py: Python<'py>,
    parser: &crate::line::LineParser,
    frame: &crate::envelope::Frame<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("body", frame.body())?;
    d.set_item("text", frame.search_text())?;
    d.set_item("outer", frame.outer)?;
    d.set_item("partial", frame.partial)?;
    let notes = PyList::empty(py);
    for n in &frame.notes {
        let nd = PyDict::new(py);
        nd.set_item("source", parser.peeler().source_name(n.source))?;
        nd.set_item("ts", &n.ts)?;
        nd.set_item("level", &n.level)?;
        nd.set_item("rank", &n.rank)?;
        nd.set_item("pid", n.pid)?;
        nd.set_item("task", &n.task)?;
        notes.append(nd)?;
    }
    d.set_item("notes", notes)?;
    Ok(d)
}

/// Each kind's batches.
type Tables = BTreeMap<String, Vec<RecordBatch>>;
/// A value handed over between threads once it is ready.
type Shared<T> = std::sync::Arc<Mutex<Option<T>>>;

/// A memory sink that hands its tables over when it closes.
struct Keeper {
    inner: MemorySink,
    out: Shared<Tables>,
}

impl Sink for Keeper {
    fn add(&mut self, kind: &str, batch: RecordBatch) -> crate::error::Result<()> {
        self.inner.add(kind, batch)
    }

    fn close(&mut self) -> crate::error::Result<Vec<String>> {
        let kinds = self.inner.close()?;
        *self.out.lock().expect("tables") = Some(std::mem::take(&mut self.inner.tables));
        Ok(kinds)
    }

    fn abort(&mut self) {
        self.inner.abort();
    }
}

/// A captured text as a field of `type` holds it (`int`, `float`, `str`, `bool`, `floats`), as
/// every rule's fields are typed; None when it does not read as that type.
#[pyfunction]
#[pyo3(name = "convert")]
fn convert_value<'py>(py: Python<'py>, text: &str, r#type: &str) -> PyResult<Bound<'py, PyAny>> {
    let typ = crate::values::FieldType::parse(r#type).map_err(PyValueError::new_err)?;
    value_to_py(py, &crate::values::convert(text, typ))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert_value, m)?)?;
    m.add_class::<Core>()?;
    m.add_class::<Reader>()?;
    m.add_class::<ArrowBatch>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
