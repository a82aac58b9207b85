#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Reads packaging/kubernetes with PyYAML (Debian: python3-yaml).

    manifests.py check SRCDIR   structural checks of the manifests; exit 1 with reasons
    manifests.py shell SRCDIR   the DaemonSet's container as bash assignments, so the
                                container test runs the image exactly as the DaemonSet does

check asserts what the issue and the daemon need: the hostPath /sys mounted
writable at the --sysfs-root, the ConfigMap mounted (whole, not subPath) at
the --config directory, the args, the exec probes (--verify for readiness,
--alive for liveness, both on the same paths as the daemon), RollingUpdate,
system-node-critical, a toleration for every taint, no host namespaces,
small requests and limits, and the ConfigMap's policy byte-identical to
conf/thpguard.conf.
"""
import os
import shlex
import sys

import yaml

K8S = "packaging/kubernetes"


def load_all(srcdir):
    docs = {}
    for name in ("namespace.yaml", "configmap.yaml", "daemonset.yaml", "kustomization.yaml"):
        with open(os.path.join(srcdir, K8S, name), encoding="utf-8") as f:
            docs[name] = [d for d in yaml.safe_load_all(f) if d is not None]
    return docs


def one(docs, name, kind):
    found = [d for d in docs[name] if d.get("kind") == kind]
    if len(found) != 1:
        raise SystemExit(f"FAIL: {name} holds {len(found)} {kind} objects, expected 1")
    return found[0]


def arg_value(args, flag):
    """The value after flag in an argv list, or None."""
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
    return None


def mem_mib(q):
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for u, f in units.items():
        if str(q).endswith(u):
            return float(str(q)[: -len(u)]) * f
    return float(q) / (1024 * 1024)


def cpu_milli(q):
    q = str(q)
    return float(q[:-1]) if q.endswith("m") else float(q) * 1000


def check(srcdir):
    docs = load_all(srcdir)
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    ns = one(docs, "namespace.yaml", "Namespace")
    namespace = ns["metadata"]["name"]
    expect(ns["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged",
           "the Namespace does not let Pod Security Admission admit a privileged pod")

    cm = one(docs, "configmap.yaml", "ConfigMap")
    ds = one(docs, "daemonset.yaml", "DaemonSet")
    kust = one(docs, "kustomization.yaml", "Kustomization")
    for obj in (cm, ds):
        expect(obj["metadata"].get("namespace") == namespace,
               f"{obj['kind']} is not in namespace {namespace}")

    # The ConfigMap's policy is conf/thpguard.conf, byte for byte.
    with open(os.path.join(srcdir, "conf/thpguard.conf"), encoding="utf-8") as f:
        default_policy = f.read()
    expect(list(cm.get("data", {})) == ["thpguard.conf"], "the ConfigMap does not hold exactly thpguard.conf")
    expect(cm.get("data", {}).get("thpguard.conf") == default_policy,
           "the ConfigMap's thpguard.conf differs from conf/thpguard.conf")

    # kustomize: every manifest, and only files that exist.
    res = kust.get("resources", [])
    for name in ("namespace.yaml", "configmap.yaml", "daemonset.yaml"):
        expect(name in res, f"kustomization.yaml does not list {name}")
    for r in res:
        expect(os.path.exists(os.path.join(srcdir, K8S, r)), f"kustomization.yaml lists {r}, which does not exist")

    spec = ds["spec"]
    pod = spec["template"]["spec"]
    expect(spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items(),
           "the selector does not match the pod template's labels")
    expect(spec.get("updateStrategy", {}).get("type") == "RollingUpdate", "the update strategy is not RollingUpdate")
    expect(pod.get("priorityClassName") == "system-node-critical", "priorityClassName is not system-node-critical")
    expect(any(t.get("operator") == "Exists" and "key" not in t and "effect" not in t
               for t in pod.get("tolerations", [])), "no toleration matches every taint")
    for f in ("hostPID", "hostNetwork", "hostIPC"):
        expect(pod.get(f) is False, f"{f} is not false")

    containers = pod["containers"]
    expect(len(containers) == 1, "the pod does not have exactly one container")
    c = containers[0]
    argv = c.get("command", []) + c.get("args", [])
    expect(argv[:1] == ["/usr/sbin/thpguardd"], "the container does not run /usr/sbin/thpguardd")
    sysfs_root = arg_value(argv, "--sysfs-root")
    config = arg_value(argv, "--config")
    metrics = arg_value(argv, "--metrics-file")
    expect(sysfs_root == "/host/sys", "--sysfs-root is not /host/sys")
    expect(config == "/etc/thpguard/thpguard.conf", "--config is not /etc/thpguard/thpguard.conf")
    expect(metrics is not None, "no --metrics-file: the liveness probe needs it")
    expect(not any(a in argv for a in ("--audit", "--once", "--verify", "-n", "--check-config")),
           "the container's args are not the daemon's")

    sc = c.get("securityContext", {})
    expect(sc.get("privileged") is True, "the container is not privileged (see the comment in daemonset.yaml)")
    expect(sc.get("runAsUser", 0) == 0, "the container does not run as uid 0")
    expect(sc.get("readOnlyRootFilesystem") is True, "the root file system is writable")

    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        expect("cpu" in res.get(kind, {}) and "memory" in res.get(kind, {}), f"no cpu and memory {kind}")
    if "limits" in res and "memory" in res["limits"]:
        expect(mem_mib(res["limits"]["memory"]) <= 128, "the memory limit is not small")
    if "requests" in res and "cpu" in res["requests"]:
        expect(cpu_milli(res["requests"]["cpu"]) <= 50, "the cpu request is not small")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}

    # hostPath /sys at the --sysfs-root, writable.
    m = mounts.get(sysfs_root or "")
    expect(m is not None, f"nothing is mounted at --sysfs-root {sysfs_root}")
    if m:
        v = volumes.get(m["name"], {})
        expect(v.get("hostPath", {}).get("path") == "/sys", f"{sysfs_root} is not the host's /sys (hostPath)")
        expect(not m.get("readOnly", False), f"{sysfs_root} is mounted read-only: the daemon writes through it")
        expect("subPath" not in m, f"{sysfs_root} is a subPath mount")

    # The ConfigMap at the policy's directory, whole: the kubelet's ..data swap reaches it.
    m = mounts.get(os.path.dirname(config or ""))
    expect(m is not None, f"nothing is mounted at {os.path.dirname(config or '')}")
    if m:
        v = volumes.get(m["name"], {})
        expect(v.get("configMap", {}).get("name") == cm["metadata"]["name"],
               f"{os.path.dirname(config)} is not the ConfigMap {cm['metadata']['name']}")
        expect("subPath" not in m, "the ConfigMap is a subPath mount: the kubelet never updates those")
        mode = v.get("configMap", {}).get("defaultMode", 0o644)
        expect(mode & 0o022 == 0, "the policy file would be writable by group or others: thpguardd refuses it")

    # The metrics file's directory is a volume (emptyDir, or the node-exporter hostPath).
    m = mounts.get(os.path.dirname(metrics or ""))
    expect(m is not None, f"the metrics directory {os.path.dirname(metrics or '')} is not a volume")

    # Probes: exec, the daemon's own checks, on the same paths as the daemon.
    ready = c.get("readinessProbe", {}).get("exec", {}).get("command", [])
    live = c.get("livenessProbe", {}).get("exec", {}).get("command", [])
    expect(ready[:2] == ["/usr/sbin/thpguardd", "--verify"], "the readinessProbe is not `thpguardd --verify`")
    expect(arg_value(ready, "--sysfs-root") == sysfs_root and arg_value(ready, "--config") == config,
           "the readinessProbe does not check the daemon's sysfs root and policy")
    expect(live[:2] == ["/usr/sbin/thpguardd", "--alive"], "the livenessProbe is not `thpguardd --alive`")
    expect(arg_value(live, "--metrics-file") == metrics, "the livenessProbe does not read the daemon's metrics file")
    lp = c.get("livenessProbe", {})
    expect(lp.get("periodSeconds", 10) * lp.get("failureThreshold", 3) >= 60,
           "the livenessProbe gives up in under a minute: a recheck interval is 30 s")

    for p in problems:
        print(f"FAIL: {K8S}: {p}")
    if not problems:
        print(f"{K8S}: the Namespace, ConfigMap, DaemonSet and kustomization hold together")
    return 1 if problems else 0


def shell(srcdir):
    docs = load_all(srcdir)
    c = one(docs, "daemonset.yaml", "DaemonSet")["spec"]["template"]["spec"]["containers"][0]
    argv = c.get("command", []) + c.get("args", [])
    out = {
        "DS_ARGV": argv,
        "DS_READY": c["readinessProbe"]["exec"]["command"],
        "DS_LIVE": c["livenessProbe"]["exec"]["command"],
    }
    for name, words in out.items():
        print(f"{name}=({' '.join(shlex.quote(w) for w in words)})")
    print(f"DS_SYSFS_ROOT={shlex.quote(arg_value(argv, '--sysfs-root'))}")
    print(f"DS_CONFIG={shlex.quote(arg_value(argv, '--config'))}")
    print(f"DS_METRICS={shlex.quote(arg_value(argv, '--metrics-file'))}")
    cm = one(docs, "configmap.yaml", "ConfigMap")
    print(f"DS_CONFIGMAP_KEY={shlex.quote(next(iter(cm['data'])))}")
    return 0


def configmap_data(srcdir, key):
    docs = load_all(srcdir)
    sys.stdout.write(one(docs, "configmap.yaml", "ConfigMap")["data"][key])
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "shell", "configmap"):
        raise SystemExit(__doc__)
    if sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    if sys.argv[1] == "shell":
        sys.exit(shell(sys.argv[2]))
    sys.exit(configmap_data(sys.argv[2], sys.argv[3]))
