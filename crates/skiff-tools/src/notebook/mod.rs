//! Jupyter notebooks (`.ipynb`, nbformat 4): parsing with clear errors, finding a cell by its
//! id or `cell-N` index, and writing the notebook back with everything else in it (metadata,
//! nbformat, the file's indentation and final newline) left as it was. Keys are written sorted,
//! as Jupyter writes them (serde_json keeps insertion order only with its `preserve_order`
//! feature, which would grow every JSON map in the workspace). Read shows notebooks as cells
//! with their outputs ([`render`]); NotebookEdit changes cells ([`edit`]).

pub mod edit;
pub mod render;

use std::path::Path;

use serde_json::{Map, Value};

/// Whether `path` names a notebook (by its extension, as Claude Code decides).
pub fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
}

/// Why text is not a notebook skiff can work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotebookError {
    /// Not JSON at all.
    NotJson(String),
    /// JSON, but not an nbformat 4 notebook (what is wrong, in words).
    NotNotebook(String),
}

/// A parsed notebook: the whole JSON document, kept as it is apart from the cells changed.
#[derive(Debug, Clone)]
pub struct Notebook {
    doc: Value,
    /// Indentation of the file (`None`: written on one line).
    indent: Option<Vec<u8>>,
    /// The file ended with a newline.
    final_newline: bool,
}

impl Notebook {
    /// Parse the text of an `.ipynb` file.
    pub fn parse(text: &str) -> Result<Self, NotebookError> {
        let doc: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| NotebookError::NotJson(e.to_string()))?;
        let Some(map) = doc.as_object() else {
            return Err(NotebookError::NotNotebook(
                "its JSON is not an object".to_owned(),
            ));
        };
        match map.get("nbformat").and_then(Value::as_u64) {
            Some(4..) => {}
            Some(n) => {
                return Err(NotebookError::NotNotebook(format!(
                    "it is an nbformat {n} notebook; only nbformat 4 is supported (upgrade it \
                     with `jupyter nbconvert --to notebook --inplace`)"
                )));
            }
            None => {
                return Err(NotebookError::NotNotebook(
                    "it has no nbformat version number".to_owned(),
                ));
            }
        }
        let Some(cells) = map.get("cells").and_then(Value::as_array) else {
            return Err(NotebookError::NotNotebook(
                "it has no \"cells\" list".to_owned(),
            ));
        };
        if let Some(i) = cells.iter().position(|c| {
            c.get("cell_type").and_then(Value::as_str).is_none() || c.get("source").is_none()
        }) {
            return Err(NotebookError::NotNotebook(format!(
                "cell {i} has no cell_type or no source"
            )));
        }
        Ok(Self {
            doc,
            indent: indentation(text),
            final_newline: text.ends_with('\n'),
        })
    }

    /// The cells.
    pub fn cells(&self) -> &[Value] {
        self.doc
            .get("cells")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn cells_mut(&mut self) -> Option<&mut Vec<Value>> {
        self.doc.get_mut("cells").and_then(Value::as_array_mut)
    }

    /// The notebook's language (`metadata.language_info.name`, else `python`).
    pub fn language(&self) -> String {
        self.doc
            .pointer("/metadata/language_info/name")
            .and_then(Value::as_str)
            .unwrap_or("python")
            .to_owned()
    }

    /// Whether cells carry ids (nbformat 4.5 and later).
    pub fn has_cell_ids(&self) -> bool {
        let major = self
            .doc
            .get("nbformat")
            .and_then(Value::as_u64)
            .unwrap_or(4);
        let minor = self
            .doc
            .get("nbformat_minor")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        major > 4 || minor >= 5
    }

    /// The index of the cell `cell_id` names: a cell's `id`, else the `cell-N` form.
    pub fn find(&self, cell_id: &str) -> Result<usize, String> {
        let cells = self.cells();
        if let Some(i) = cells
            .iter()
            .position(|c| c.get("id").and_then(Value::as_str) == Some(cell_id))
        {
            return Ok(i);
        }
        match index_form(cell_id) {
            Some(i) if i < cells.len() => Ok(i),
            Some(i) => Err(format!("Cell with index {i} does not exist in notebook.")),
            None => Err(format!("Cell with ID \"{cell_id}\" not found in notebook.")),
        }
    }

    /// The notebook as text, in the file's own layout.
    pub fn to_text(&self) -> String {
        let mut out = match &self.indent {
            Some(indent) => {
                let mut buf = Vec::new();
                let fmt = serde_json::ser::PrettyFormatter::with_indent(indent);
                let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
                match serde::Serialize::serialize(&self.doc, &mut ser) {
                    Ok(()) => String::from_utf8(buf).unwrap_or_default(),
                    Err(_) => self.doc.to_string(),
                }
            }
            None => self.doc.to_string(),
        };
        if self.final_newline {
            out.push('\n');
        }
        out
    }
}

/// `cell-N` → N.
fn index_form(cell_id: &str) -> Option<usize> {
    let digits = cell_id.strip_prefix("cell-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The indentation of a JSON file: the leading whitespace of its second line (one space when
/// that line is not indented); `None` for a file on one line.
fn indentation(text: &str) -> Option<Vec<u8>> {
    let second = text.trim_start_matches('\u{feff}').lines().nth(1)?;
    let indent: String = second
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    Some(if indent.is_empty() {
        b" ".to_vec()
    } else {
        indent.into_bytes()
    })
}

/// A cell's source as one string (nbformat allows a string or a list of lines).
pub fn source_text(cell: &Value) -> String {
    join_text(cell.get("source"))
}

/// A string, or a list of strings joined, as nbformat writes multi-line text.
pub fn join_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// `text` in the form `like` uses: a list of lines (each but the last keeping its `\n`) when
/// `like` is a list, else one string.
fn source_value(text: &str, as_lines: bool) -> Value {
    if !as_lines {
        return Value::String(text.to_owned());
    }
    Value::Array(
        text.split_inclusive('\n')
            .map(|l| Value::String(l.to_owned()))
            .collect(),
    )
}

/// A new cell id in Jupyter's style (8 hex digits), unused in this notebook.
fn new_cell_id(notebook: &Notebook) -> String {
    use std::hash::{BuildHasher, Hasher};
    let taken = |id: &str| {
        notebook
            .cells()
            .iter()
            .any(|c| c.get("id").and_then(Value::as_str) == Some(id))
    };
    let mut seed = 0u64;
    loop {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(seed);
        let id = format!("{:08x}", h.finish() & 0xffff_ffff);
        if !taken(&id) {
            return id;
        }
        seed += 1;
    }
}

/// An empty cell of `cell_type` holding `source`, with the keys nbformat writes, in its order.
fn new_cell(cell_type: &str, id: Option<String>, source: Value) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), Value::String(cell_type.to_owned()));
    if cell_type == "code" {
        cell.insert("execution_count".into(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".into(), Value::String(id));
    }
    cell.insert("metadata".into(), Value::Object(Map::new()));
    if cell_type == "code" {
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    }
    cell.insert("source".into(), source);
    Value::Object(cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NB: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"intro\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\\n\",\n    \"text\"\n   ]\n  }\n ],\n \"metadata\": {\"kernelspec\": {\"name\": \"python3\"}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

    #[test]
    fn parse_find_and_write_back_unchanged() {
        let nb = Notebook::parse(NB).unwrap();
        assert_eq!(nb.cells().len(), 1);
        assert_eq!(source_text(&nb.cells()[0]), "# Title\ntext");
        assert_eq!(nb.find("intro"), Ok(0));
        assert_eq!(nb.find("cell-0"), Ok(0));
        assert_eq!(
            nb.find("cell-3"),
            Err("Cell with index 3 does not exist in notebook.".to_owned())
        );
        assert_eq!(
            nb.find("nope"),
            Err("Cell with ID \"nope\" not found in notebook.".to_owned())
        );
        assert!(nb.has_cell_ids());
        assert_eq!(nb.language(), "python");
        let again = Notebook::parse(&nb.to_text()).unwrap();
        assert_eq!(again.doc, nb.doc);
        assert!(
            nb.to_text()
                .starts_with("{\n \"cells\": [\n  {\n   \"cell_type\"")
        );
        assert!(nb.to_text().ends_with("}\n"));
    }

    #[test]
    fn bad_notebooks_are_told_apart() {
        assert!(matches!(
            Notebook::parse("{not json"),
            Err(NotebookError::NotJson(_))
        ));
        let old = r#"{"nbformat": 3, "worksheets": []}"#;
        match Notebook::parse(old) {
            Err(NotebookError::NotNotebook(m)) => assert!(m.contains("nbformat 3"), "{m}"),
            other => panic!("{other:?}"),
        }
        match Notebook::parse(r#"{"nbformat": 4}"#) {
            Err(NotebookError::NotNotebook(m)) => assert!(m.contains("cells"), "{m}"),
            other => panic!("{other:?}"),
        }
        match Notebook::parse("[1,2]") {
            Err(NotebookError::NotNotebook(m)) => assert!(m.contains("object"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sources_keep_their_form() {
        assert_eq!(
            source_value("a\nb\n", true),
            serde_json::json!(["a\n", "b\n"])
        );
        assert_eq!(source_value("a\nb", true), serde_json::json!(["a\n", "b"]));
        assert_eq!(source_value("a\nb", false), serde_json::json!("a\nb"));
        assert_eq!(source_value("", true), serde_json::json!([]));
        assert_eq!(index_form("cell-12"), Some(12));
        assert_eq!(index_form("cell-"), None);
        assert_eq!(index_form("cell-1a"), None);
    }
}
