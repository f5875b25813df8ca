//! Reading a log as blocks of complete lines: plain files, gzip, pipes, or any byte stream the
//! caller hands over; any bytes at all.
//!
//! Lines are split on `\n` only (as `sed -n Np` counts). Hostile input ends cleanly in bounded
//! memory: a line longer than the cap keeps its first `max_line` bytes and the rest, up to the next
//! newline, is skipped and counted; a regular file is read up to the size it had when opened, so a
//! log still being written ends. A block never ends inside a record that a container runtime split
//! into CRI partial lines (the line parser joins those with the line that completes them).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use regex::bytes::Regex;

use crate::error::{Error, Result};

/// What reading an input counted, for the headline and the diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Bytes of log text read (decompressed).
    pub bytes_read: u64,
    /// Lines handed out.
    pub lines: u64,
    /// Lines that were not UTF-8 (decoded with U+FFFD).
    pub invalid_utf8_lines: u64,
    /// Lines holding a NUL byte.
    pub nul_lines: u64,
    /// Bytes of the longest line (without its `\r\n`).
    pub longest_line: u64,
    /// The input does not end with a newline.
    pub truncated_last_line: bool,
    /// What went wrong while reading, said for a person.
    pub notes: Vec<String>,
    /// Lines longer than the cap, cut to it.
    pub long_lines: u64,
    /// The bytes those lines lost.
    pub long_line_bytes_skipped: u64,
}

/// Lines `first_line..` of a log: `data` holds them with their `\n` (the last may lack it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The 1-based number of the block's first line.
    pub first_line: i64,
    /// The bytes of the lines.
    pub data: Vec<u8>,
    /// How many lines `data` holds.
    pub lines: usize,
    /// A single over-long line, cut to the cap (no `\n` inside).
    pub cut: bool,
}

/// Where a log's bytes come from: read `buf.len()` bytes at most, 0 at the end.
pub trait ByteSource: Send {
    /// Fill `buf` from the start; the bytes given (0: the end of the input).
    fn read_into(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

impl<R: Read + Send> ByteSource for R {
    fn read_into(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }
}

/// A stream whose first bytes were read ahead (to know gzip by its magic) and are given back first.
struct Sniffed {
    head: Vec<u8>,
    at: usize,
    inner: Box<dyn ByteSource>,
}

impl Sniffed {
    /// Up to `n` first bytes (fewer at the end of the stream; an error reads as the end here and
    /// again when the stream is read).
    fn sniff(&mut self, n: usize) -> &[u8] {
        let mut buf = [0u8; 16];
        while self.head.len() < n {
            match self.inner.read_into(&mut buf[..n - self.head.len()]) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.head.extend_from_slice(&buf[..k]),
            }
        }
        &self.head
    }
}

impl Read for Sniffed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at < self.head.len() {
            let n = buf.len().min(self.head.len() - self.at);
            buf[..n].copy_from_slice(&self.head[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        self.inner.read_into(buf)
    }
}

/// A regular file read up to the size it had when opened; notes when it shrank.
struct Snapshot {
    file: File,
    size: u64,
    remaining: u64,
    shrank: bool,
    failed: Option<io::Error>, // an OS read error (not a decompression one)
}

impl Read for Snapshot {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            return Ok(0);
        }
        let want = buf.len().min(self.remaining as usize);
        let n = loop {
            match self.file.read(&mut buf[..want]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let kind = e.kind();
                    self.failed = Some(io::Error::new(kind, e.to_string()));
                    return Err(e);
                }
                Ok(n) => break n,
            }
        };
        if n == 0 {
            self.shrank = true;
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// A shared handle on a snapshot, so the gzip decoder can own the reader while the source still
/// sees how far it got.
#[derive(Clone)]
struct Shared(std::sync::Arc<std::sync::Mutex<Snapshot>>);

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.lock().expect("snapshot").read(buf)
    }
}

/// How a log is named in messages.
pub fn describe(path: &str) -> String {
    if path == "-" {
        "standard input".to_string()
    } else {
        path.to_string()
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// What an input is, for reopening it.
enum Origin {
    /// A regular file (reopened to read again).
    File(PathBuf),
    /// Standard input, a FIFO or a stream the caller gave: read once, spooled to read again.
    Stream,
}

/// The blocks of an input, readable again from the start (reopened, or replayed from a spool).
pub struct Source {
    /// How the input is named in messages.
    pub name: String,
    origin: Origin,
    input: Box<dyn ByteSource>,
    snapshot: Option<Shared>,
    gzip: bool,
    /// Bytes the input has (compressed, for gzip), when known: for progress.
    pub size: Option<u64>,
    /// What reading counted so far.
    pub stats: ReadStats,
    block_bytes: usize,
    assembler: Assembler,
    ready: VecDeque<Block>,
    held: Option<Block>,
    head: Vec<Block>,
    replay: Option<SpoolReader>,
    spool: Option<Spool>,
    ended: bool,
    cri: Regex,
}

impl Source {
    /// Open `path` (`-`: standard input): gzip is known by its magic bytes.
    pub fn open(path: &str, block_bytes: usize, max_line: usize) -> Result<Source> {
        let name = describe(path);
        if path == "-" {
            return Ok(Source::over(
                name,
                Origin::Stream,
                Box::new(io::stdin()),
                None,
                false,
                None,
                block_bytes,
                max_line,
            ));
        }
        let (input, snapshot, gzip, size) = open_file(Path::new(path), &name, true)?;
        let origin = if snapshot.is_some() { Origin::File(PathBuf::from(path)) } else { Origin::Stream };
        Ok(Source::over(name, origin, input, snapshot, gzip, size, block_bytes, max_line))
    }

    /// A source over a stream the caller reads (read once; spooled to be read again); a gzip
    /// stream is known by its magic bytes and read decompressed.
    pub fn stream(
        name: &str,
        input: Box<dyn ByteSource>,
        size: Option<u64>,
        block_bytes: usize,
        max_line: usize,
    ) -> Source {
        let mut sniffed = Sniffed { head: Vec::new(), at: 0, inner: input };
        let gzip = sniffed.sniff(GZIP_MAGIC.len()) == GZIP_MAGIC;
        let input: Box<dyn ByteSource> = if gzip {
            Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(1 << 20, sniffed)))
        } else {
            Box::new(sniffed)
        };
        Source::over(name.to_string(), Origin::Stream, input, None, gzip, size, block_bytes, max_line)
    }

    #[allow(clippy::too_many_arguments)]
    fn over(
        name: String,
        origin: Origin,
        input: Box<dyn ByteSource>,
        snapshot: Option<Shared>,
        gzip: bool,
        size: Option<u64>,
        block_bytes: usize,
        max_line: usize,
    ) -> Source {
        let spool = matches!(origin, Origin::Stream).then(Spool::new).and_then(|s| s.ok());
        Source {
            name,
            origin,
            input,
            snapshot,
            gzip,
            size,
            stats: ReadStats::default(),
            block_bytes: block_bytes.max(1),
            assembler: Assembler::new(max_line.max(1)),
            ready: VecDeque::new(),
            held: None,
            head: Vec::new(),
            replay: None,
            spool,
            ended: false,
            cri: Regex::new(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ \n]{8,40} (?:stdout|stderr) P(?: |\z)")
                .expect("CRI regex"),
        }
    }

    /// Bytes of the input consumed so far (compressed, for gzip), for progress.
    pub fn position(&self) -> u64 {
        match &self.snapshot {
            Some(s) => {
                let s = s.0.lock().expect("snapshot");
                s.size - s.remaining
            }
            None => self.stats.bytes_read,
        }
    }

    /// The first `wanted` non-blank lines (for detection), decoded; the blocks are kept for
    /// `next_block`.
    pub fn head(&mut self, wanted: usize) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        let mut non_blank = 0;
        for block in &self.head {
            for text in block_lines(block) {
                non_blank += usize::from(!text.trim().is_empty());
                lines.push(text);
                if non_blank >= wanted {
                    return Ok(lines);
                }
            }
        }
        while let Some(block) = self.read_block()? {
            let mut done = false;
            for text in block_lines(&block) {
                non_blank += usize::from(!text.trim().is_empty());
                lines.push(text);
                if non_blank >= wanted {
                    done = true;
                    break;
                }
            }
            self.head.push(block);
            if done {
                break;
            }
        }
        Ok(lines)
    }

    /// The next block of complete lines, None at the end.
    pub fn next_block(&mut self) -> Result<Option<Block>> {
        if !self.head.is_empty() {
            return Ok(Some(self.head.remove(0)));
        }
        self.read_block()
    }

    fn read_block(&mut self) -> Result<Option<Block>> {
        if let Some(replay) = &mut self.replay {
            match replay.next().map_err(|e| Error::Read { path: "spool".into(), source: e })? {
                Some(block) => return Ok(Some(block)),
                None => self.replay = None,
            }
        }
        let block = self.joined()?;
        if let (Some(block), Some(spool)) = (&block, &mut self.spool) {
            spool.write(block).map_err(|e| Error::Write { path: "spool".into(), source: e })?;
        }
        Ok(block)
    }

    /// Blocks, a block ending with a CRI partial line merged with the next one.
    fn joined(&mut self) -> Result<Option<Block>> {
        loop {
            let Some(mut block) = self.assembled()? else { return Ok(self.held.take()) };
            if let Some(held) = self.held.take() {
                if block.cut {
                    self.ready.push_front(block);
                    return Ok(Some(held));
                }
                let mut data = held.data;
                data.extend_from_slice(&block.data);
                block = Block { first_line: held.first_line, data, lines: held.lines + block.lines, cut: false };
            }
            if self.ends_partial(&block) {
                self.held = Some(block);
                continue;
            }
            return Ok(Some(block));
        }
    }

    fn ends_partial(&self, block: &Block) -> bool {
        if block.cut || block.data.is_empty() {
            return false;
        }
        let data = block.data.strip_suffix(b"\n").unwrap_or(&block.data);
        let start = memchr::memrchr(b'\n', data).map(|i| i + 1).unwrap_or(0);
        self.cri.is_match(&data[start..])
    }

    fn assembled(&mut self) -> Result<Option<Block>> {
        loop {
            if let Some(block) = self.ready.pop_front() {
                return Ok(Some(block));
            }
            if self.ended {
                return Ok(None);
            }
            let mut chunk = vec![0u8; self.block_bytes];
            match self.input.read_into(&mut chunk) {
                Ok(0) => {
                    self.ended = true;
                    self.assembler.finish(&mut self.stats, &mut self.ready);
                }
                Ok(n) => {
                    chunk.truncate(n);
                    self.stats.bytes_read += n as u64;
                    self.assembler.feed(chunk, &mut self.stats, &mut self.ready);
                }
                Err(e) => {
                    let os_error = self.snapshot.as_ref().and_then(|s| s.0.lock().expect("snapshot").failed.take());
                    if self.gzip && os_error.is_none() && self.stats.bytes_read == 0 && self.reopen_plain()? {
                        // not gzip after all: a file that only starts with its magic bytes
                        continue;
                    }
                    if self.gzip && os_error.is_none() {
                        self.stats.notes.push(format!(
                            "{}: compressed stream ends early or is corrupt ({}); read up to line {}",
                            self.name,
                            gzip_reason(&e),
                            self.assembler.line_no
                        ));
                        self.ended = true;
                        self.assembler.finish(&mut self.stats, &mut self.ready);
                    } else {
                        return Err(Error::Input(format!(
                            "{}: read failed after line {}: {}",
                            self.name,
                            self.assembler.line_no,
                            os_text(&os_error.unwrap_or(e))
                        )));
                    }
                }
            }
            if self.ended && self.stats.long_lines > 0 {
                let cap = mib(self.assembler.limit);
                self.stats.notes.push(format!(
                    "{}: {} line(s) longer than {cap} cut to their first {cap} ({} bytes skipped)",
                    self.name,
                    self.stats.long_lines,
                    thousands(self.stats.long_line_bytes_skipped)
                ));
            }
        }
    }

    /// A regular file whose gzip header does not read, opened again as plain text (true); false
    /// for a stream, which cannot be read again here.
    fn reopen_plain(&mut self) -> Result<bool> {
        let Origin::File(path) = &self.origin else { return Ok(false) };
        let path = path.clone();
        let (_, snapshot, _, _) = open_file(&path, &self.name, false)?;
        let Some(shared) = snapshot else { return Ok(false) };
        if let (Some(first), Ok(mut s)) = (self.size, shared.0.lock()) {
            s.remaining = first.min(s.size);
            s.size = first;
        }
        self.input = Box::new(shared.clone());
        self.snapshot = Some(shared);
        self.gzip = false;
        Ok(true)
    }

    /// Whether the blocks can be read again from the start.
    pub fn can_restart(&self) -> bool {
        matches!(self.origin, Origin::File(_)) || self.spool.is_some()
    }

    /// Read from the start again. A regular file is reopened (its first size kept); a stream is
    /// replayed from its spool, then read on.
    pub fn restart(&mut self) -> Result<()> {
        match &self.origin {
            Origin::File(path) => {
                let path = path.clone();
                let size = self.size;
                let (input, snapshot, gzip, _) = open_file(&path, &self.name, true)?;
                if let (Some(shared), Some(first)) = (&snapshot, size) {
                    let mut s = shared.0.lock().expect("snapshot");
                    if s.size != first {
                        // grown since the first reading: read what it held then
                        s.remaining = first.min(s.size);
                        s.size = first;
                    }
                }
                self.input = input;
                self.snapshot = snapshot;
                self.gzip = gzip;
                self.stats = ReadStats::default();
                self.assembler = Assembler::new(self.assembler.limit);
                self.ready.clear();
                self.held = None;
                self.head.clear();
                self.ended = false;
                Ok(())
            }
            Origin::Stream => {
                let spool =
                    self.spool.take().ok_or_else(|| Error::Input(format!("{}: cannot be read again", self.name)))?;
                self.replay = Some(spool.replay().map_err(|e| Error::Read { path: "spool".into(), source: e })?);
                self.head.clear();
                Ok(())
            }
        }
    }

    /// No rereading will be needed: drop what was spooled.
    pub fn stop_spooling(&mut self) {
        self.spool = None;
    }

    /// At the end: say so when the file grew or shrank while it was read.
    pub fn finish(&mut self) {
        let Origin::File(path) = &self.origin else { return };
        let Some(shared) = &self.snapshot else { return };
        let s = shared.0.lock().expect("snapshot");
        if s.shrank {
            self.stats.notes.push(format!(
                "{}: the file shrank while being read (truncated or rotated?); read {} of {} bytes",
                self.name,
                thousands(s.size - s.remaining),
                thousands(s.size)
            ));
            return;
        }
        let now = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if now > s.size {
            self.stats.notes.push(format!(
                "{}: grew by {} bytes while being read; read the {} bytes it held when opened",
                self.name,
                thousands(now - s.size),
                thousands(s.size)
            ));
        }
    }
}

type Opened = (Box<dyn ByteSource>, Option<Shared>, bool, Option<u64>);

/// Open a log file read up to its size now; gzip (known by its magic bytes) decompressed when
/// `sniff` (the decoder reads the header as it is made).
fn open_file(path: &Path, name: &str, sniff: bool) -> Result<Opened> {
    let shown = crate::text::for_terminal(name);
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::Input(format!("{shown}: no such file")),
        _ => Error::Input(format!("{shown}: cannot read: {}", os_text(&e))),
    })?;
    if meta.is_dir() {
        return Err(Error::Input(format!("{shown}: is a directory; give the log file inside it")));
    }
    let mut file = File::open(path).map_err(|e| Error::Input(format!("{shown}: cannot open: {}", os_text(&e))))?;
    if !meta.is_file() {
        // a FIFO, a character device, /dev/stdin: read until the end
        return Ok((Box::new(file), None, false, None));
    }
    let size =
        file.metadata().map(|m| m.len()).map_err(|e| Error::Input(format!("{shown}: cannot read: {}", os_text(&e))))?;
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).map_err(|e| Error::Input(format!("{shown}: cannot read: {}", os_text(&e))))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| Error::Input(format!("{shown}: cannot read: {}", os_text(&e))))?;
    if size == 0 {
        // st_size 0 may be a /proc-like file: read to its end
        return Ok((Box::new(file), None, false, None));
    }
    let shared = Shared(std::sync::Arc::new(std::sync::Mutex::new(Snapshot {
        file,
        size,
        remaining: size,
        shrank: false,
        failed: None,
    })));
    let gzip = sniff && got == 2 && magic == GZIP_MAGIC;
    let input: Box<dyn ByteSource> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(1 << 20, shared.clone())))
    } else {
        Box::new(shared.clone())
    };
    Ok((input, Some(shared), gzip, Some(size)))
}

/// An OS error's text without Rust's `(os error N)` suffix, as `strerror` gives it.
pub fn os_text(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn gzip_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "the file ends before the end of its last gzip member".to_string(),
        _ => os_text(e),
    }
}

fn mib(n: usize) -> String {
    if n >= 1 << 20 {
        let v = n as f64 / f64::from(1u32 << 20);
        if v.fract() == 0.0 {
            format!("{v:.0} MiB")
        } else {
            format!("{v} MiB")
        }
    } else {
        format!("{} bytes", thousands(n as u64))
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The raw lines of a block (without their `\n`).
pub fn block_raws(block: &Block) -> Box<dyn Iterator<Item = &[u8]> + '_> {
    if block.cut {
        Box::new(std::iter::once(&block.data[..]))
    } else {
        Box::new(block.data.split(|b| *b == b'\n').take(block.lines))
    }
}

/// Count a block's per-line reading facts (longest line, invalid UTF-8, NUL) into `stats`.
pub fn count_lines(block: &Block, stats: &mut ReadStats) {
    for raw in block_raws(block) {
        stats.longest_line = stats.longest_line.max((raw.len() - usize::from(raw.ends_with(b"\r"))) as u64);
        stats.invalid_utf8_lines += u64::from(decode(raw).1);
        stats.nul_lines += u64::from(memchr::memchr(0, raw).is_some());
    }
}

/// The lines of a block, decoded as the parser sees them (one trailing `\r` dropped, invalid
/// UTF-8 replaced).
pub fn block_lines(block: &Block) -> Vec<String> {
    block_raws(block).map(|raw| decode(raw).0.into_owned()).collect()
}

/// A line's text (one trailing `\r` dropped, invalid UTF-8 replaced) and whether it was invalid.
pub fn decode(raw: &[u8]) -> (std::borrow::Cow<'_, str>, bool) {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    match std::str::from_utf8(raw) {
        Ok(text) => (std::borrow::Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(raw), true),
    }
}

/// Turns what is read, piece by piece, into blocks of complete lines, cutting over-long ones.
struct Assembler {
    limit: usize,
    partial: Vec<u8>, // the line read so far, not yet ended by a newline
    skipping: bool,   // inside the tail of an over-long line whose head was already handed out
    line_no: u64,     // lines handed out so far
}

impl Assembler {
    fn new(limit: usize) -> Assembler {
        Assembler { limit, partial: Vec::new(), skipping: false, line_no: 0 }
    }

    fn feed(&mut self, mut chunk: Vec<u8>, stats: &mut ReadStats, out: &mut VecDeque<Block>) {
        if self.skipping {
            match memchr::memchr(b'\n', &chunk) {
                None => {
                    stats.long_line_bytes_skipped += chunk.len() as u64;
                    return;
                }
                Some(nl) => {
                    stats.long_line_bytes_skipped += nl as u64;
                    self.skipping = false;
                    chunk.drain(..=nl);
                }
            }
        }
        match memchr::memrchr(b'\n', &chunk) {
            Some(last) => {
                let rest = chunk.split_off(last + 1);
                let data = if self.partial.is_empty() {
                    chunk
                } else {
                    let mut data = std::mem::take(&mut self.partial);
                    data.extend_from_slice(&chunk);
                    data
                };
                self.partial = rest;
                self.blocks(data, stats, out);
            }
            None => self.partial.extend_from_slice(&chunk),
        }
        if self.partial.len() > self.limit {
            self.line_no += 1;
            stats.long_lines += 1;
            stats.long_line_bytes_skipped += (self.partial.len() - self.limit) as u64;
            let mut head = std::mem::take(&mut self.partial);
            head.truncate(self.limit);
            out.push_back(Block { first_line: self.line_no as i64, data: head, lines: 1, cut: true });
            self.skipping = true;
        }
    }

    fn finish(&mut self, stats: &mut ReadStats, out: &mut VecDeque<Block>) {
        if !self.partial.is_empty() {
            stats.truncated_last_line = true;
            self.line_no += 1;
            let data = std::mem::take(&mut self.partial);
            out.push_back(Block { first_line: self.line_no as i64, data, lines: 1, cut: false });
        } else if self.skipping {
            stats.truncated_last_line = true;
        }
        stats.lines = self.line_no;
    }

    /// `data`, complete lines, as blocks: one, or more when it holds an over-long line.
    fn blocks(&mut self, data: Vec<u8>, stats: &mut ReadStats, out: &mut VecDeque<Block>) {
        let first = self.line_no + 1;
        let lines = memchr::memchr_iter(b'\n', &data).count();
        self.line_no += lines as u64;
        if data.len() - lines <= self.limit {
            out.push_back(Block { first_line: first as i64, data, lines, cut: false });
            return;
        }
        // only now can one of its lines be over the cap: those come alone, cut
        let (mut start, mut line_no) = (0usize, first);
        let (mut pending_start, mut pending) = (0usize, 0usize);
        while start < data.len() {
            let end = memchr::memchr(b'\n', &data[start..]).map(|i| start + i).unwrap_or(data.len());
            if end - start > self.limit {
                if pending > 0 {
                    out.push_back(Block {
                        first_line: (line_no - pending as u64) as i64,
                        data: data[pending_start..start].to_vec(),
                        lines: pending,
                        cut: false,
                    });
                }
                stats.long_lines += 1;
                stats.long_line_bytes_skipped += (end - start - self.limit) as u64;
                out.push_back(Block {
                    first_line: line_no as i64,
                    data: data[start..start + self.limit].to_vec(),
                    lines: 1,
                    cut: true,
                });
                pending_start = end + 1;
                pending = 0;
            } else {
                pending += 1;
            }
            line_no += 1;
            start = end + 1;
        }
        if pending > 0 {
            out.push_back(Block {
                first_line: (line_no - pending as u64) as i64,
                data: data[pending_start..].to_vec(),
                lines: pending,
                cut: false,
            });
        }
    }
}

/// Blocks written aside so a stream can be read again.
struct Spool {
    file: File,
}

impl Spool {
    fn new() -> io::Result<Spool> {
        Ok(Spool { file: tempfile::tempfile()? })
    }

    fn write(&mut self, block: &Block) -> io::Result<()> {
        let header = format!("{} {} {} {}\n", block.first_line, block.lines, u8::from(block.cut), block.data.len());
        self.file.write_all(header.as_bytes())?;
        self.file.write_all(&block.data)
    }

    fn replay(mut self) -> io::Result<SpoolReader> {
        self.file.flush()?;
        self.file.seek(SeekFrom::Start(0))?;
        Ok(SpoolReader { file: io::BufReader::new(self.file) })
    }
}

struct SpoolReader {
    file: io::BufReader<File>,
}

impl SpoolReader {
    fn next(&mut self) -> io::Result<Option<Block>> {
        use std::io::BufRead;
        let mut header = String::new();
        if self.file.read_line(&mut header)? == 0 {
            return Ok(None);
        }
        let parts: Vec<i64> = header.split_whitespace().filter_map(|p| p.parse().ok()).collect();
        let [first, lines, cut, size] = parts[..] else {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "bad spool header"));
        };
        let mut data = vec![0u8; size as usize];
        self.file.read_exact(&mut data)?;
        Ok(Some(Block { first_line: first, data, lines: lines as usize, cut: cut != 0 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dribble {
        data: Vec<u8>,
        pos: usize,
        sizes: Vec<usize>,
        i: usize,
    }

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.i % self.sizes.len()].max(1).min(buf.len());
            self.i += 1;
            let end = (self.pos + size).min(self.data.len());
            let n = end - self.pos;
            buf[..n].copy_from_slice(&self.data[self.pos..end]);
            self.pos = end;
            Ok(n)
        }
    }

    fn lines(data: &[u8], sizes: Vec<usize>, limit: usize) -> (Vec<(i64, String)>, ReadStats) {
        let input = Dribble { data: data.to_vec(), pos: 0, sizes, i: 0 };
        let mut source = Source::stream("input", Box::new(input), None, 7, limit);
        let mut out = Vec::new();
        while let Some(block) = source.next_block().unwrap() {
            for (i, text) in block_lines(&block).into_iter().enumerate() {
                out.push((block.first_line + i as i64, text));
            }
        }
        (out, source.stats)
    }

    #[test]
    fn lines_split_on_newline_only_one_cr_dropped() {
        let (got, stats) = lines(b"a\r\nb\rc\n\nlast", vec![1, 2, 5], 100);
        assert_eq!(got, vec![(1, "a".into()), (2, "b\rc".into()), (3, "".into()), (4, "last".into())]);
        assert!(stats.truncated_last_line);
        assert_eq!(stats.lines, 4);
    }

    #[test]
    fn an_over_long_line_is_cut_and_its_tail_skipped() {
        let (got, stats) = lines(b"short\n0123456789abcdef\nnext\n", vec![3], 8);
        assert_eq!(got, vec![(1, "short".into()), (2, "01234567".into()), (3, "next".into())]);
        assert_eq!((stats.long_lines, stats.long_line_bytes_skipped), (1, 8));
    }

    #[test]
    fn a_cri_partial_record_stays_in_one_block() {
        let data =
            b"2025-01-01T00:00:00.000000001Z stdout P first half\n2025-01-01T00:00:00.000000002Z stdout F second\n";
        let input = Dribble { data: data.to_vec(), pos: 0, sizes: vec![60], i: 0 };
        let mut source = Source::stream("input", Box::new(input), None, 60, 1 << 20);
        let block = source.next_block().unwrap().unwrap();
        assert_eq!(block.lines, 2);
        assert!(source.next_block().unwrap().is_none());
    }

    #[test]
    fn a_stream_replays_from_its_spool() {
        let input = Dribble { data: b"one\ntwo\nthree\n".to_vec(), pos: 0, sizes: vec![4], i: 0 };
        let mut source = Source::stream("input", Box::new(input), None, 4, 100);
        let first = source.next_block().unwrap().unwrap();
        source.restart().unwrap();
        assert_eq!(source.next_block().unwrap().unwrap(), first);
        let mut rest = 0;
        while source.next_block().unwrap().is_some() {
            rest += 1;
        }
        assert_eq!(rest, 2);
    }

    #[test]
    fn a_file_that_only_starts_like_gzip_is_read_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk.log");
        std::fs::write(&path, b"\x1f\x8b not gzip\nsecond\n").unwrap();
        let mut source = Source::open(path.to_str().unwrap(), 1 << 16, 1 << 20).unwrap();
        let mut lines = Vec::new();
        while let Some(block) = source.next_block().unwrap() {
            lines.extend(block_lines(&block));
        }
        assert_eq!(lines, vec!["\u{1f}\u{fffd} not gzip".to_string(), "second".to_string()]);
        assert!(source.stats.notes.is_empty());
    }

    #[test]
    fn thousands_and_mib() {
        assert_eq!(thousands(1_069_547_520), "1,069,547,520");
        assert_eq!(thousands(12), "12");
        assert_eq!(mib(64 << 20), "64 MiB");
        assert_eq!(mib(10), "10 bytes");
    }
}
