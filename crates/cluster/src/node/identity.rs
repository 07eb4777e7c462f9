//! `D/node.json`: which cluster a data directory belongs to, and as which
//! node.
//!
//! Written once, when the node has bootstrapped a cluster or been accepted
//! into one, and read at every start: a directory that names another node
//! id or another cluster is refused rather than served under the wrong
//! name (a node id is never reused, and a node of one cluster must not
//! answer another's Raft messages).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::NodeError;

/// The layout version of a node's data directory.
pub const FORMAT_VERSION: u32 = 1;

/// What `node.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The cluster's id, made by the node that bootstrapped it.
    pub cluster_id: String,
    pub node_id: u64,
    pub format_version: u32,
    /// Whether this node made the cluster: only it may initialize the
    /// placement group, if it stopped before doing so.
    #[serde(default)]
    pub bootstrap: bool,
}

fn path(dir: &Path) -> PathBuf {
    dir.join("node.json")
}

impl Identity {
    /// The identity stored in `dir`, if any.
    pub fn load(dir: &Path) -> Result<Option<Identity>, NodeError> {
        let path = path(dir);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(NodeError::io(&path, e)),
        };
        let identity: Identity = serde_json::from_slice(&bytes).map_err(|e| {
            NodeError::Identity(format!("{} is not a node identity: {e}", path.display()))
        })?;
        if identity.format_version != FORMAT_VERSION {
            return Err(NodeError::Identity(format!(
                "{} has format version {}; this build reads version {FORMAT_VERSION}",
                path.display(),
                identity.format_version
            )));
        }
        Ok(Some(identity))
    }

    /// Writes the identity to `dir` durably: a temporary file, synced,
    /// renamed over `node.json`, and the directory synced.
    pub fn store(&self, dir: &Path) -> Result<(), NodeError> {
        use std::io::Write;
        let path = path(dir);
        let tmp = dir.join("node.json.tmp");
        let json = serde_json::to_vec_pretty(self).expect("an identity serializes");
        let mut file = std::fs::File::create(&tmp).map_err(|e| NodeError::io(&tmp, e))?;
        file.write_all(&json).map_err(|e| NodeError::io(&tmp, e))?;
        file.sync_all().map_err(|e| NodeError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| NodeError::io(&path, e))?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| NodeError::io(dir, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_round_trips_and_a_stranger_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Identity::load(dir.path()).unwrap(), None);
        let id = Identity {
            cluster_id: "c0ffee".into(),
            node_id: 3,
            format_version: FORMAT_VERSION,
            bootstrap: false,
        };
        id.store(dir.path()).unwrap();
        assert_eq!(Identity::load(dir.path()).unwrap(), Some(id));
        std::fs::write(dir.path().join("node.json"), b"{\"cluster_id\": 1}").unwrap();
        let err = Identity::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is not a node identity"), "{err}");
        std::fs::write(
            dir.path().join("node.json"),
            br#"{"cluster_id":"x","node_id":1,"format_version":99}"#,
        )
        .unwrap();
        let err = Identity::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("format version 99"), "{err}");
    }
}
