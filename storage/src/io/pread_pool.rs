//! The fallback engine: a pool of threads doing blocking `pread`s, CAVE's design. Used when
//! io_uring is unavailable; each in-flight read occupies a pool thread, so the pool is sized to
//! the depth (capped). Safe code only: the buffer travels with the job and comes back with the
//! completion.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::{Completion, ReadRequest};

struct Job {
    file: Arc<File>,
    req: ReadRequest,
    reply: Sender<Completion>,
}

/// The worker threads, shared by every session of one engine.
pub(crate) struct PreadPool {
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf[done..].fill(0);
    Ok(done)
}

impl PreadPool {
    pub(crate) fn new(threads: usize) -> PreadPool {
        let (tx, rx) = unbounded::<Job>();
        let workers = (0..threads)
            .filter_map(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("frontier-pread-{i}"))
                    .spawn(move || {
                        while let Ok(Job {
                            file,
                            mut req,
                            reply,
                        }) = rx.recv()
                        {
                            let result = read_full(&file, req.buf.as_bytes_mut(), req.offset);
                            let _ = reply.send(Completion {
                                tag: req.tag,
                                offset: req.offset,
                                buf: req.buf,
                                result,
                            });
                        }
                    })
                    .ok()
            })
            .collect();
        PreadPool {
            jobs: Some(tx),
            workers,
        }
    }

    /// Threads actually running (spawning may fail under tight limits; with none at all the
    /// sessions read inline).
    pub(crate) fn threads(&self) -> usize {
        self.workers.len()
    }

    pub(crate) fn session<'a>(&'a self, file: &Arc<File>) -> PreadSession<'a> {
        let (tx, rx) = unbounded();
        PreadSession {
            pool: self,
            file: file.clone(),
            tx,
            rx,
        }
    }
}

impl Drop for PreadPool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// One caller's completions channel.
pub(crate) struct PreadSession<'a> {
    pool: &'a PreadPool,
    file: Arc<File>,
    tx: Sender<Completion>,
    rx: Receiver<Completion>,
}

impl PreadSession<'_> {
    pub(crate) fn submit(&mut self, mut req: ReadRequest) -> io::Result<()> {
        match (&self.pool.jobs, self.pool.workers.is_empty()) {
            (Some(jobs), false) => {
                let job = Job {
                    file: self.file.clone(),
                    req,
                    reply: self.tx.clone(),
                };
                jobs.send(job)
                    .map_err(|_| io::Error::other("pread pool has shut down"))
            }
            _ => {
                // No worker threads: read inline, completion delivered by the next wait.
                let result = read_full(&self.file, req.buf.as_bytes_mut(), req.offset);
                let _ = self.tx.send(Completion {
                    tag: req.tag,
                    offset: req.offset,
                    buf: req.buf,
                    result,
                });
                Ok(())
            }
        }
    }

    /// Blocks for one completion, then takes whatever else is ready. Only called with reads in
    /// flight, whose jobs hold a sender, so `recv` cannot hang on a dead channel.
    pub(crate) fn wait(&mut self, f: &mut dyn FnMut(Completion)) -> io::Result<()> {
        let first = self
            .rx
            .recv()
            .map_err(|_| io::Error::other("pread pool lost a read"))?;
        f(first);
        while let Ok(c) = self.rx.try_recv() {
            f(c);
        }
        Ok(())
    }
}
