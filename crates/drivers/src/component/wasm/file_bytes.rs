//! A `.wasm` file's bytes, read into memory of their own (an anonymous mapping) that goes back
//! to the kernel as soon as they are dropped. Must not know what the bytes are.
//!
//! A Python or JavaScript component is 14-19 MB, read at every start of its proxy to be checked
//! and hashed. Read into a `Vec` on a blocking thread, the bytes land in that thread's glibc
//! arena, and once freed they can stay resident for the rest of the run: `malloc_trim` does not
//! shrink another thread's arena from its top. A mapping of their own has no such afterlife.
//! It is private and anonymous, filled with `read`, so a file rewritten meanwhile (a proxy being
//! rebuilt) changes nothing already read, where mapping the file itself could fault.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;
use std::ptr::NonNull;

/// The bytes of one file, as they were when read.
pub struct FileBytes {
    /// The mapping; dangling (and never unmapped) when `capacity` is 0.
    start: NonNull<u8>,
    /// Bytes of the file read into the mapping.
    len: usize,
    /// Bytes mapped: the file's size when it was opened.
    capacity: usize,
}

// SAFETY: the mapping is owned by this value alone and only read through `&self`.
unsafe impl Send for FileBytes {}
// SAFETY: as above; `Deref` hands out shared reads only.
unsafe impl Sync for FileBytes {}

impl FileBytes {
    /// Reads the whole of `path`. A file that shrinks while it is read gives what it had; one
    /// that grows gives its size when opened (the checks that follow refuse either).
    pub fn read(path: &Path) -> io::Result<FileBytes> {
        let mut file = File::open(path)?;
        let capacity = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::FileTooLarge, "larger than memory"))?;
        let mut bytes = FileBytes::mapped(capacity)?;
        // SAFETY: the mapping is `capacity` writable bytes owned by `bytes`, not yet shared.
        let buffer = unsafe { std::slice::from_raw_parts_mut(bytes.start.as_ptr(), capacity) };
        while bytes.len < capacity {
            match file.read(&mut buffer[bytes.len..]) {
                Ok(0) => break,
                Ok(read) => bytes.len += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(bytes)
    }

    /// An empty value with `capacity` bytes mapped, readable and writable.
    fn mapped(capacity: usize) -> io::Result<FileBytes> {
        if capacity == 0 {
            return Ok(FileBytes {
                start: NonNull::dangling(),
                len: 0,
                capacity,
            });
        }
        // SAFETY: a new private anonymous mapping, at an address the kernel chooses.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                capacity,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if start == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let start = NonNull::new(start.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(FileBytes {
            start,
            len: 0,
            capacity,
        })
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: the first `len` bytes of the mapping were written by `read` and the mapping
        // lives as long as `self`; a dangling pointer with `len` 0 is a valid empty slice.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl Drop for FileBytes {
    fn drop(&mut self) {
        if self.capacity > 0 {
            // SAFETY: the mapping made in `mapped`, unmapped once; no slice of it outlives
            // `self` (`Deref` borrows `self`).
            unsafe {
                libc::munmap(self.start.as_ptr().cast(), self.capacity);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("file-bytes-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_is_read_whole() {
        let file = scratch("whole").join("a.wasm");
        let content: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&file, &content).unwrap();
        let bytes = FileBytes::read(&file).unwrap();
        assert_eq!(&bytes[..], &content[..]);
        std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    }

    #[test]
    fn an_empty_file_is_empty_and_a_missing_one_an_error() {
        let dir = scratch("empty");
        std::fs::write(dir.join("empty.wasm"), b"").unwrap();
        assert!(FileBytes::read(&dir.join("empty.wasm")).unwrap().is_empty());
        let missing = FileBytes::read(&dir.join("missing.wasm")).err().unwrap();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
