//! The Python module `logparse._core`.

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::block::{parse_block, Shape};
use crate::columns::Layout;
use crate::line::LineParser;
use crate::spec::Spec;

/// An Arrow record batch handed to Python through the Arrow PyCapsule interface.
#[pyclass(module = "logparse._core", frozen)]
struct ArrowBatch {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowBatch {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(&self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>)
        -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let array = StructArray::from(self.batch.clone());
        let data = array.into_data();
        let schema = FFI_ArrowSchema::try_from(data.data_type())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let ffi_array = FFI_ArrowArray::new(&data);
        let schema_capsule = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array_capsule = PyCapsule::new_with_value(py, ffi_array, c"arrow_array")?;
        Ok((schema_capsule, array_capsule))
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// One engine's compiled grammar: parses blocks of lines on any thread, the GIL released.
#[pyclass(module = "logparse._core", frozen)]
struct Core {
    spec: Spec,
    shape: Shape,
    parsers: Mutex<Vec<LineParser>>,
}

#[pymethods]
impl Core {
    #[new]
    fn new(spec_json: &str) -> PyResult<Core> {
        let spec = Spec::from_json(spec_json).map_err(PyValueError::new_err)?;
        let mut layouts = BTreeMap::new();
        for (kind, columns) in &spec.kinds {
            layouts.insert(kind.clone(), Layout::new(columns).map_err(PyValueError::new_err)?);
        }
        let first = LineParser::new(&spec, &layouts).map_err(PyValueError::new_err)?;
        let shape = Shape { engine: spec.engine.clone(), layouts };
        Ok(Core { spec, shape, parsers: Mutex::new(vec![first]) })
    }

    /// Parse `n_lines` lines of `data` (the reader's block) numbered from `first_line`.
    fn parse_block<'py>(&self, py: Python<'py>, data: &[u8], n_lines: usize, first_line: i64)
        -> PyResult<Bound<'py, PyDict>> {
        let mut parser = match self.parsers.lock().expect("parser pool").pop() {
            Some(p) => p,
            None => LineParser::new(&self.spec, &self.shape.layouts).map_err(PyValueError::new_err)?,
        };
        let out = py.detach(|| parse_block(&mut parser, &self.shape, data, n_lines, first_line));
        self.parsers.lock().expect("parser pool").push(parser);
        let out = out.map_err(PyValueError::new_err)?;
        let result = PyDict::new(py);
        let tables = PyDict::new(py);
        for (kind, batch) in out.tables {
            tables.set_item(kind, Py::new(py, ArrowBatch { batch })?)?;
        }
        result.set_item("tables", tables)?;
        result.set_item("stamps", Py::new(py, ArrowBatch { batch: out.stamps })?)?;
        let reference = PyList::empty(py);
        for (line_no, text) in out.reference {
            reference.append((line_no, text))?;
        }
        result.set_item("reference", reference)?;
        result.set_item("counts", out.counts)?;
        result.set_item("lines", out.lines)?;
        result.set_item("invalid_utf8_lines", out.invalid_utf8_lines)?;
        result.set_item("nul_lines", out.nul_lines)?;
        result.set_item("longest_line", out.longest_line)?;
        Ok(result)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_class::<ArrowBatch>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
