use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;

fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("src/net")).unwrap();
    std::fs::write(root.path().join("src/net/conn.rs"), "fn inside() {}\n").unwrap();
    std::fs::write(outside.path().join("secret"), "OUTSIDE SECRET\n").unwrap();
    (root, outside)
}

#[test]
fn a_regular_file_beneath_the_root_is_read_with_its_metadata() {
    let (root, _outside) = tree();
    let (_, meta) = open(root.path(), Path::new("src/net/conn.rs")).unwrap();
    assert_eq!(meta.len(), 15);
    assert_eq!(
        read(root.path(), Path::new("./src/net/conn.rs"), 1 << 20).unwrap(),
        b"fn inside() {}\n"
    );
    // Bounded: one byte past the bound tells the caller the file is larger.
    assert_eq!(
        read(root.path(), Path::new("src/net/conn.rs"), 4).unwrap(),
        b"fn in"
    );
}

#[test]
fn no_symbolic_link_is_followed_anywhere_on_the_path() {
    let (root, outside) = tree();
    let r = root.path();
    symlink(outside.path().join("secret"), r.join("leaf")).unwrap();
    symlink(outside.path(), r.join("dir")).unwrap();
    // Links inside the repository are refused too: callers resolve them first.
    symlink("net", r.join("src/alias")).unwrap();
    symlink("conn.rs", r.join("src/net/same.rs")).unwrap();
    for rel in ["leaf", "dir/secret", "src/alias/conn.rs", "src/net/same.rs"] {
        assert!(
            matches!(open(r, Path::new(rel)), Err(Refusal::Symlink)),
            "{rel}: {:?}",
            open(r, Path::new(rel)).map(|_| ())
        );
    }
}

#[test]
fn paths_that_leave_the_root_or_name_nothing_are_refused() {
    let (root, _outside) = tree();
    let r = root.path();
    for rel in ["", ".", "../x", "src/../../x", "/etc/passwd"] {
        assert!(
            matches!(open(r, Path::new(rel)), Err(Refusal::NotRelative)),
            "{rel:?}"
        );
    }
    let nul = Path::new(std::ffi::OsStr::from_bytes(b"src/a\0b"));
    assert!(matches!(open(r, nul), Err(Refusal::NotRelative)));
    assert!(matches!(
        open(r, Path::new("src/missing.rs")),
        Err(Refusal::NotFound)
    ));
    assert!(matches!(
        open(r, Path::new("src/net/conn.rs/below")),
        Err(Refusal::NotFound)
    ));
    let long = "a".repeat(300);
    assert!(matches!(open(r, Path::new(&long)), Err(Refusal::TooLong)));
}

#[test]
fn directories_and_fifos_are_not_regular_files_and_never_block() {
    let (root, _outside) = tree();
    let r = root.path();
    assert!(matches!(
        open(r, Path::new("src/net")),
        Err(Refusal::NotRegular)
    ));
    let fifo = std::ffi::CString::new(r.join("events.pipe").as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // A FIFO with no writer would block an ordinary open forever.
    assert!(matches!(
        open(r, Path::new("events.pipe")),
        Err(Refusal::NotRegular)
    ));
}

/// The race the hostile-input pass found: a file replaced, by rename, with a symlink to a file
/// outside and back, as fast as a loop can, while it is read. Not one read may return the
/// outside file's bytes.
#[test]
fn a_file_swapped_with_a_symlink_while_it_is_read_never_yields_outside_bytes() {
    let (root, outside) = tree();
    let r = root.path().to_path_buf();
    std::fs::write(r.join("race.rs"), "fn regular() {}\n").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (r, secret, stop) = (r.clone(), outside.path().join("secret"), stop.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::write(r.join("race.tmp"), "fn regular() {}\n").unwrap();
                std::fs::rename(r.join("race.tmp"), r.join("race.rs")).unwrap();
                let _ = std::fs::remove_file(r.join("link.tmp"));
                symlink(&secret, r.join("link.tmp")).unwrap();
                std::fs::rename(r.join("link.tmp"), r.join("race.rs")).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    // Read only once the swapping has begun.
    while !r.join("race.rs").is_symlink() {
        std::thread::yield_now();
    }
    let (mut served, mut refused) = (0u32, 0u32);
    for _ in 0..20_000 {
        match read(&r, Path::new("race.rs"), 1 << 20) {
            Ok(bytes) => {
                assert_eq!(
                    bytes, b"fn regular() {}\n",
                    "only the regular file is ever read"
                );
                served += 1;
            }
            Err(Refusal::Symlink | Refusal::NotFound) => refused += 1,
            Err(e) => panic!("unexpected refusal: {e}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(
        swaps > 0 && served > 0 && refused > 0,
        "{swaps} {served} {refused}"
    );
}
