//! A compute node's memory per job: the peak resident set a job reports is that job's, not the
//! worker process's lifetime high-water mark, and what a job freed goes back to the system
//! before the next one starts (so a small job after a large one is measured from a low base).

/// This process's peak resident set (VmHWM of /proc/self/status), bytes; `None` where the
/// kernel does not report it.
pub fn peak_rss() -> Option<u64> {
    status_kib("VmHWM:").map(|k| k * 1024)
}

/// This process's resident set now (VmRSS), bytes.
pub fn current_rss() -> Option<u64> {
    status_kib("VmRSS:").map(|k| k * 1024)
}

fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Starts a job's measurement: returns freed heap pages to the system, then resets the peak
/// resident set to the current one (Linux: "5" written to /proc/self/clear_refs). Returns
/// whether the reset happened; where it is not allowed the peak stays the process's lifetime
/// high-water mark, which only overstates.
///
/// The peak is per process: jobs running at once on one worker (several sessions) share it.
pub fn start_job_measurement() -> bool {
    release_freed_memory();
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Arenas glibc may keep for a compute node's threads: every further thread shares one.
const ARENAS: i32 = 2;
/// Allocations from this size are mapped on their own and unmapped when freed.
const MMAP_FROM: i32 = 128 << 10;

/// Makes freed memory leave the resident set during a job, not only at the next job's start.
/// By default glibc gives every thread that allocates its own arena (a compute node runs a
/// job's workers, a reader per memory-node connection and a watcher), and raises its mmap
/// threshold the first time a large block is freed, so the round buffers, read windows and
/// apply windows of later rounds are carved from the arenas and stay resident after use in
/// each of them. A fixed threshold keeps those blocks mapped on their own (returned on free)
/// and two arenas bound what small allocations leave behind. Called once, before the worker
/// starts threads; elsewhere (musl, other systems) a no-op.
pub fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets glibc's own tunables; it takes no pointer from us.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_FROM);
    }
}

/// Gives the heap's free pages back to the system (glibc keeps freed memory in its arenas,
/// one per thread that allocated, and would count it in the next job's resident set).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; it takes no pointer from us.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_falls_back_to_the_current_resident_set_after_a_reset() {
        // Touch 256 MiB, free it, and check the peak no longer counts it once reset (with room
        // for what tests running beside this one allocate meanwhile).
        let big = vec![1u8; 256 << 20];
        assert!(big.iter().step_by(4096).all(|&b| b == 1));
        drop(big);
        let before = peak_rss().unwrap();
        assert!(before >= 256 << 20, "{before}");
        if !start_job_measurement() {
            return; // not allowed here: the lifetime peak is reported, as documented
        }
        let after = peak_rss().unwrap();
        assert!(after < before - (128 << 20), "{after} of {before}");
        assert!(current_rss().unwrap() > 0);
    }
}
