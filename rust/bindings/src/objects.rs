//! Reading Python objects straight from memory: the slot layout of a `__slots__` class (its
//! instances' fields at fixed offsets, read without an attribute lookup), and cache prefetch hints
//! for readers that walk many scattered objects.

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::tally::SlotField;

/// The byte offsets of named object slots of one class, in the order they were asked for.
///
/// They hold for instances of exactly that class: a caller checks an object's type before
/// [`SlotLayout::fields`] (a subclass may add a `__dict__` or properties in front of the slots).
#[derive(Clone, Copy, Debug)]
pub struct SlotLayout<const N: usize> {
    offsets: [usize; N],
}

impl<const N: usize> SlotLayout<N> {
    /// The layout of `names` in `ty`, or `None` (read those attributes with `getattr`) unless `ty`
    /// is a heap type with the generic attribute lookup whose class attributes `names` are still
    /// their own member descriptors, or [`SlotField`]s of `ty` (not, say, properties put in their
    /// place), of object slots: then reading the slots gives exactly what `getattr` gives.
    pub fn of(ty: &Bound<'_, PyType>, names: [&str; N]) -> Option<Self> {
        let py = ty.py();
        let namespace = ty.getattr(intern!(py, "__dict__")).ok()?;
        for name in names {
            let descriptor = namespace.get_item(name).ok()?;
            let is_member =
                descriptor.get_type().name().ok()?.to_str().ok()? == "member_descriptor";
            if !is_member && !SlotField::stands_for_slot_of(&descriptor, ty) {
                return None;
            }
        }
        let mut offsets = [None; N];
        // SAFETY: `ty` is a live type object; a heap type's member table is an array of
        // `PyMemberDef` ended by one with a null name, and stays valid while the type lives.
        unsafe {
            let raw = ty.as_type_ptr();
            if ffi::PyType_GetFlags(raw) & ffi::Py_TPFLAGS_HEAPTYPE == 0 {
                return None;
            }
            let getattro = ffi::PyType_GetSlot(raw, ffi::Py_tp_getattro);
            if getattro != ffi::PyObject_GenericGetAttr as *mut std::ffi::c_void {
                return None;
            }
            let mut member =
                ffi::PyType_GetSlot(raw, ffi::Py_tp_members) as *const ffi::PyMemberDef;
            while !member.is_null() && !(*member).name.is_null() {
                let m = &*member;
                if m.type_code == ffi::Py_T_OBJECT_EX {
                    let name = std::ffi::CStr::from_ptr(m.name).to_bytes();
                    if let Some(k) = names.iter().position(|n| n.as_bytes() == name) {
                        offsets[k] = Some(m.offset as usize);
                    }
                }
                member = member.add(1);
            }
        }
        let mut out = [0; N];
        for (o, found) in out.iter_mut().zip(offsets) {
            *o = found?;
        }
        Some(SlotLayout { offsets: out })
    }

    /// The byte offsets, in the order the names were given.
    pub fn offsets(&self) -> [usize; N] {
        self.offsets
    }

    /// The references in `object`'s slots, borrowed from it (null for an unset slot).
    ///
    /// # Safety
    /// `object` is a live instance of exactly the class this layout was read from, and stays
    /// unchanged while the references are used (no Python code runs in between).
    #[inline]
    pub unsafe fn fields(&self, object: *mut ffi::PyObject) -> [*mut ffi::PyObject; N] {
        let base = object as *const u8;
        self.offsets
            .map(|offset| *(base.add(offset) as *const *mut ffi::PyObject))
    }
}

/// Start loading the cache line at `address` into cache: a hint that reads nothing and never
/// faults, whatever the address (a no-op off x86-64).
#[inline]
pub fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect and never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(address as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
