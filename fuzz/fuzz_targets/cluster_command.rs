//! `cluster_command`: a split group's log entry decoder on arbitrary bytes.
//!
//! A log entry arrives from another node, so its decoder must answer any
//! bytes with a command or an error: never a panic, never an allocation
//! larger than the input. A command that decodes must survive its own
//! binary form unchanged (the input itself need not be canonical: a varint
//! may be written with more bytes than needed).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rowtree_cluster::Command;

fuzz_target!(|data: &[u8]| {
    if let Ok(command) = Command::decode(data) {
        let again = command.encode();
        assert!(again.len() <= data.len(), "re-encoding grew the entry");
        assert_eq!(Command::decode(&again).expect("re-encoded entry decodes"), command);
    }
});
