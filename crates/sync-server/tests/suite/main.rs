//! The sync server's test suite. Every test runs against both storage backends (SQLite and PostgreSQL).

mod common;

mod approvals;
mod binary;
mod blobs;
mod client_loop;
mod convergence;
mod faults;
mod fuzz;
mod isolation;
mod leases;
mod malformed;
mod members;
mod push;
mod repository;
mod security;
mod service;
mod source;
mod uploads;
