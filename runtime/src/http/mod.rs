//! Streamable HTTP: the transport (routes, host/origin checks, auth, limits), the accept loop
//! (connection cap, header-read and idle timeouts) and the bounds on sessions.

pub mod connections;
pub mod sessions;
pub mod transport;
