//! The HTTP routes, one module per resource; each handler is documented in the
//! OpenAPI document (`crate::http::openapi`) next to its code.

pub mod flights;
pub mod web;
