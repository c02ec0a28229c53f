"""examples/kubernetes against what the TF_CONFIG resolver reads.

The manifest parses as YAML; its Service, Job, Secret and image agree with each
other, with the Dockerfile and with examples/CMakeLists.txt; and the shell entry
of every pod, run here with its index, writes a TF_CONFIG that dist-info
resolves to that pod's own task, at the address the headless Service gives it.

    check_kubernetes_example.py SOURCE_DIR DIST_INFO

Exits 77 (skipped), saying why, where python3-yaml is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("skipped: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)


def check(condition, message):
    if not condition:
        print("FAIL: " + message, file=sys.stderr)
        sys.exit(1)


def main(source_dir, dist_info):
    example_dir = os.path.join(source_dir, "examples", "kubernetes")
    manifest_path = os.path.join(example_dir, "digits-job.yaml")
    with open(manifest_path) as f:
        manifest_text = f.read()
    documents = [d for d in yaml.safe_load_all(manifest_text) if d is not None]
    by_kind = {d["kind"]: d for d in documents}
    check(sorted(by_kind) == ["Job", "Service"], "expected a Service and a Job, got %s" % sorted(by_kind))
    service, job = by_kind["Service"], by_kind["Job"]
    service_name, job_name = service["metadata"]["name"], job["metadata"]["name"]

    # The Service gives every pod a DNS name before it is ready.
    check(service["spec"].get("clusterIP") == "None", "the Service is not headless")
    check(service["spec"].get("publishNotReadyAddresses") is True, "not-ready pods get no DNS name")
    check(service["spec"]["selector"] == {"job-name": job_name}, "the Service does not select the Job's pods")
    port = service["spec"]["ports"][0]["port"]

    spec = job["spec"]
    pod = spec["template"]["spec"]
    check(spec.get("completionMode") == "Indexed", "the Job is not Indexed (no hostnames, no index)")
    check(pod.get("subdomain") == service_name, "the pods' subdomain is not the Service")
    check(len(pod["containers"]) == 1, "one container per pod expected")
    container = pod["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    workers = int(env["WORKERS"]["value"])
    check(spec["completions"] == workers and spec["parallelism"] == workers,
          "completions, parallelism and WORKERS differ")
    check([p["containerPort"] for p in container["ports"]] == [port], "the container port is not the Service's")

    # The token comes from the Secret the comments tell the user to create.
    secret = env["DIST_CLUSTER_TOKEN"]["valueFrom"]["secretKeyRef"]
    create = "kubectl create secret generic %s --from-literal=%s=" % (secret["name"], secret["key"])
    check(create in manifest_text, "the comments do not create the Secret %s (key %s)" % (secret["name"], secret["key"]))

    # The image is the Dockerfile's, and it builds the program the pods run.
    with open(os.path.join(example_dir, "Dockerfile")) as f:
        dockerfile = f.read()
    check("docker build -t %s " % container["image"] in dockerfile + manifest_text,
          "nothing builds the image %s" % container["image"])
    program = env["PROGRAM"]["value"]
    example = os.path.basename(program)
    check(program == "/opt/libdistribute/build/examples/" + example, "PROGRAM is not in the image's build tree")
    check(re.search(r"--target [^\n]*\b%s\b" % example, dockerfile), "the Dockerfile does not build " + example)
    with open(os.path.join(source_dir, "examples", "CMakeLists.txt")) as f:
        check(re.search(r"\b%s\b" % example, f.read()), "examples/CMakeLists.txt builds no " + example)

    # Every pod's entry, with a stand-in for the program that prints what
    # dist-info resolves in its place (and the arguments it was given).
    check(container["command"] == ["/bin/sh", "-c"] and len(container["args"]) == 1, "the entry is not one sh -c script")
    script = container["args"][0]
    check(subprocess.run(["/bin/sh", "-n", "-c", script]).returncode == 0, "the entry script does not parse")
    if shutil.which("shellcheck"):
        lint = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script, capture_output=True, text=True)
        check(lint.returncode == 0, "shellcheck on the entry script:\n" + lint.stdout)
    expected_workers = ["%s-%d.%s:%d" % (job_name, i, service_name, port) for i in range(workers)]
    with tempfile.TemporaryDirectory() as work:
        stand_in = os.path.join(work, example)
        with open(stand_in, "w") as f:
            f.write('#!/bin/sh\necho "arguments: $*"\nexec "%s" cluster --json\n' % dist_info)
        # The pods' names resolve in the cluster only: getent answers for them here.
        getent = os.path.join(work, "getent")
        with open(getent, "w") as f:
            f.write('#!/bin/sh\necho "$2" >>"%s"\n' % os.path.join(work, "looked-up"))
        for path in (stand_in, getent):
            os.chmod(path, 0o755)
        for index in range(workers):
            check_pod(script, index, workers, stand_in, expected_workers, work)
            with open(os.path.join(work, "looked-up")) as f:
                looked_up = f.read().split()
            os.unlink(os.path.join(work, "looked-up"))
            check(looked_up == [w.rsplit(":", 1)[0] for w in expected_workers],
                  "pod %d waited for %s, not every task's name" % (index, looked_up))
    print("ok: %s (%d workers)" % (manifest_path, workers))


def check_pod(script, index, workers, stand_in, expected_workers, bin_dir):
    child_env = {k: v for k, v in os.environ.items() if k.startswith("LD_")}
    child_env.update(PATH=bin_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"), WORKERS=str(workers),
                     JOB_COMPLETION_INDEX=str(index), PROGRAM=stand_in, DIST_CLUSTER_TOKEN="t" * 64)
    run = subprocess.run(["/bin/sh", "-c", script], env=child_env, capture_output=True, text=True, timeout=60)
    check(run.returncode == 0, "pod %d's entry failed: %s%s" % (index, run.stdout, run.stderr))
    check("\narguments: 20\n" in run.stdout, "pod %d ran the program with other arguments" % index)
    view = json.loads(run.stdout[run.stdout.index("\n{") + 1:])
    check(view["resolver"] == "tf_config", "pod %d resolved with %s" % (index, view["resolver"]))
    check(view["cluster"] == {"worker": expected_workers}, "pod %d's cluster is %s" % (index, view["cluster"]))
    check(view["task_type"] == "worker" and view["task_id"] == index,
          "pod %d is %s:%s" % (index, view["task_type"], view["task_id"]))
    check(view["master"] == expected_workers[index], "pod %d would listen at %s" % (index, view["master"]))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
