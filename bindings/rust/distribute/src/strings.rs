//! C strings in and out.
use std::ffi::{c_char, CStr, CString};

use crate::error::{Error, Result};
use crate::sys;

pub(crate) fn to_c(value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| Error::invalid(format!("string {value:?} contains a NUL byte")))
}

pub(crate) fn opt_to_c(value: Option<&str>) -> Result<Option<CString>> {
    value.map(to_c).transpose()
}

pub(crate) fn ptr(value: &Option<CString>) -> *const c_char {
    value.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

/// A borrowed C string (NULL is None), copied.
pub(crate) fn borrowed(raw: *const c_char) -> Option<String> {
    // SAFETY: the library returns NULL or a NUL-terminated string that lives at least
    // until the next call on the handle it came from; it is copied at once.
    (!raw.is_null()).then(|| unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned())
}

/// A string the library handed over (`char**`): copied, then freed.
pub(crate) fn owned(raw: *mut c_char) -> String {
    let text = borrowed(raw).unwrap_or_default();
    // SAFETY: raw came from the library through a char** output and is freed once.
    unsafe { sys::dist_string_free(raw) };
    text
}
