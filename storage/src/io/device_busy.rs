//! How long the block device under a file has been busy: the kernel's `io_ticks` (milliseconds
//! with at least one request in flight, field 10 of `/sys/dev/block/MAJ:MIN/stat`).
//!
//! Why: PROFILE's wait time says how long threads were blocked on reads, not whether the device
//! was kept busy meanwhile. Out of core, a pass is at the device's limit only when the device
//! is busy nearly all of the time; the busy share between two readings shows how far it is.
//! The figure counts every process's requests to the device, not only this one's.

use std::path::{Path, PathBuf};

/// The statistics file of the block device (or partition) holding a file.
#[derive(Debug, Clone)]
pub struct DeviceBusy {
    stat: PathBuf,
}

impl DeviceBusy {
    /// The device under `path`, when it is a block device the kernel keeps statistics for
    /// (Linux only; `None` on tmpfs, overlay or network file systems, or elsewhere).
    pub fn of(path: &Path) -> Option<DeviceBusy> {
        let stat = stat_file(path)?;
        let busy = DeviceBusy { stat };
        busy.busy_ms().map(|_| busy)
    }

    /// Milliseconds the device has been busy since boot; `None` when the file cannot be read.
    pub fn busy_ms(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.stat).ok()?;
        io_ticks(&text)
    }
}

#[cfg(target_os = "linux")]
fn stat_file(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    // Major 0 is the kernel's anonymous devices (tmpfs, overlay, FUSE): no disk behind them.
    (major != 0).then(|| PathBuf::from(format!("/sys/dev/block/{major}:{minor}/stat")))
}

#[cfg(not(target_os = "linux"))]
fn stat_file(_path: &Path) -> Option<PathBuf> {
    None
}

/// Field 10 of a block device's `stat` file (whitespace-separated counters).
fn io_ticks(stat: &str) -> Option<u64> {
    stat.split_whitespace().nth(9)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_ticks_is_the_tenth_counter() {
        // A line as Linux 6.x writes it: reads (4 fields), writes (4), in flight, io_ticks,
        // time in queue, then discards and flushes.
        let line = "  193436     2066 46409238   117950   232064   128720 11046904  1339526        0   283184  1460339    0 0 0 0 1240 2864\n";
        assert_eq!(io_ticks(line), Some(283184));
        assert_eq!(io_ticks("1 2 3"), None);
        assert_eq!(io_ticks("1 2 3 4 5 6 7 8 9 x"), None);
    }

    #[test]
    fn a_file_on_a_disk_has_a_busy_time_that_never_goes_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        // Whether the test directory sits on a block device depends on the machine; when it
        // does, two readings must be counters of the same device.
        if let Some(busy) = DeviceBusy::of(&file) {
            let a = busy.busy_ms().expect("readable once, readable again");
            let b = busy.busy_ms().expect("readable again");
            assert!(b >= a);
        }
        assert!(DeviceBusy::of(&dir.path().join("missing")).is_none());
    }
}
