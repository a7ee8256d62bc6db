//! The switch for the hand-written SIMD paths: each is taken only where the processor has the
//! instructions and the environment does not say `SCOREKIT_SIMD=off` (read once per process), so
//! the portable paths can be tested on any machine and a suspected SIMD bug ruled out by a user.

use std::sync::OnceLock;

/// Whether hand-written SIMD code may run (`SCOREKIT_SIMD` is not `off`, case-insensitive).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| allows(std::env::var("SCOREKIT_SIMD").ok().as_deref()))
}

/// The switch's reading of a `SCOREKIT_SIMD` value.
fn allows(value: Option<&str>) -> bool {
    !value.is_some_and(|v| v.trim().eq_ignore_ascii_case("off"))
}

/// AVX2 paths may run: the processor has AVX2 and the switch is on.
#[cfg(target_arch = "x86_64")]
pub fn avx2() -> bool {
    enabled() && std::is_x86_feature_detected!("avx2")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_off_turns_simd_off() {
        assert!(allows(None));
        assert!(allows(Some("on")));
        assert!(allows(Some("")));
        assert!(!allows(Some("off")));
        assert!(!allows(Some(" OFF ")));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_follows_the_switch() {
        if std::env::var("SCOREKIT_SIMD").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off")) {
            assert!(!avx2());
        } else {
            assert_eq!(avx2(), std::is_x86_feature_detected!("avx2"));
        }
    }
}
