//! Byte sizes as people write them (`64KB`, `1.5GiB`, `65536`) and as frontier prints them
//! (`64.0 KiB`). Every place that reads or shows a size uses these two functions, so a size that
//! works in `SET cache = '1.5GiB'` works in `frontier memnode --capacity 1.5GiB` too.

use std::fmt;

/// Why a text is not a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// The text is not written as a number with an optional unit.
    NotASize,
    /// The text is a size, but more bytes than 64 bits hold.
    TooLarge,
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeError::NotASize => f.write_str(
                "not a size: write a number with an optional unit, such as 65536, 512MB, 1.5GiB or 64k \
                 (units B, KB, MB, GB, TB = powers of 1000; KiB, MiB, GiB, TiB or K, M, G, T = powers of 1024)",
            ),
            SizeError::TooLarge => f.write_str("size does not fit in 64 bits"),
        }
    }
}

impl std::error::Error for SizeError {}

/// Reads a size: a whole or decimal number, optional blanks, then an optional unit,
/// case-insensitively. `KB`/`MB`/`GB`/`TB` are powers of 1000; `KiB`/`MiB`/`GiB`/`TiB` and the
/// short `K`/`M`/`G`/`T` powers of 1024; `B` or no unit means bytes. A fractional result is
/// rounded down to whole bytes (`0.1KiB` is 102).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let number_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(number_end);
    let multiplier: u128 = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        _ => return Err(SizeError::NotASize),
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) {
        return Err(SizeError::NotASize);
    }
    if number.contains('.') && (frac.is_empty() || !all_digits(frac)) {
        return Err(SizeError::NotASize);
    }
    // Beyond 18 fractional digits the contribution is far below one byte.
    let frac = &frac[..frac.len().min(18)];
    let scale = 10u128.pow(frac.len() as u32);
    let whole: u128 = whole.parse().map_err(|_| SizeError::TooLarge)?;
    let frac: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| SizeError::NotASize)?
    };
    let bytes = whole
        .checked_mul(scale)
        .and_then(|x| x.checked_add(frac))
        .and_then(|x| x.checked_mul(multiplier))
        .ok_or(SizeError::TooLarge)?
        / scale;
    u64::try_from(bytes).map_err(|_| SizeError::TooLarge)
}

/// Bytes as a human size with binary units: `100 B`, `64.0 KiB`, `1.5 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_unit() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("100B"), Ok(100));
        assert_eq!(parse_size(" 100b "), Ok(100));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("512 MB"), Ok(512_000_000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("16tib"), Ok(16 << 40));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size(" 2 mib "), Ok(2 << 20));
        assert_eq!(parse_size("3G"), Ok(3 << 30));
    }

    #[test]
    fn reads_fractions_rounding_down() {
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("1.5kib"), Ok(1536));
        assert_eq!(parse_size("0.1KiB"), Ok(102));
        assert_eq!(parse_size("0.5"), Ok(0));
    }

    #[test]
    fn refuses_what_is_not_a_size() {
        for text in [
            "", "KB", "1.KB", ".5KB", "1.2.3KB", "x64KB", "64KBs", "-1KB", "12XB", "64 K B",
        ] {
            assert_eq!(parse_size(text), Err(SizeError::NotASize), "{text:?}");
        }
    }

    #[test]
    fn refuses_what_does_not_fit() {
        assert_eq!(parse_size("99999999999TB"), Err(SizeError::TooLarge));
        assert_eq!(parse_size("99999999999TiB"), Err(SizeError::TooLarge));
        assert_eq!(
            parse_size("999999999999999999999999999999999999999999B"),
            Err(SizeError::TooLarge)
        );
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("18446744073709551616"), Err(SizeError::TooLarge));
    }

    #[test]
    fn formats_with_binary_units() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(1023), "1023 B");
        assert_eq!(format_size(65536), "64.0 KiB");
        assert_eq!(format_size(3 << 30), "3.0 GiB");
        assert_eq!(format_size(3 << 29), "1.5 GiB");
        assert_eq!(format_size(u64::MAX), "16777216.0 TiB");
    }

    #[test]
    fn what_is_formatted_reads_back() {
        for bytes in [0, 1, 512, 1 << 10, 64 << 20, 3 << 29, 6 << 30] {
            assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        }
    }
}
