//! The io_uring engine: one ring per active session (rings are pooled and reused), reads
//! submitted in batches and reaped as they complete, so a single thread keeps `depth` reads in
//! flight. Short reads are resubmitted for the remainder; `EINTR`/`EAGAIN` results are retried.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};

use io_uring::{opcode, types, IoUring};

use super::aligned::AlignedBuf;
use super::{Completion, ReadRequest};

/// The rings of one engine.
pub(crate) struct UringBackend {
    fd: RawFd,
    entries: u32,
    rings: Mutex<Vec<IoUring>>,
}

impl UringBackend {
    /// Sets up a ring and reads one block through it; `None` when the kernel refuses either
    /// (then the caller falls back to the pread pool).
    pub(crate) fn try_new(file: &Arc<File>, depth: u32) -> Option<UringBackend> {
        let entries = depth.clamp(1, 4096).next_power_of_two();
        let ring = IoUring::new(entries).ok()?;
        let backend = UringBackend {
            fd: file.as_raw_fd(),
            entries,
            rings: Mutex::new(vec![ring]),
        };
        let mut s = backend.session(u64::MAX).ok()?;
        s.submit(ReadRequest {
            tag: 0,
            offset: 0,
            buf: AlignedBuf::new(1),
        })
        .ok()?;
        let mut ok = false;
        s.wait(&mut |c: Completion| ok = c.result.is_ok()).ok()?;
        drop(s);
        ok.then_some(backend)
    }

    pub(crate) fn session(&self, file_len: u64) -> io::Result<UringSession<'_>> {
        let pooled = self.rings.lock().ok().and_then(|mut v| v.pop());
        let ring = match pooled {
            Some(r) => r,
            None => IoUring::new(self.entries)?,
        };
        Ok(UringSession {
            backend: self,
            ring: Some(ring),
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            file_len,
            broken: false,
        })
    }
}

struct Inflight {
    tag: u64,
    offset: u64,
    buf: AlignedBuf,
    done: usize,
}

/// One session's ring and the buffers the kernel is writing into.
pub(crate) struct UringSession<'a> {
    backend: &'a UringBackend,
    ring: Option<IoUring>,
    /// Indexed by `user_data`; `Some` while the kernel owns the buffer.
    slots: Vec<Option<Inflight>>,
    free: Vec<usize>,
    live: usize,
    file_len: u64,
    /// A reap failed: buffers and ring are leaked on drop rather than freed under the kernel.
    broken: bool,
}

impl UringSession<'_> {
    fn push(&mut self, slot: usize) -> io::Result<()> {
        let ring = self
            .ring
            .as_mut()
            .ok_or_else(|| io::Error::other("ring gone"))?;
        let inf = self.slots[slot].as_mut().expect("slot is live");
        let len = inf.buf.len() - inf.done;
        let len32 = u32::try_from(len).map_err(|_| io::Error::other("read larger than 4 GiB"))?;
        // SAFETY: `done < buf.len()`, so the pointer stays inside the buffer's allocation.
        let ptr = unsafe { inf.buf.as_mut_ptr().add(inf.done) };
        let sqe = opcode::Read::new(types::Fd(self.backend.fd), ptr, len32)
            .offset(inf.offset + inf.done as u64)
            .build()
            .user_data(slot as u64);
        if ring.submission().is_full() {
            ring.submit()?;
        }
        // SAFETY: the buffer is owned by `self.slots[slot]` and is neither moved out, touched nor
        // freed until this entry's completion has been reaped (`wait`), and `Drop` reaps every
        // live entry before the slots are freed (or leaks them if it cannot). The fd belongs to
        // the engine's `File`, which outlives every session.
        unsafe { ring.submission().push(&sqe) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))
    }

    pub(crate) fn submit(&mut self, req: ReadRequest) -> io::Result<()> {
        let inf = Inflight {
            tag: req.tag,
            offset: req.offset,
            buf: req.buf,
            done: 0,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(inf);
                s
            }
            None => {
                self.slots.push(Some(inf));
                self.slots.len() - 1
            }
        };
        if let Err(e) = self.push(slot) {
            self.slots[slot] = None;
            self.free.push(slot);
            return Err(e);
        }
        self.live += 1;
        Ok(())
    }

    /// Reads queued in the submission ring that the kernel has not taken yet.
    #[cfg(test)]
    pub(crate) fn unsubmitted(&mut self) -> usize {
        self.ring.as_mut().map_or(0, |r| r.submission().len())
    }

    /// Hands the queued reads to the kernel without waiting, so the device works on them while
    /// the caller computes. A busy or interrupted ring keeps them queued for the next call.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        let Some(ring) = self.ring.as_mut() else {
            return Ok(());
        };
        if ring.submission().is_empty() {
            return Ok(());
        }
        match ring.submit() {
            Ok(_) => Ok(()),
            Err(e) if busy_or_interrupted(&e) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Submits what is queued, waits for one completion, and hands over every finished read.
    pub(crate) fn wait(&mut self, f: &mut dyn FnMut(Completion)) -> io::Result<()> {
        let mut delivered = 0;
        while delivered == 0 && self.live > 0 {
            let ring = self
                .ring
                .as_mut()
                .ok_or_else(|| io::Error::other("ring gone"))?;
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if busy_or_interrupted(&e) => {}
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
            let cqes: Vec<(u64, i32)> = ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (ud, res) in cqes {
                let slot = ud as usize;
                let Some(inf) = self.slots.get_mut(slot).and_then(|s| s.as_mut()) else {
                    continue;
                };
                let retry = if res < 0 {
                    -res == libc::EINTR || -res == libc::EAGAIN
                } else {
                    let n = res as usize;
                    inf.done += n;
                    n > 0
                        && inf.done < inf.buf.len()
                        && inf.offset + (inf.done as u64) < self.file_len
                };
                if retry && self.push(slot).is_ok() {
                    continue;
                }
                let mut inf = self.slots[slot].take().expect("slot is live");
                self.free.push(slot);
                self.live -= 1;
                let result = if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    let done = inf.done;
                    inf.buf.as_bytes_mut()[done..].fill(0);
                    Ok(done)
                };
                delivered += 1;
                f(Completion {
                    tag: inf.tag,
                    offset: inf.offset,
                    buf: inf.buf,
                    result,
                });
            }
        }
        Ok(())
    }
}

/// An `io_uring_enter` that did nothing for now (a signal, or the rings are full) and is
/// simply called again later.
fn busy_or_interrupted(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    )
}

impl Drop for UringSession<'_> {
    fn drop(&mut self) {
        while self.live > 0 && !self.broken {
            if self.wait(&mut |_| {}).is_err() {
                break;
            }
        }
        if self.live > 0 {
            // The kernel may still write into these buffers: leak them and the ring rather than
            // free memory under it.
            for s in self.slots.drain(..).flatten() {
                std::mem::forget(s.buf);
            }
            std::mem::forget(self.ring.take());
            return;
        }
        if let (Some(ring), Ok(mut pool)) = (self.ring.take(), self.backend.rings.lock()) {
            pool.push(ring);
        }
    }
}
