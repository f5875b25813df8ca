//! Finishing a kind's rows: `time` inserted after `ts`, the derived unit columns appended.
//!
//! vLLM prints KV usage as a percent (`gpu_kv_pct` 37.2), SGLang as a fraction (`token_usage`
//! 0.37); `kv_usage_frac` and `kv_usage_pct` carry both on either engine. The rules are data,
//! declared with their columns in `kinds.toml`: per derived column, source columns and factors,
//! the first source set in a row giving the value.

use arrow_array::builder::Float64Builder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, TimestampMicrosecondArray};
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

use crate::error::{Error, Result};

/// A printed value has at most 4 decimals; `x * 0.01` in binary floating point leaves noise in the
/// 17th digit (37.2 * 0.01 = 0.37200000000000005): rounded off, the derived value is the printed
/// one moved.
const ROUND_SCALE: f64 = 1e10;

/// `target = source x factor` (several sources: the first set in a row wins).
#[derive(Debug, Clone)]
pub struct Derivation {
    /// The derived column.
    pub target: String,
    /// (source column index in the parser's columns, if the kind has it; factor).
    pub sources: Vec<(Option<usize>, f64)>,
}

/// The number of row `i` of a numeric column as a float (None: null or not numeric).
fn number(column: &ArrayRef, i: usize) -> Option<f64> {
    if column.is_null(i) {
        return None;
    }
    match column.data_type() {
        DataType::Float64 => Some(column.as_primitive::<Float64Type>().value(i)),
        DataType::Int64 => Some(column.as_primitive::<Int64Type>().value(i) as f64),
        DataType::Boolean => Some(f64::from(u8::from(column.as_boolean().value(i)))),
        _ => None,
    }
}

fn derived_column(batch: &RecordBatch, d: &Derivation) -> ArrayRef {
    let mut out = Float64Builder::with_capacity(batch.num_rows());
    let sources: Vec<(&ArrayRef, f64)> =
        d.sources.iter().filter_map(|(col, f)| col.map(|c| (batch.column(c), *f))).collect();
    for i in 0..batch.num_rows() {
        let value = sources.iter().find_map(|(column, factor)| {
            number(column, i).map(|v| {
                if *factor == 1.0 {
                    v
                } else {
                    ((v * factor) * ROUND_SCALE).round_ties_even() / ROUND_SCALE
                }
            })
        });
        out.append_option(value);
    }
    Arc::new(out.finish())
}

/// The finished table of a kind's rows: `time` (one value per row) after column `ts`, then the
/// derived columns, in `schema`.
pub fn finish_rows(
    batch: &RecordBatch,
    times: Vec<Option<i64>>,
    ts: usize,
    derived: &[Derivation],
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    columns.extend(batch.columns()[..=ts].iter().cloned());
    columns.push(Arc::new(TimestampMicrosecondArray::from(times).with_timezone("UTC")));
    columns.extend(batch.columns()[ts + 1..].iter().cloned());
    for d in derived {
        columns.push(derived_column(batch, d));
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::Grammar(format!("finishing a table: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Float64Array;
    use arrow_schema::{Field, Schema};

    #[test]
    fn a_percent_becomes_the_printed_fraction() {
        let schema = Arc::new(Schema::new(vec![Field::new("pct", DataType::Float64, true)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Float64Array::from(vec![Some(37.2), None]))]).unwrap();
        let d = Derivation { target: "frac".into(), sources: vec![(Some(0), 0.01)] };
        let out = derived_column(&batch, &d);
        let out = out.as_primitive::<Float64Type>();
        assert_eq!(out.value(0), 0.372);
        assert!(out.is_null(1));
    }
}
