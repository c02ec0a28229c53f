#![allow(dead_code)]
use distribute::{Cluster, Context};

/// A single-process context: a cluster with no tasks is rank 0 of 1.
pub fn single() -> (Cluster, Context) {
    let cluster = Cluster::from_json("{}").expect("empty cluster");
    let context = Context::join(&cluster).expect("single-process context");
    (cluster, context)
}
