//! The conductor's own stdin and stdout, as the editor's (or a parent conductor's) link:
//! pipes and sockets without blocking, on the runtime's thread; anything else on threads.
//!
//! Non-blocking is a property of the open file description, which other processes may share.
//! Pipes and sockets only: a terminal is shared with the shell that started us, and a regular
//! file cannot be polled. stdout stays blocking when it is the same file as stderr (`2>&1`
//! into one pipe): the log's writes would otherwise fail whenever that pipe is full.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::net::unix::pipe;

/// stdin as a non-blocking pipe end, or the descriptor back when it stays blocking.
/// Must be called inside the runtime.
pub(super) fn input(fd: OwnedFd) -> Result<pipe::Receiver, OwnedFd> {
    if !pollable(fd.as_fd()) {
        return Err(fd);
    }
    nonblocking(fd, pipe::Receiver::from_owned_fd_unchecked)
}

/// stdout as a non-blocking pipe end, or the descriptor back when it stays blocking.
/// Must be called inside the runtime.
pub(super) fn output(fd: OwnedFd) -> Result<pipe::Sender, OwnedFd> {
    if !pollable(fd.as_fd()) || same_file(fd.as_fd(), io::stderr().as_fd()) {
        return Err(fd);
    }
    nonblocking(fd, pipe::Sender::from_owned_fd_unchecked)
}

/// `fd` made non-blocking and registered with the runtime; on any failure it is put back
/// as it was and returned.
fn nonblocking<T>(fd: OwnedFd, register: fn(OwnedFd) -> io::Result<T>) -> Result<T, OwnedFd> {
    let Ok(flags) = flags(fd.as_fd()) else {
        return Err(fd);
    };
    if set_flags(fd.as_fd(), flags | libc::O_NONBLOCK).is_err() {
        return Err(fd);
    }
    let registered = fd.try_clone().and_then(register);
    registered.map_err(|error| {
        tracing::debug!(%error, "stdio stays blocking");
        let _ = set_flags(fd.as_fd(), flags);
        fd
    })
}

/// A pipe or a socket: something epoll can wait on that is ours to make non-blocking.
fn pollable(fd: BorrowedFd<'_>) -> bool {
    metadata(fd).is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
}

fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (metadata(a), metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn metadata(fd: BorrowedFd<'_>) -> io::Result<std::fs::Metadata> {
    File::from(fd.try_clone_to_owned()?).metadata()
}

fn flags(fd: BorrowedFd<'_>) -> io::Result<libc::c_int> {
    // SAFETY: F_GETFL only reads the descriptor's status flags.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(flags)
}

fn set_flags(fd: BorrowedFd<'_>, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: F_SETFL changes only the status flags of a descriptor we hold.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pipes_become_non_blocking_and_files_stay_as_they_are() {
        let (rx, tx) = std::io::pipe().unwrap();
        let receiver = input(OwnedFd::from(rx)).expect("a pipe is polled");
        let sender = output(OwnedFd::from(tx)).expect("a pipe is polled");
        let nonblocking = |fd: BorrowedFd<'_>| flags(fd).unwrap() & libc::O_NONBLOCK != 0;
        assert!(nonblocking(receiver.as_fd()) && nonblocking(sender.as_fd()));

        let file = File::open("/proc/self/status").unwrap();
        let fd = input(OwnedFd::from(file)).expect_err("a regular file stays blocking");
        assert!(!nonblocking(fd.as_fd()));
    }
}
