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
use crate::result::{ResultTable, RowStream};

/// `table` with its vertex columns (those `is_key` names) holding the vertices' string keys,
/// when `store`'s graph has string keys; otherwise `table` unchanged.
pub fn with_keys<S: GraphStore>(
    mut table: ResultTable,
    is_key: &dyn Fn(&str) -> bool,
    store: &S,
) -> Result<ResultTable, ExecError> {
    if store.vertex_keys().is_none() {
        return Ok(table);
    }
    let batches = std::mem::take(&mut table.batches);
    let rows = with_keys_rows(
        RowStream::from_batches(table.schema.clone(), batches),
        is_key,
        store,
    );
    let schema = rows.schema.clone();
    Ok(table.with_rows(schema, rows.collect()?))
}

/// [`with_keys`] over rows as they are built: each batch's keys are looked up when it is
/// pulled.
pub fn with_keys_rows<'a, S: GraphStore>(
    rows: RowStream<'a>,
    is_key: &dyn Fn(&str) -> bool,
    store: &'a S,
) -> RowStream<'a> {
    let Some(keys) = store.vertex_keys() else {
        return rows;
    };
    let keyed: Vec<bool> = rows
        .schema
        .fields()
        .iter()
        .map(|f| is_key(f.name()))
        .collect();
    let fields: Vec<Field> = rows
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
        rows.schema.metadata().clone(),
    ));
    let out = schema.clone();
    let named = rows.batches.map(move |b| {
        let b = b?;
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
        Ok(RecordBatch::try_new(out.clone(), cols)?)
    });
    RowStream {
        schema,
        batches: Box::new(named),
    }
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
