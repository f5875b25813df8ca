//! Events into Arrow columns, one table per kind, in the order `logparse.store.schema` gives.

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields as ArrowFields, Schema};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::line::Reading;
use crate::values::{FieldType, Value};

fn pair_fields() -> ArrowFields {
    ArrowFields::from(vec![Field::new("key", DataType::Utf8, true), Field::new("value", DataType::Utf8, true)])
}

pub fn arrow_type(typ: FieldType) -> DataType {
    match typ {
        FieldType::Int => DataType::Int64,
        FieldType::Float => DataType::Float64,
        FieldType::Str => DataType::Utf8,
        FieldType::Bool => DataType::Boolean,
        FieldType::Floats => DataType::List(Arc::new(Field::new("item", DataType::Float64, true))),
        FieldType::Pairs => DataType::List(Arc::new(Field::new("item", DataType::Struct(pair_fields()), true))),
    }
}

enum Column {
    Int(Int64Builder),
    Float(Float64Builder),
    Str(StringBuilder),
    Bool(BooleanBuilder),
    Floats(ListBuilder<Float64Builder>),
    Pairs(ListBuilder<StructBuilder>),
}

impl Column {
    fn new(typ: FieldType) -> Column {
        match typ {
            FieldType::Int => Column::Int(Int64Builder::new()),
            FieldType::Float => Column::Float(Float64Builder::new()),
            FieldType::Str => Column::Str(StringBuilder::new()),
            FieldType::Bool => Column::Bool(BooleanBuilder::new()),
            FieldType::Floats => Column::Floats(ListBuilder::new(Float64Builder::new())),
            FieldType::Pairs => Column::Pairs(ListBuilder::new(StructBuilder::from_fields(pair_fields(), 0))),
        }
    }

    fn push(&mut self, value: Option<&Value>) {
        match (self, value) {
            (Column::Int(b), Some(Value::Int(i))) => b.append_value(*i),
            (Column::Int(b), Some(Value::Float(f))) => b.append_value(*f as i64),
            (Column::Int(b), Some(Value::Bool(v))) => b.append_value(*v as i64),
            (Column::Int(b), _) => b.append_null(),
            (Column::Float(b), Some(Value::Float(f))) => b.append_value(*f),
            (Column::Float(b), Some(Value::Int(i))) => b.append_value(*i as f64),
            (Column::Float(b), _) => b.append_null(),
            (Column::Str(b), Some(Value::Str(s))) => b.append_value(s),
            (Column::Str(b), Some(Value::Null) | None) => b.append_null(),
            (Column::Str(b), Some(other)) => b.append_value(other.py_str()),
            (Column::Bool(b), Some(Value::Bool(v))) => b.append_value(*v),
            (Column::Bool(b), _) => b.append_null(),
            (Column::Floats(b), Some(Value::Floats(v))) => {
                for f in v {
                    b.values().append_value(*f);
                }
                b.append(true);
            }
            (Column::Floats(b), _) => b.append(false),
            (Column::Pairs(b), Some(Value::Pairs(pairs))) => {
                let s = b.values();
                for (k, v) in pairs {
                    s.field_builder::<StringBuilder>(0).expect("key").append_value(k);
                    s.field_builder::<StringBuilder>(1).expect("value").append_value(v);
                    s.append(true);
                }
                b.append(true);
            }
            (Column::Pairs(b), _) => b.append(false),
        }
    }

    fn push_str(&mut self, value: Option<&str>) {
        match self {
            Column::Str(b) => b.append_option(value),
            other => other.push(value.map(|v| Value::Str(v.to_string())).as_ref()),
        }
    }

    fn push_int(&mut self, value: Option<i64>) {
        match self {
            Column::Int(b) => b.append_option(value),
            other => other.push(value.map(Value::Int).as_ref()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Int(b) => Arc::new(b.finish()),
            Column::Float(b) => Arc::new(b.finish()),
            Column::Str(b) => Arc::new(b.finish()),
            Column::Bool(b) => Arc::new(b.finish()),
            Column::Floats(b) => Arc::new(b.finish()),
            Column::Pairs(b) => Arc::new(b.finish()),
        }
    }
}

/// The column layout of one kind.
#[derive(Clone)]
pub struct Layout {
    pub names: Vec<String>,
    pub types: Vec<FieldType>,
    pub index: BTreeMap<String, usize>,
}

impl Layout {
    pub fn new(columns: &[(String, String)]) -> Result<Layout, String> {
        let mut names = Vec::new();
        let mut types = Vec::new();
        for (name, typ) in columns {
            names.push(name.clone());
            types.push(FieldType::parse(typ)?);
        }
        let index = names.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
        Ok(Layout { names, types, index })
    }

    pub fn schema(&self) -> Schema {
        Schema::new(
            self.names.iter().zip(&self.types).map(|(n, t)| Field::new(n, arrow_type(*t), true)).collect::<Vec<_>>(),
        )
    }
}

/// One kind's table being built.
pub struct Table {
    layout: Layout,
    columns: Vec<Column>,
    roles: Vec<Role>,
    row: Vec<usize>,
}

/// What fills a column: a common column of the envelope, or a field.
#[derive(Clone, Copy)]
enum Role {
    LineNo,
    Ts,
    OuterTs,
    Engine,
    Rank,
    Pid,
    Level,
    Task,
    Prefix,
    Rule,
    Field,
}

/// The common part of a row.
pub struct Common<'a> {
    pub line_no: i64,
    pub engine: &'a str,
    pub reading: &'a Reading,
    pub prefix: Option<&'a str>,
    pub rule: Option<&'a str>,
}

impl Table {
    pub fn new(layout: Layout) -> Table {
        let columns = layout.types.iter().map(|t| Column::new(*t)).collect();
        let roles = layout
            .names
            .iter()
            .map(|n| match n.as_str() {
                "line_no" => Role::LineNo,
                "ts" => Role::Ts,
                "outer_ts" => Role::OuterTs,
                "engine" => Role::Engine,
                "rank" => Role::Rank,
                "pid" => Role::Pid,
                "level" => Role::Level,
                "task" => Role::Task,
                "prefix" => Role::Prefix,
                "rule" => Role::Rule,
                _ => Role::Field,
            })
            .collect();
        let row = vec![usize::MAX; layout.names.len()];
        Table { layout, columns, roles, row }
    }

    /// Append a row: the common columns, then `fields` by column (missing ones null).
    pub fn push(&mut self, common: &Common<'_>, fields: &[(usize, Value)]) {
        for (at, (col, _)) in fields.iter().enumerate() {
            self.row[*col] = at;
        }
        let r = common.reading;
        for (i, role) in self.roles.iter().enumerate() {
            let column = &mut self.columns[i];
            match role {
                Role::LineNo => column.push_int(Some(common.line_no)),
                Role::Ts => column.push_str(r.ts.as_deref()),
                Role::OuterTs => column.push_str(r.outer_ts.as_deref()),
                Role::Engine => column.push_str(Some(common.engine)),
                Role::Rank => column.push_str(r.rank.as_deref()),
                Role::Pid => column.push_int(r.pid),
                Role::Level => column.push_str(r.level.as_deref()),
                Role::Task => column.push_str(r.task.as_deref()),
                Role::Prefix => column.push_str(common.prefix),
                Role::Rule => column.push_str(common.rule),
                Role::Field => {
                    let at = std::mem::replace(&mut self.row[i], usize::MAX);
                    column.push(fields.get(at).map(|(_, v)| v));
                }
            }
        }
    }

    pub fn finish(&mut self) -> Result<RecordBatch, String> {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Column::finish).collect();
        RecordBatch::try_new(Arc::new(self.layout.schema()), arrays).map_err(|e| e.to_string())
    }
}
