//! `VERIFY GRAPH`: reads every block of a graph file and checks it against the block checksums,
//! then every section checksum, then the structural checks of [`GraphFile::open`]. Unlike a
//! load, which stops at the first inconsistent section, the error names the first bad block and
//! the section it belongs to, so a user can tell a flipped bit from a truncated copy.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::blockfile::format::{Section, SectionKind, Superblock, BLOCK_SIZE};
use crate::blockfile::open::{read_section, GraphFile};
use crate::error::{Result, StoreError};

/// What a successful verification looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Blocks compared against their checksum (the superblock excluded).
    pub blocks_checked: u64,
    /// Sections whose checksum was recomputed.
    pub sections_checked: usize,
    /// Bytes read.
    pub bytes_read: u64,
    /// |V| of the file.
    pub vertices: u64,
    /// Arcs per direction of the file.
    pub arcs: u64,
}

fn section_of(sb: &Superblock, block: u64) -> String {
    sb.sections
        .iter()
        .find(|s| block >= s.first_block() && block < s.first_block() + s.blocks())
        .map(|s| {
            format!(
                "section {:?}, its block {}",
                s.kind,
                block - s.first_block()
            )
        })
        .unwrap_or_else(|| "in no section".into())
}

/// Checks every block and section of the graph file at `path`.
pub fn verify_file(path: impl AsRef<Path>) -> Result<VerifyReport> {
    let path = path.as_ref();
    let mut f = File::open(path).map_err(|e| StoreError::io(path, e))?;
    let file_len = f.metadata().map_err(|e| StoreError::io(path, e))?.len();
    let bad = |why: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        why,
    };
    let mut block = vec![0u8; BLOCK_SIZE];
    if file_len < BLOCK_SIZE as u64 {
        return Err(bad(format!(
            "file is {file_len} bytes, shorter than its superblock (truncated?)"
        )));
    }
    f.read_exact(&mut block)
        .map_err(|e| StoreError::io(path, e))?;
    let sb = Superblock::decode(&block, path, file_len)?;
    let crc_section = *sb
        .section(SectionKind::BlockCrcs)
        .ok_or_else(|| bad("section BlockCrcs is missing".into()))?;
    let raw = read_section(&f, path, &crc_section)?;
    let crcs: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut bytes_read = (BLOCK_SIZE + raw.len()) as u64;

    // Every block that has a checksum, in one sequential pass.
    let mut checked = 0u64;
    f.seek(SeekFrom::Start(BLOCK_SIZE as u64))
        .map_err(|e| StoreError::io(path, e))?;
    let mut buf = vec![0u8; 4 << 20];
    let mut b = 1u64;
    while b < crcs.len() as u64 {
        let n_blocks = ((crcs.len() as u64 - b) as usize).min(buf.len() / BLOCK_SIZE);
        let n = n_blocks * BLOCK_SIZE;
        f.read_exact(&mut buf[..n]).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                bad(format!(
                    "block {b} ({}) lies past the end of the file (truncated?)",
                    section_of(&sb, b)
                ))
            } else {
                StoreError::io(path, e)
            }
        })?;
        bytes_read += n as u64;
        for chunk in buf[..n].chunks_exact(BLOCK_SIZE) {
            if crc32fast::hash(chunk) != crcs[b as usize] {
                return Err(bad(format!(
                    "block {b} ({}) checksum mismatch",
                    section_of(&sb, b)
                )));
            }
            b += 1;
            checked += 1;
        }
    }

    // Every section checksum.
    let mut sections = 0;
    for s in &sb.sections {
        section_crc(&mut f, path, s, &mut buf)?;
        bytes_read += s.length;
        sections += 1;
    }
    // Structure (index entries inside their sections, degree sums, id order).
    let gf = GraphFile::open(path)?;
    Ok(VerifyReport {
        blocks_checked: checked,
        sections_checked: sections,
        bytes_read,
        vertices: gf.superblock.vertices,
        arcs: gf.superblock.arcs,
    })
}

fn section_crc(f: &mut File, path: &Path, s: &Section, buf: &mut [u8]) -> Result<()> {
    f.seek(SeekFrom::Start(s.offset))
        .map_err(|e| StoreError::io(path, e))?;
    let mut h = crc32fast::Hasher::new();
    let mut left = s.length;
    while left > 0 {
        let n = (buf.len() as u64).min(left) as usize;
        f.read_exact(&mut buf[..n])
            .map_err(|e| StoreError::io(path, e))?;
        h.update(&buf[..n]);
        left -= n as u64;
    }
    if h.finalize() != s.crc {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            why: format!("section {:?} checksum mismatch", s.kind),
        });
    }
    Ok(())
}
