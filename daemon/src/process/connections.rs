//! What a connection may hold of the daemon: at most [`Limits::max_connections`] are open at
//! once (one more is closed as soon as it is accepted, and the log says so, once in a while), and
//! one that has not sent the HTTP/2 client preface within [`Limits::handshake_timeout`] is
//! closed. A connection past its handshake that stops answering is the HTTP/2 keep-alive's to
//! close (the server's pings, `app.rs`). Without these, connections that never speak hold a
//! descriptor each until the daemon can open no file, and every query finds its repository
//! behind.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bytes of the HTTP/2 client connection preface (`PRI * HTTP/2.0…`).
const PREFACE_BYTES: usize = 24;

/// How often, at most, a refused connection is logged.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The bounds a connection lives within.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub max_connections: usize,
    pub handshake_timeout: Duration,
}

/// Admits connections within the [`Limits`].
pub(crate) struct Gate {
    limits: Limits,
    open: Arc<Semaphore>,
    refused: u64,
    last_log: Option<std::time::Instant>,
}

impl Gate {
    pub(crate) fn new(limits: Limits) -> Gate {
        Gate {
            limits,
            open: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            refused: 0,
            last_log: None,
        }
    }

    /// `stream` as a guarded connection, or `None` (and it is closed) when the cap is reached.
    pub(crate) fn admit(&mut self, stream: UnixStream) -> Option<Guarded> {
        match self.open.clone().try_acquire_owned() {
            Ok(permit) => Some(Guarded {
                stream,
                _permit: permit,
                greeted: 0,
                deadline: Some(Box::pin(tokio::time::sleep(self.limits.handshake_timeout))),
            }),
            Err(_) => {
                self.refused += 1;
                if self.last_log.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
                    tracing::warn!(
                        max_connections = self.limits.max_connections,
                        refused = self.refused,
                        "connection cap reached: closed a new connection (raise [daemon] \
                         max_connections if this many clients are meant to be open at once)"
                    );
                    self.last_log = Some(std::time::Instant::now());
                }
                None
            }
        }
    }
}

/// An admitted connection: it holds its place under the cap until it closes, and fails its
/// reads (so the server closes it) when the preface has not arrived in time.
pub(crate) struct Guarded {
    stream: UnixStream,
    _permit: OwnedSemaphorePermit,
    /// Bytes read so far, counted up to [`PREFACE_BYTES`].
    greeted: usize,
    /// Until the preface is in.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.deadline.is_some() {
                    this.greeted += buf.filled().len() - before;
                    if this.greeted >= PREFACE_BYTES {
                        this.deadline = None;
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let late = this
                    .deadline
                    .as_mut()
                    .is_some_and(|d| d.as_mut().poll(cx).is_ready());
                if late {
                    tracing::debug!("closed a connection that sent no handshake in time");
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no HTTP/2 preface in time",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl tonic::transport::server::Connected for Guarded {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}

/// Raise this process's soft limit of open files to its hard limit (at most 65,536): the index
/// of a large repository keeps many files open, and clients' connections take one each.
pub(crate) fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit on a plain struct we own.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return;
        }
        let want = lim.rlim_max.min(65_536);
        if lim.rlim_cur < want {
            lim.rlim_cur = want;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
