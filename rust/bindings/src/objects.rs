//! Cache prefetch hints for readers that walk many scattered objects: only addresses are used,
//! nothing is read through them.

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
