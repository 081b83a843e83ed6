//! Writing results to the terminal: the `outln!` macro and what happens when stdout goes away
//! (a closed pipe ends the process quietly, as ripgrep does), and errors as one line. Below
//! every other module: it imports none.

/// `println!` for results: when stdout is closed early (`patina q … | head -1`) the process ends
/// quietly with success, as ripgrep does, instead of panicking or reporting `Broken pipe`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::console::stdout_failed(e)
        }
    }};
}

use std::process::ExitCode;

use anyhow::Result;

/// Whether `e` is a write to a stdout whose reader has gone.
pub(crate) fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Output could not be written: quiet success when the reader closed the pipe, else an error.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("patina: cannot write the output: {e}");
    std::process::exit(2);
}

/// Write `bytes` to stdout as they are (completions, the man page).
pub(crate) fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        stdout_failed(e);
    }
    Ok(ExitCode::SUCCESS)
}

/// The error chain as one line, without gRPC noise.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    format!("{e:#}")
}
