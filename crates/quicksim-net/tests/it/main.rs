//! Integration tests of the network crate through its public interface.

mod conservation;
mod transmitter;
