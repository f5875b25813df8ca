//! The errors of the core, each mapped onto one of `logparse.errors`' classes at the Python edge.

use std::path::PathBuf;

/// Why the core could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The grammar given to the core is broken (a regex that does not compile, a missing column).
    #[error("{0}")]
    Grammar(String),
    /// An input cannot be read as a log (missing, a directory, unknown zone, contradicting dates).
    #[error("{0}")]
    Input(String),
    /// Reading `path` failed.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Writing `path` failed (full disk, read-only, a file where a folder should be).
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The run was asked to stop.
    #[error("stopped before the end of the log")]
    Cancelled,
    /// A callback into the caller failed (Python raised inside it); the caller's error is kept
    /// there.
    #[error("{0}")]
    Callback(String),
}

impl From<String> for Error {
    fn from(text: String) -> Error {
        Error::Grammar(text)
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Error {
        match e {
            parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
                Ok(io) => Error::Write { path: PathBuf::new(), source: *io },
                Err(other) => Error::Grammar(format!("parquet: {other}")),
            },
            other => Error::Grammar(format!("parquet: {other}")),
        }
    }
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
