//! The output tables' columns as Python sees them, handed over without copying or converting
//! a value: a number column's `Vec` moves into a [`PyColumn`], which numpy reads in place
//! through `__array_interface__` (the array keeps the column alive as its base); a name column
//! (flows, queues, links: a few names repeated on every row) arrives dictionary-encoded as a
//! [`PyStrings`], row codes plus each label once, which pandas takes as a categorical without
//! looking at a row in Python.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use quicksim_scenario::Column;

/// The values of a number column, owned; never changed once built (the class is frozen), so
/// the pointer numpy holds stays valid and nothing writes through it (numpy sees it read-only).
enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U32(Vec<u32>),
}

/// A number column (float64, int64, or uint32 codes of a [`PyStrings`]) that numpy reads in
/// place: `numpy.asarray(column)`.
#[pyclass(module = "quicksim._core", name = "Column", frozen)]
pub(crate) struct PyColumn {
    values: Values,
}

impl PyColumn {
    fn parts(&self) -> (*const u8, usize, &'static str) {
        // numpy's type strings: byte order, kind, size.
        let (ptr, len, kind) = match &self.values {
            Values::F64(v) => (v.as_ptr().cast::<u8>(), v.len(), "f8"),
            Values::I64(v) => (v.as_ptr().cast::<u8>(), v.len(), "i8"),
            Values::U32(v) => (v.as_ptr().cast::<u8>(), v.len(), "u4"),
        };
        let typestr = match (cfg!(target_endian = "little"), kind) {
            (true, "f8") => "<f8",
            (true, "i8") => "<i8",
            (true, _) => "<u4",
            (false, "f8") => ">f8",
            (false, "i8") => ">i8",
            (false, _) => ">u4",
        };
        (ptr, len, typestr)
    }
}

#[pymethods]
impl PyColumn {
    fn __len__(&self) -> usize {
        self.parts().1
    }

    /// numpy's array interface (version 3): the data pointer, read-only, the length and type.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (ptr, len, typestr) = self.parts();
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, [len])?)?;
        d.set_item("typestr", typestr)?;
        d.set_item("data", (ptr as usize, true))?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let (_, len, typestr) = self.parts();
        format!("<quicksim._core.Column {typestr} x {len}>")
    }
}

/// A string column dictionary-encoded: row i is `labels[codes[i]]`.
#[pyclass(module = "quicksim._core", name = "Strings", frozen, get_all)]
pub(crate) struct PyStrings {
    /// The rows' indexes into `labels` (a uint32 [`PyColumn`]).
    codes: Py<PyColumn>,
    /// Each distinct string once (possibly some no row uses).
    labels: Py<PyList>,
}

#[pymethods]
impl PyStrings {
    fn __len__(&self) -> usize {
        self.codes.get().parts().1
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<quicksim._core.Strings {} rows, {} labels>", self.__len__(), self.labels.bind(py).len())
    }
}

/// A column for Python: numbers and dictionary-encoded strings without a copy; a plain string
/// column (the qlog files' text) as a list, each distinct string one Python object.
pub(crate) fn to_py(py: Python<'_>, col: Column) -> PyResult<Bound<'_, PyAny>> {
    let column = |values| Bound::new(py, PyColumn { values });
    Ok(match col {
        Column::F64(v) => column(Values::F64(v))?.into_any(),
        Column::I64(v) => column(Values::I64(v))?.into_any(),
        Column::Dict { codes, labels } => {
            let labels = PyList::new(py, labels.iter().map(|s| PyString::new(py, s)))?;
            let codes = column(Values::U32(codes))?;
            Bound::new(py, PyStrings { codes: codes.unbind(), labels: labels.unbind() })?.into_any()
        }
        Column::Str(v) => {
            let mut seen: std::collections::HashMap<&str, Bound<'_, PyAny>> =
                std::collections::HashMap::new();
            let l = PyList::empty(py);
            for s in &v {
                let o = match seen.get(s.as_str()) {
                    Some(o) => o.clone(),
                    None => {
                        let o = PyString::new(py, s).into_any();
                        seen.insert(s.as_str(), o.clone());
                        o
                    }
                };
                l.append(o)?;
            }
            l.into_any()
        }
    })
}
