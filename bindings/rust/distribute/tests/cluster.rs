use distribute::{resolver_name, sys, Cluster, ClusterOptions, Resolver};

const SPARSE: &str = r#"{"cluster": {"worker": {"1": "h:2222", "3": "h:2223"}, "chief": ["c:1"]},
    "task": {"type": "worker", "index": 3}, "rpc_layer": "grpc", "environment": "cloud"}"#;

#[test]
fn tf_config_queries() {
    let options = ClusterOptions {
        resolver: Some(Resolver::TfConfig),
        env: Some(vec![format!("TF_CONFIG={SPARSE}")]),
        ..Default::default()
    };
    let cluster = Cluster::resolve(&options).unwrap();
    assert_eq!(cluster.resolver().unwrap(), Resolver::TfConfig);
    assert_eq!(cluster.task_type().unwrap().as_deref(), Some("worker"));
    assert_eq!(cluster.task_id().unwrap(), 3);
    assert_eq!(cluster.rpc_layer().unwrap().as_deref(), Some("grpc"));
    assert_eq!(cluster.environment().unwrap().as_deref(), Some("cloud"));
    assert_eq!(cluster.jobs().unwrap(), ["chief", "worker"]);
    assert_eq!(cluster.task_indices("worker").unwrap(), [1, 3]);
    assert_eq!(cluster.task_address("worker", 1).unwrap(), "h:2222");
    assert_eq!(cluster.master(None, -1, None).unwrap(), "grpc://h:2223");
    assert_eq!(cluster.master(Some("chief"), 0, Some("ucx")).unwrap(), "ucx://c:1");
    assert!(cluster.num_accelerators(None).unwrap() >= 0);
    assert!(cluster.to_json().unwrap().contains("\"task_id\":3") || cluster.to_json().unwrap().contains("\"task_id\": 3"));
}

#[test]
fn simple_union_and_jobs() {
    let simple = Cluster::resolve(&ClusterOptions {
        resolver: Some(Resolver::Simple),
        cluster_spec_json: Some(r#"{"worker": ["a:1", "b:2"]}"#.into()),
        task_type: Some("worker".into()),
        task_id: Some(1),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(simple.resolver().unwrap(), Resolver::Simple);
    assert_eq!(simple.task_address("worker", 1).unwrap(), "b:2");
    let ps = Cluster::from_json(r#"{"cluster": {"ps": ["p:1"]}}"#).unwrap();
    let union = Cluster::resolve(&ClusterOptions {
        resolver: Some(Resolver::Union),
        members: Some(vec![&simple, &ps]),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(union.jobs().unwrap(), ["ps", "worker"]);

    let mpi = Cluster::resolve(&ClusterOptions {
        resolver: Some(Resolver::Mpi),
        env: Some(vec!["OMPI_COMM_WORLD_RANK=2".into(), "OMPI_COMM_WORLD_SIZE=4".into(), "OMPI_COMM_WORLD_LOCAL_SIZE=4".into()]),
        jobs: Some(vec![("ps".into(), 1), ("worker".into(), 3)]),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(mpi.task_type().unwrap().as_deref(), Some("worker"));
    assert_eq!(mpi.task_id().unwrap(), 1);
}

#[test]
fn resolver_names() {
    assert_eq!(Resolver::Slurm.name(), Some("slurm"));
    assert_eq!(resolver_name(99), None);
    assert_eq!(Resolver::from_raw(sys::DIST_RESOLVER_TORCHRUN), Some(Resolver::Torchrun));
}
