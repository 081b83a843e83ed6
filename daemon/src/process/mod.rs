//! The lowest floor: the process itself. The socket, the limits of its connections and the
//! instance lock, memory (budget,
//! allocator tuning, measurement, the region apart), restarting in place (the handover, `exec`,
//! the request clock), the executable's stamp and the wall clock.
//!
//! Architecture invariant: knows nothing of repositories, indices, models or requests; every
//! process-wide static of the daemon lives here (test hooks aside).

#[cfg(target_os = "linux")]
pub(crate) mod apart;
pub(crate) mod clock;
pub(crate) mod connections;
pub(crate) mod exe;
pub(crate) mod memory;
pub mod restart;
pub(crate) mod socket;
