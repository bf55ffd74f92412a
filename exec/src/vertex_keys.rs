//! Results of a string-keyed graph name vertices by their keys: every column the registry
//! declares as [`ColumnType::VertexKey`] holds input ids (which for such a graph are the keys'
//! ranks) while the run orders and limits it, and is turned into a Utf8 column of keys
//! last, so only the rows that are kept are looked up.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use storage::blockfile::keys::VertexKeys;
use storage::GraphStore;

use crate::error::ExecError;
use crate::result::ResultTable;

/// `table` with its vertex columns (those `is_key` names) holding the vertices' string keys,
/// when `store`'s graph has string keys; otherwise `table` unchanged.
pub fn with_keys<S: GraphStore>(
    table: ResultTable,
    is_key: &dyn Fn(&str) -> bool,
    store: &S,
) -> Result<ResultTable, ExecError> {
    let Some(keys) = store.vertex_keys() else {
        return Ok(table);
    };
    let keyed: Vec<bool> = table
        .schema
        .fields()
        .iter()
        .map(|f| is_key(f.name()))
        .collect();
    let fields: Vec<Field> = table
        .schema
        .fields()
        .iter()
        .zip(keyed.iter().chain(std::iter::repeat(&false)))
        .map(|(f, &k)| {
            if k {
                Field::new(f.name(), DataType::Utf8, f.is_nullable())
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        table.schema.metadata().clone(),
    ));
    let mut batches = Vec::with_capacity(table.batches.len());
    for b in &table.batches {
        let cols = b
            .columns()
            .iter()
            .zip(keyed.iter().chain(std::iter::repeat(&false)))
            .map(|(c, &k)| {
                if k {
                    key_column(c, keys)
                } else {
                    Ok(c.clone())
                }
            })
            .collect::<Result<Vec<ArrayRef>, ExecError>>()?;
        batches.push(RecordBatch::try_new(schema.clone(), cols)?);
    }
    Ok(ResultTable {
        schema,
        batches,
        ..table
    })
}

/// The keys of a column of key ranks (nulls stay null).
fn key_column(col: &ArrayRef, keys: &VertexKeys) -> Result<ArrayRef, ExecError> {
    let ids = col
        .as_primitive_opt::<UInt64Type>()
        .ok_or_else(|| ExecError::Other(format!("a vertex column of type {}", col.data_type())))?;
    let mut out = StringBuilder::with_capacity(ids.len(), ids.len() * 16);
    let mut raw = Vec::new();
    for i in 0..ids.len() {
        if ids.is_null(i) {
            out.append_null();
            continue;
        }
        let v = u32::try_from(ids.value(i))
            .map_err(|_| ExecError::Other(format!("vertex {} has no key", ids.value(i))))?;
        raw.clear();
        keys.append_key(v, &mut raw)?;
        let key = std::str::from_utf8(&raw)
            .map_err(|_| ExecError::Other(format!("the key of vertex {v} is not UTF-8")))?;
        out.append_value(key);
    }
    Ok(Arc::new(out.finish()))
}
