//! The generated Spanner protobuf modules, named once for the whole crate.
//!
//! Both the wire format ([`crate::wire`], which converts values, key sets
//! and mutations to and from these messages) and the client
//! ([`crate::client`], which sends them) need the generated types. Naming
//! them in this leaf module, which depends on nothing in the crate, keeps
//! the dependency a line: `client` → `wire` → `proto`. `client` re-exports
//! them, so `rowtree_check::client::pb` keeps working.

pub use googleapis_tonic_google_longrunning::google::longrunning as lro;
pub use googleapis_tonic_google_spanner_admin_database_v1::google::spanner::admin::database::v1 as dpb;
pub use googleapis_tonic_google_spanner_admin_instance_v1::google::spanner::admin::instance::v1 as ipb;
pub use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
