use distribute::{sys, Cluster, ClusterOptions, Resolver};

#[test]
fn bad_tf_config_gives_an_error_with_the_c_message() {
    let options = ClusterOptions {
        resolver: Some(Resolver::TfConfig),
        env: Some(vec![r#"TF_CONFIG={"cluster": {"worker": 3}}"#.into()]),
        ..Default::default()
    };
    let error = Cluster::resolve(&options).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert_eq!(error.status_name(), "DIST_ERR_INVALID_ARGUMENT");
    assert!(error.message().contains("TF_CONFIG"), "{error}");
    assert!(error.message().contains("worker"), "{error}");
    assert_eq!(error.to_string(), format!("DIST_ERR_INVALID_ARGUMENT: {}", error.message()));
}

#[test]
fn task_index_out_of_range() {
    let doc = r#"{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 3}}"#;
    let error = Cluster::from_json(doc).unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
    assert!(error.message().contains('3'), "{error}");
}

#[test]
fn unknown_job_and_nul_bytes_are_errors() {
    let cluster = Cluster::from_json(r#"{"cluster": {"worker": ["a:1"]}}"#).unwrap();
    let error = cluster.num_tasks("ps").unwrap_err();
    assert!(error.message().contains("ps"), "{error}");
    let error = cluster.num_tasks("wor\0ker").unwrap_err();
    assert_eq!(error.status(), sys::DIST_ERR_INVALID_ARGUMENT);
}

#[test]
fn status_names_and_groups() {
    assert_eq!(distribute::status_string(sys::DIST_OK), "DIST_OK");
    assert_eq!(distribute::status_string(sys::DIST_ERR_MISMATCH), "DIST_ERR_MISMATCH");
    assert_eq!(distribute::status_string(4242), "DIST_ERR_UNKNOWN");
}

#[test]
fn version_and_build() {
    assert_eq!(distribute::version(), sys::DIST_VERSION_HEX);
    assert_eq!(distribute::version_string(), "0.1.0");
    assert!(distribute::build_features().ucx());
    let info = distribute::build_info().unwrap();
    assert!(info.contains("\"version\""), "{info}");
}
