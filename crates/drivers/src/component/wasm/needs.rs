//! What a `.wasm` file needs from its host, read from its bytes without compiling it: the
//! interfaces it imports and whether it uses the component model's async ABI. Must not know
//! how a guest is run; it knows only the names the WASM host provides.
//!
//! `check`, `doctor` and the loader all ask [`unmet_need`], so a proxy the host cannot run is
//! refused with one message, by `check` before anything starts and by the loader before a
//! compilation that can take seconds for a large component.

use std::path::Path;

use wasmparser::{CanonicalFunction, CanonicalOption, Chunk, Parser, Payload};

use super::file_bytes::FileBytes;
use crate::spec::WasmKind;

/// The WASI 0.2 packages the host links for a component; `wasi:sockets` and `wasi:http` with
/// everything that would reach the network denied.
pub const PROVIDED_PACKAGES: [&str; 7] = [
    "wasi:cli",
    "wasi:clocks",
    "wasi:filesystem",
    "wasi:http",
    "wasi:io",
    "wasi:random",
    "wasi:sockets",
];

/// The one module a preview 1 module may import from, and its functions.
const PREVIEW1: &str = "wasi_snapshot_preview1";
const PREVIEW1_FUNCTIONS: [&str; 46] = [
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "fd_advise",
    "fd_allocate",
    "fd_close",
    "fd_datasync",
    "fd_fdstat_get",
    "fd_fdstat_set_flags",
    "fd_fdstat_set_rights",
    "fd_filestat_get",
    "fd_filestat_set_size",
    "fd_filestat_set_times",
    "fd_pread",
    "fd_prestat_get",
    "fd_prestat_dir_name",
    "fd_pwrite",
    "fd_read",
    "fd_readdir",
    "fd_renumber",
    "fd_seek",
    "fd_sync",
    "fd_tell",
    "fd_write",
    "path_create_directory",
    "path_filestat_get",
    "path_filestat_set_times",
    "path_link",
    "path_open",
    "path_readlink",
    "path_remove_directory",
    "path_rename",
    "path_symlink",
    "path_unlink_file",
    "poll_oneoff",
    "proc_exit",
    "proc_raise",
    "sched_yield",
    "random_get",
    "sock_accept",
    "sock_recv",
    "sock_send",
    "sock_shutdown",
];

/// A need of a `.wasm` file that the host does not meet; the text is what `check`, `doctor`
/// and the loader say.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnmetNeed {
    #[error(
        "imports `{module}::{name}`, which a WASM proxy cannot have: only WASI preview 1 \
         (`wasi_snapshot_preview1`) is provided"
    )]
    ModuleImport { module: String, name: String },
    #[error(
        "imports `wasi_snapshot_preview1::{0}`, a function WASI preview 1 does not have (some \
         runtimes add it): a WASM proxy is given only WASI preview 1"
    )]
    Preview1Function(String),
    #[error(
        "imports `{0}`, which a WASM proxy is never given: it gets only WASI 0.2's cli, \
         clocks, filesystem, http, io, random and sockets (with the network denied)"
    )]
    ComponentImport(String),
    #[error(
        "uses the component model's async ABI ({0}), which the conductor does not enable \
         (wasmtime calls its support incomplete, and a sandbox runs only what is finished): \
         build the proxy for the synchronous ABI (`componentize-qjs --sync`; componentize-js's \
         SpiderMonkey build, componentize-py and cargo's wasm32-wasip2 are)"
    )]
    AsyncAbi(&'static str),
}

/// The first need of `bytes` (a module or component of `kind`) that the host does not meet.
/// Bytes that do not parse meet every need as far as this can tell: compiling them says
/// what is wrong, in wasmtime's words.
pub fn unmet_need(bytes: &[u8], kind: WasmKind) -> Result<(), UnmetNeed> {
    match first_unmet_need(bytes, kind) {
        Ok(None) | Err(_) => Ok(()),
        Ok(Some(need)) => Err(need),
    }
}

/// [`unmet_need`] of the file at `path`, read as the loader reads it ([`FileBytes`]: a
/// configuration naming the same large component twice must not leave a copy of it behind).
pub fn unmet_need_in_file(path: &Path, kind: WasmKind) -> std::io::Result<Result<(), UnmetNeed>> {
    FileBytes::read(path).map(|bytes| unmet_need(&bytes, kind))
}

fn first_unmet_need(
    bytes: &[u8],
    kind: WasmKind,
) -> Result<Option<UnmetNeed>, wasmparser::BinaryReaderError> {
    // A component's core modules and inner components are parsed by a parser of their own,
    // kept on `nested` until their `End`: only depth 0 is the file's own. Code sections, most
    // of a Python or JavaScript component, are skipped unread.
    let mut parser = Parser::new(0);
    let mut nested = Vec::new();
    let mut data = bytes;
    loop {
        let (payload, consumed) = match parser.parse(data, true)? {
            Chunk::Parsed { payload, consumed } => (payload, consumed),
            // Only asked for when the input may go on; it is all here.
            Chunk::NeedMoreData(_) => return Ok(None),
        };
        data = &data[consumed..];
        let depth = nested.len();
        match payload {
            Payload::CodeSectionStart { size, .. } => {
                parser.skip_section();
                data = data
                    .get(usize::try_from(size).unwrap_or(usize::MAX)..)
                    .unwrap_or(&[]);
            }
            Payload::ModuleSection { parser: inner, .. }
            | Payload::ComponentSection { parser: inner, .. } => {
                nested.push(std::mem::replace(&mut parser, inner));
            }
            Payload::End(_) => match nested.pop() {
                Some(outer) => parser = outer,
                None => return Ok(None),
            },
            Payload::ImportSection(section) if depth == 0 && kind == WasmKind::Module => {
                for import in section.into_imports() {
                    let import = import?;
                    if import.module != PREVIEW1 {
                        return Ok(Some(UnmetNeed::ModuleImport {
                            module: import.module.to_owned(),
                            name: import.name.to_owned(),
                        }));
                    }
                    if !PREVIEW1_FUNCTIONS.contains(&import.name) {
                        return Ok(Some(UnmetNeed::Preview1Function(import.name.to_owned())));
                    }
                }
            }
            Payload::ComponentImportSection(section) if depth == 0 => {
                for import in section {
                    let name = import?.name.name;
                    if !provided(name) {
                        return Ok(Some(UnmetNeed::ComponentImport(name.to_owned())));
                    }
                }
            }
            Payload::ComponentCanonicalSection(section) => {
                for function in section {
                    if let Some(what) = async_use(&function?) {
                        return Ok(Some(UnmetNeed::AsyncAbi(what)));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether the host links `name` (`wasi:cli/stdin@0.2.6`): a provided package at 0.2.x.
fn provided(name: &str) -> bool {
    let Some((interface, version)) = name.split_once('@') else {
        return false;
    };
    let package = interface.split_once('/').map_or(interface, |(p, _)| p);
    PROVIDED_PACKAGES.contains(&package)
        && version
            .strip_prefix("0.2.")
            .is_some_and(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()))
}

/// The async ABI feature `function` uses, named as the component model names it; `None` for
/// the synchronous ABI (lift, lower, resources).
fn async_use(function: &CanonicalFunction) -> Option<&'static str> {
    let is_async = |options: &[CanonicalOption]| options.contains(&CanonicalOption::Async);
    match function {
        CanonicalFunction::Lift { options, .. } => is_async(options).then_some("an `async` lift"),
        CanonicalFunction::Lower { options, .. } => is_async(options).then_some("an `async` lower"),
        CanonicalFunction::ResourceNew { .. }
        | CanonicalFunction::ResourceDrop { .. }
        | CanonicalFunction::ResourceRep { .. } => None,
        CanonicalFunction::BackpressureInc | CanonicalFunction::BackpressureDec => {
            Some("`backpressure`")
        }
        CanonicalFunction::TaskReturn { .. } => Some("`task.return`"),
        CanonicalFunction::TaskCancel => Some("`task.cancel`"),
        CanonicalFunction::ContextGet { .. } | CanonicalFunction::ContextSet { .. } => {
            Some("`context.get`/`context.set`")
        }
        CanonicalFunction::StreamNew { .. } => Some("`stream.new`"),
        CanonicalFunction::FutureNew { .. } => Some("`future.new`"),
        CanonicalFunction::WaitableSetNew => Some("`waitable-set.new`"),
        _ => Some("a builtin of the async or threads proposal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wasi_02_interfaces_are_provided_and_others_are_not() {
        assert!(provided("wasi:cli/stdin@0.2.0"));
        assert!(provided("wasi:http/outgoing-handler@0.2.12"));
        assert!(provided("wasi:sockets/tcp@0.2.6"));
        assert!(!provided("wasi:cli/stdin@0.3.0"), "WASI 0.3");
        assert!(!provided("wasi:keyvalue/store@0.2.0-draft"));
        assert!(!provided("wasi:io/streams@0.2.0-rc-2023-11-10"));
        assert!(!provided("wasi:io/streams"));
        assert!(!provided("local:proxy/host@0.2.0"));
    }

    #[test]
    fn a_module_importing_beyond_preview1_is_named() {
        // (module (import "env" "sock_open" (func)))
        let module = b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x02\x11\x01\x03env\x09sock_open\0\0";
        assert_eq!(
            unmet_need(module, WasmKind::Module),
            Err(UnmetNeed::ModuleImport {
                module: "env".to_owned(),
                name: "sock_open".to_owned()
            })
        );
        let preview1 =
            b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x02\x23\x01\x16wasi_snapshot_preview1\x08fd_write\0\0";
        assert_eq!(unmet_need(preview1, WasmKind::Module), Ok(()));
        let wasmedge =
            b"\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x02\x24\x01\x16wasi_snapshot_preview1\x09sock_open\0\0";
        assert_eq!(
            unmet_need(wasmedge, WasmKind::Module),
            Err(UnmetNeed::Preview1Function("sock_open".to_owned()))
        );
    }

    #[test]
    fn a_component_importing_an_unprovided_interface_is_named() {
        assert_eq!(
            unmet_need(
                &component_importing("wasi:keyvalue/store@0.2.0-draft"),
                WasmKind::Component
            ),
            Err(UnmetNeed::ComponentImport(
                "wasi:keyvalue/store@0.2.0-draft".to_owned()
            ))
        );
        assert_eq!(
            unmet_need(
                &component_importing("wasi:http/types@0.2.0"),
                WasmKind::Component
            ),
            Ok(())
        );
    }

    /// A component importing one empty instance named `name`.
    fn component_importing(name: &str) -> Vec<u8> {
        let mut bytes = b"\0asm\x0d\0\x01\0".to_vec();
        // Type section: one instance type with no declarations.
        bytes.extend_from_slice(&[7, 3, 1, 0x42, 0]);
        let len = u8::try_from(name.len()).unwrap();
        bytes.extend_from_slice(&[10, len + 5, 1, 0, len]);
        bytes.extend_from_slice(name.as_bytes());
        // An instance of type 0.
        bytes.extend_from_slice(&[5, 0]);
        bytes
    }

    #[test]
    fn a_component_using_the_async_abi_is_named_by_what_it_uses() {
        // A canonical section with one function, `task.cancel` (0x05).
        let component = b"\0asm\x0d\0\x01\0\x08\x02\x01\x05";
        assert_eq!(
            unmet_need(component, WasmKind::Component),
            Err(UnmetNeed::AsyncAbi("`task.cancel`"))
        );
    }

    #[test]
    fn garbage_after_a_header_is_left_to_the_compiler() {
        assert_eq!(
            unmet_need(b"\0asm\x01\0\0\0\xff\xff", WasmKind::Module),
            Ok(())
        );
    }
}
